/*
Copyright 2026 The hookrun Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/alertmanager/alert"
	amcommoncfg "github.com/prometheus/alertmanager/config/common"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/notify/webhook"
	"github.com/prometheus/alertmanager/template"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// alertmanagerNotifier is Alertmanager's own webhook notifier, configured as
// docs/senders.md says: the endpoint's URL, its secret as a Bearer token.
func alertmanagerNotifier(ep devcluster.Endpoint) *webhook.Notifier {
	GinkgoHelper()
	tmpl, err := template.FromGlobs(nil)
	Expect(err).NotTo(HaveOccurred())
	tmpl.ExternalURL, err = url.Parse("http://alertmanager.example")
	Expect(err).NotTo(HaveOccurred())
	n, err := webhook.New(&webhook.WebhookConfig{
		URL: amcommoncfg.SecretTemplateURL(ep.URL),
		HTTPConfig: &commoncfg.HTTPClientConfig{
			Authorization:   &commoncfg.Authorization{Type: "Bearer", Credentials: commoncfg.Secret(ep.Secret)},
			FollowRedirects: true,
		},
	}, tmpl, slog.New(slog.DiscardHandler))
	Expect(err).NotTo(HaveOccurred())
	return n
}

// notifyAlert sends one notification of an alert named name with severity
// through n, as Alertmanager's dispatcher does for a group: firing while
// endsAt is ahead, resolved once it has passed. The error is the notifier's:
// nil for a 2xx answer.
func notifyAlert(ctx context.Context, n *webhook.Notifier, name, severity string, endsAt time.Time) error {
	labels := model.LabelSet{"alertname": model.LabelValue(name), "severity": model.LabelValue(severity)}
	ctx = notify.WithGroupKey(ctx, `{}:{alertname="`+name+`"}`)
	ctx = notify.WithReceiverName(ctx, "hookrun")
	ctx = notify.WithGroupLabels(ctx, model.LabelSet{"alertname": model.LabelValue(name)})
	a := &alert.Alert{Alert: model.Alert{
		Labels:      labels,
		Annotations: model.LabelSet{"summary": model.LabelValue(name + " is failing")},
		StartsAt:    time.Now().Add(-time.Minute),
		EndsAt:      endsAt,
	}, UpdatedAt: time.Now()}
	_, err := n.Notify(ctx, a)
	return err
}

var _ = Describe("Alertmanager", func() {
	It("reaches the agent through its own webhook notifier, filtered to firing notifications", func(ctx SpecContext) {
		By("a developer declares a Bearer endpoint that runs only for firing notifications")
		Expect(developer().Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alerts"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Investigate this alert.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Sender:         &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer},
				Filter:         `body.status == "firing"`,
			},
		})).To(Succeed())
		var ep devcluster.Endpoint
		Eventually(func(g Gomega) {
			var err error
			ep, err = cluster.EndpointFor(ctx, ns, "alerts")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ep.Secret).NotTo(BeEmpty())
		}).Should(Succeed())
		n := alertmanagerNotifier(ep)
		runs := func() []agentsv1alpha1.AgentRun {
			list := &agentsv1alpha1.AgentRunList{}
			Expect(cluster.AdminClient.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "alerts"})).To(Succeed())
			return list.Items
		}

		By("a resolved notification is answered 200 ignored (once the receiver serves the endpoint): no run")
		Eventually(func() error {
			return notifyAlert(ctx, n, "DiskFull", "critical", time.Now().Add(-time.Second))
		}).Should(Succeed())
		Expect(runs()).To(BeEmpty())

		By("a firing alert starts a run that the demo agent answers")
		Expect(notifyAlert(ctx, n, "DiskFull", "critical", time.Now().Add(time.Hour))).To(Succeed())
		first := runs()
		Expect(first).To(HaveLen(1))
		r := succeeds(ctx, first[0].Name)
		Expect(r.Status.Output).To(ContainSubstring("DiskFull"))
		Expect(r.Spec.Sender.Type).To(Equal(agentsv1alpha1.SenderBearer))

		By("its resolved notification is ignored again")
		Expect(notifyAlert(ctx, n, "DiskFull", "critical", time.Now().Add(-time.Second))).To(Succeed())
		Expect(runs()).To(HaveLen(1))
	})
})
