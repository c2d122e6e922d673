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
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

// Isolation (DESIGN.md section 10): what one sender, replaying or forging
// deliveries, costs the endpoint's real sender and everyone else.

var _ = Describe("Isolation", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	It("charges a duplicate answer to the endpoint's rate limit, and answers a replay at a full window 429 without an API request", func(ctx SpecContext) {
		_, id := f.senderEndpoint(ctx, "replayed", senderSpec(agentsv1alpha1.SenderHeader), senderSecret)
		body := `{"action":"opened"}`
		delivery := map[string]string{"Idempotency-Key": "captured-1"}
		first := send(srv.URL, id, agentsv1alpha1.SenderHeader, body, senderSecret, delivery)
		Expect(first.status).To(Equal(http.StatusAccepted), string(first.body))

		By("replays answered with the first runId take the rest of the window")
		for range testRateLimit - 1 {
			r := send(srv.URL, id, agentsv1alpha1.SenderHeader, body, senderSecret, delivery)
			Expect(r.status).To(Equal(http.StatusAccepted))
			Expect(r.runID).To(Equal(first.runID))
		}
		r := send(srv.URL, id, agentsv1alpha1.SenderHeader, body, senderSecret, delivery)
		Expect(r.status).To(Equal(http.StatusTooManyRequests), "a replay at a full window")
		Expect(r.code).To(Equal(answer.CodeRateLimited))
		Expect(r.header.Get("Retry-After")).NotTo(BeEmpty())

		By("a replay flood at the full window costs the API server nothing")
		before := apiRequests.Load()
		for range 20 {
			Expect(send(srv.URL, id, agentsv1alpha1.SenderHeader, body, senderSecret, delivery).status).To(Equal(http.StatusTooManyRequests))
		}
		Expect(send(srv.URL, id, agentsv1alpha1.SenderHeader, body, senderSecret, map[string]string{"Idempotency-Key": "new-1"}).status).
			To(Equal(http.StatusTooManyRequests), "a new delivery waits for the window like any call")
		Expect(apiRequests.Load()).To(Equal(before), "no duplicate lookup while the window is full")
		Expect(runsIn(ctx, f.ns)).To(HaveLen(2), "the first call's run and the first refusal's skipped record")

		By("once the window moves on, the sender's retry gets its runId")
		fakeClock.Step(limits.Window)
		r = send(srv.URL, id, agentsv1alpha1.SenderHeader, body, senderSecret, delivery)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(r.runID).To(Equal(first.runID))
		fakeClock.Step(limits.Window)
	})

	DescribeTable("keys a delivery by its ID and, where no signature covers the ID, its body",
		func(ctx SpecContext, t agentsv1alpha1.SenderType, idHeader string, bodyKeysDelivery bool) {
			secret := secretFor(t)
			_, id := f.senderEndpoint(ctx, strings.ToLower(string(t)), senderSpec(t), secret)
			// Stripe and Slack carry their ID in the body, the others in a header.
			real := `{"id":"evt_7","event_id":"Ev7","type":"invoice.paid","event":{"type":"app_mention"},"n":1}`
			forged := `{"id":"evt_7","event_id":"Ev7","type":"invoice.paid","event":{"type":"app_mention"},"n":2}`
			ids := map[string]string{}
			if idHeader != "" {
				ids[idHeader] = "next-7"
			}
			first := send(srv.URL, id, t, forged, secret, ids)
			Expect(first.status).To(Equal(http.StatusAccepted), string(first.body))
			second := send(srv.URL, id, t, real, secret, ids)
			Expect(second.status).To(Equal(http.StatusAccepted), string(second.body))
			if !bodyKeysDelivery {
				Expect(second.runID).To(Equal(first.runID), "a signed ID names one delivery, whatever the body")
				Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
				return
			}
			Expect(second.runID).NotTo(Equal(first.runID), "the same unsigned ID with another body is another delivery")
			run := &agentsv1alpha1.AgentRun{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: second.runID}, run)).To(Succeed())
			Expect(run.Spec.Sender.DeliveryID).To(Equal("next-7"))
			payload := &corev1.Secret{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: second.runID}, payload)).To(Succeed())
			Expect(string(payload.Data[agentsv1alpha1.PayloadBodyKey])).To(Equal(real), "the real call runs with its own body")
			again := send(srv.URL, id, t, real, secret, ids)
			Expect(again.runID).To(Equal(second.runID), "the same ID and body is a duplicate")
			Expect(runsIn(ctx, f.ns)).To(HaveLen(2))
		},
		Entry("Header", agentsv1alpha1.SenderHeader, "Idempotency-Key", true),
		Entry("Bearer", agentsv1alpha1.SenderBearer, "Idempotency-Key", true),
		Entry("GitLab", agentsv1alpha1.SenderGitLab, "X-Gitlab-Event-UUID", true),
		Entry("GitHub", agentsv1alpha1.SenderGitHub, "X-GitHub-Delivery", true),
		Entry("HMAC", agentsv1alpha1.SenderHMAC, "Idempotency-Key", true),
		Entry("StandardWebhooks", agentsv1alpha1.SenderStandardWebhooks, "webhook-id", false),
		Entry("Stripe", agentsv1alpha1.SenderStripe, "", false),
		Entry("Slack", agentsv1alpha1.SenderSlack, "", false),
	)
})
