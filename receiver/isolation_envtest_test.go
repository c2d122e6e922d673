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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
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
		Expect(r.code).To(Equal(CodeRateLimited))
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
		fakeClock.Step(RateWindow)
		r = send(srv.URL, id, agentsv1alpha1.SenderHeader, body, senderSecret, delivery)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(r.runID).To(Equal(first.runID))
		fakeClock.Step(RateWindow)
	})
})
