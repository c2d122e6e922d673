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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// The agents are the real SDKs (test/a2apeers): a2a-go v2 serving 1.0 over
// JSON-RPC or HTTP+JSON, and a2a-go v0.3, each with a card that lists only
// its interface, so the operator process finds each through its card. (The
// sample Agent of the other specs reaches the demo agent, also a2a-go v2,
// through its card too.)
var _ = Describe("agents reached through their cards", func() {
	It("runs, keeps a thread's context, cancels at the timeout and ends input-required runs over 1.0 JSON-RPC, 1.0 HTTP+JSON and 0.3", func(ctx SpecContext) {
		for name, c := range map[string]struct {
			start   func(...a2apeers.Option) *a2apeers.Peer
			binding agentsv1alpha1.A2AProtocolBinding
			version agentsv1alpha1.A2AProtocolVersion
		}{
			"card-jsonrpc": {a2apeers.V1JSONRPC, agentsv1alpha1.A2ABindingJSONRPC, agentsv1alpha1.A2AProtocolV10},
			"card-rest":    {a2apeers.V1HTTPJSON, agentsv1alpha1.A2ABindingHTTPJSON, agentsv1alpha1.A2AProtocolV10},
			"card-v03":     {a2apeers.V03, agentsv1alpha1.A2ABindingJSONRPC, agentsv1alpha1.A2AProtocolV03},
		} {
			By(name)
			peer := c.start()
			DeferCleanup(peer.Close)
			agent := &agentsv1alpha1.Agent{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: agentsv1alpha1.AgentSpec{
					A2A:        agentsv1alpha1.A2AEndpoint{URL: peer.URL},
					RunTimeout: &metav1.Duration{Duration: 5 * time.Second},
				},
			}
			Expect(developer().Create(ctx, agent)).To(Succeed())
			Eventually(func() *agentsv1alpha1.A2AStatus { return get(ctx, agent).Status.A2A }).Should(And(
				Not(BeNil()), HaveField("ProtocolBinding", c.binding), HaveField("ProtocolVersion", c.version)))

			Expect(developer().Create(ctx, &agentsv1alpha1.AgentThread{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: name}, Title: "Cards"},
			})).To(Succeed())
			ep := cardEndpoint(ctx, name)
			first, second := accepted(ctx, ep, `{"n":1}`), accepted(ctx, ep, `{"n":2}`)
			a, b := succeeds(ctx, first), succeeds(ctx, second)
			Expect(a.Status.Output).To(Equal(`echo: {"n":1}`))
			Expect(a.Status.Thread.ContextID).NotTo(BeEmpty())
			Expect(b.Status.Thread.ContextID).To(Equal(a.Status.Thread.ContextID), "the thread keeps its contextId")

			asking := accepted(ctx, ep, "input")
			Eventually(func() agentsv1alpha1.RunState { return run(ctx, asking).Status.State }).Should(Equal(agentsv1alpha1.RunError))
			Expect(run(ctx, asking).Status.Message).To(ContainSubstring(a2apeers.InputText))

			hanging := accepted(ctx, ep, "hang")
			Eventually(func() agentsv1alpha1.RunState { return run(ctx, hanging).Status.State }, 30*time.Second).Should(Equal(agentsv1alpha1.RunError))
			Expect(run(ctx, hanging).Status.Message).To(ContainSubstring("the task was canceled"))
		}
	})
})

// cardEndpoint creates an endpoint of Agent name whose runs continue its
// thread of the same name, and waits until the receiver serves it.
func cardEndpoint(ctx context.Context, name string) devcluster.Endpoint {
	GinkgoHelper()
	Expect(developer().Create(ctx, &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: name}, Prompt: "Look.",
			ThreadStrategy:  agentsv1alpha1.ContinueExisting,
			TargetThreadRef: &agentsv1alpha1.LocalObjectReference{Name: name},
		},
	})).To(Succeed())
	var ep devcluster.Endpoint
	Eventually(func(g Gomega) {
		var err error
		ep, err = cluster.EndpointFor(ctx, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ep.Secret).NotTo(BeEmpty())
	}).Should(Succeed())
	served(ctx, ep)
	return ep
}
