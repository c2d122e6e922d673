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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// github sends body to ep as GitHub does: signed with secret, with the event
// and delivery headers.
func github(ctx context.Context, ep devcluster.Endpoint, secret, event, delivery, body string) answer {
	GinkgoHelper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/e2e")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	a := answer{Status: resp.StatusCode, Body: string(b)}
	if i := strings.Index(a.Body, `"runId":"`); i >= 0 {
		a.RunID = strings.SplitN(a.Body[i+len(`"runId":"`):], `"`, 2)[0]
	}
	return a
}

var _ = Describe("a GitHub sender", func() {
	It("is verified with the key the operator hands the receiver, deduplicated, filtered, and rotated with an overlap", func(ctx SpecContext) {
		By("a developer declares a GitHub endpoint for issues")
		Expect(developer().Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gh-issues"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this issue.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Sender: &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, Events: []string{"issues"},
					RotationOverlap: &metav1.Duration{Duration: time.Hour}},
			},
		})).To(Succeed())
		var ep devcluster.Endpoint
		Eventually(func(g Gomega) {
			var err error
			ep, err = cluster.EndpointFor(ctx, ns, "gh-issues")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ep.Secret).NotTo(BeEmpty())
		}).Should(Succeed())
		Eventually(func() int { return github(ctx, ep, ep.Secret, "ping", "p-1", `{"zen":"hi"}`).Status }).Should(Equal(http.StatusOK))

		By("an issue event starts a run that the demo agent answers; its redelivery starts nothing")
		body := `{"action":"opened","issue":{"number":42,"title":"Crash on start"}}`
		first := github(ctx, ep, ep.Secret, "issues", "d-42", body)
		Expect(first.Status).To(Equal(http.StatusAccepted), first.Body)
		again := github(ctx, ep, ep.Secret, "issues", "d-42", body)
		Expect(again.Status).To(Equal(http.StatusAccepted))
		Expect(again.RunID).To(Equal(first.RunID))
		r := succeeds(ctx, first.RunID)
		Expect(r.Status.Output).To(ContainSubstring("Crash on start"))
		Expect(r.Spec.Sender).To(Equal(&agentsv1alpha1.RunSender{Type: agentsv1alpha1.SenderGitHub, Event: "issues", DeliveryID: "d-42"}))
		Expect(github(ctx, ep, ep.Secret, "issues", "d-42", body).RunID).To(Equal(first.RunID), "also once it has finished")

		By("other events and wrong signatures start nothing")
		Expect(github(ctx, ep, ep.Secret, "push", "d-43", `{"ref":"main"}`).Status).To(Equal(http.StatusOK))
		Expect(github(ctx, ep, "not-the-secret", "issues", "d-44", body).Status).To(Equal(http.StatusForbidden))
		runs := &agentsv1alpha1.AgentRunList{}
		Expect(cluster.AdminClient.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "gh-issues"})).To(Succeed())
		Expect(runs.Items).To(HaveLen(1))

		By("a rotation: GitHub's old secret keeps working for the overlap, the new one at once")
		patchEndpoint(ctx, developer(), "gh-issues", func(e *agentsv1alpha1.WebhookEndpoint) {
			e.Annotations = map[string]string{agentsv1alpha1.AnnotationRotateSecret: "first"}
		})
		Eventually(func() string { return endpointStatus(ctx, "gh-issues").PreviousSecretHash }).ShouldNot(BeEmpty())
		fresh, err := cluster.EndpointFor(ctx, ns, "gh-issues")
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh.Secret).NotTo(Equal(ep.Secret))
		Eventually(func() int { return github(ctx, ep, fresh.Secret, "issues", "d-45", body).Status }).Should(Equal(http.StatusAccepted))
		Expect(github(ctx, ep, ep.Secret, "issues", "d-46", body).Status).To(Equal(http.StatusAccepted))

		By("deleting the endpoint removes its signing key from the receiver's namespace")
		live := &agentsv1alpha1.WebhookEndpoint{}
		Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gh-issues"}, live)).To(Succeed())
		key := client.ObjectKey{Namespace: clusterinstall.Namespace, Name: agentsv1alpha1.SigningKeySecretName(string(live.UID))}
		Expect(cluster.AdminClient.Get(ctx, key, &corev1.Secret{})).To(Succeed())
		Expect(developer().Delete(ctx, live)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(cluster.AdminClient.Get(ctx, key, &corev1.Secret{})) }).Should(BeTrue())
	})
})
