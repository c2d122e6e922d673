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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

var _ = Describe("A deleted endpoint", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	It("leaves nothing behind in the receiver: rate-limit windows and when it last recorded its owner as not a member go", func(ctx SpecContext) {
		ep, id := f.endpoint(ctx, endpointSpec{name: "gone", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Owner = &agentsv1alpha1.Owner{User: "mallory@example.com"}
		}})
		Expect(post(id, ptr(secret), "{}").code).To(Equal(answer.CodeOwnerNotMember))
		_, recorded := handler.pausing.Load(ep.UID)
		Expect(recorded).To(BeTrue())
		Expect(hasWindow(handler.invocation, id)).To(BeTrue(), "the call took from its rate-limit window")

		Expect(k8sClient.Delete(ctx, ep)).To(Succeed())
		Eventually(func() *endpoints.Endpoint { return handler.table.Lookup(id) }).Should(BeNil())
		_, recorded = handler.pausing.Load(ep.UID)
		Expect(recorded).To(BeFalse(), "when it last recorded a deleted endpoint's owner as not a member is dropped")
		Expect(hasWindow(handler.invocation, id)).To(BeFalse(), "its rate-limit window is dropped")
	})
})

// hasWindow tells whether the replica's own limiter of l holds a window of id.
func hasWindow(l limits.RateLimiter, id string) bool {
	GinkgoHelper()
	local, ok := l.(*limits.Local)
	if shared, isShared := l.(*limits.Shared); isShared {
		local, ok = shared.Local, true
	}
	Expect(ok).To(BeTrue(), "a limiter of %T", l)
	return local.Holds(id)
}
