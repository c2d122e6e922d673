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

package receiver

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

// reportEntryOf is ep's entry in the rejection report of the suite's
// receiver, as it stands.
func reportEntryOf(ctx context.Context, g Gomega, ep *agentsv1alpha1.WebhookEndpoint) agentsv1alpha1.RejectionReportEntry {
	report := &corev1.ConfigMap{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: receiverNamespace, Name: agentsv1alpha1.RejectionReportPrefix + reportPod}, report)).To(Succeed())
	entry, err := agentsv1alpha1.DecodeRejectionReportEntry(report.Data[string(ep.UID)])
	g.Expect(err).NotTo(HaveOccurred())
	return entry
}

var _ = Describe("the rejection report", func() {
	It("holds N refused calls of an endpoint within the report interval, written by the receiver as its service account", func(ctx SpecContext) {
		const n = 6
		f := newFixture(ctx)
		ep, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: "the-endpoint-secret-of-32-bytes-or-more"})
		before := apiRequests.Load()
		for range n {
			Expect(post(id, ptr("wrong"), "{}").status).To(Equal(http.StatusForbidden))
		}
		Expect(post(id, nil, "{}").status).To(Equal(http.StatusUnauthorized))
		Expect(apiRequests.Load()).To(Equal(before), "no request per refusal")

		var entry agentsv1alpha1.RejectionReportEntry
		Eventually(func(g Gomega) {
			report := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: receiverNamespace, Name: agentsv1alpha1.RejectionReportPrefix + reportPod}, report)).To(Succeed())
			g.Expect(report.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelRejectionReport, "true"))
			var err error
			entry, err = agentsv1alpha1.DecodeRejectionReportEntry(report.Data[string(ep.UID)])
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(entry.Counts).To(Equal(map[string]int64{answer.CodeForbidden: n, answer.CodeUnauthorized: 1}))
		}).WithTimeout(2*reportInterval + 2*time.Second).Should(Succeed())
		Expect(entry.Namespace).To(Equal(ep.Namespace))
		Expect(entry.Name).To(Equal(ep.Name))
		Expect(entry.Window).To(BeTemporally("==", fakeClock.Now().Truncate(agentsv1alpha1.RejectionWindow)))
	})
})
