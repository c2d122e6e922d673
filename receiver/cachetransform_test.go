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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// A tenant may write up to 256 KiB of annotations, and long titles, URLs
// and conditions, into every object the receiver holds; each replica holds
// every endpoint, Agent and AgentThread of the cluster.
var _ = Describe("The receiver's cache", func() {
	It("keeps only the fields the receiver reads", func(ctx SpecContext) {
		f := newFixture(ctx)
		big := map[string]string{"tenant.example.com/ballast": strings.Repeat("x", 200<<10)}
		thread := &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "ballast", Annotations: big, Labels: map[string]string{"team": "a"}},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Title: strings.Repeat("t", 200)},
		}
		Expect(k8sClient.Create(ctx, thread)).To(Succeed())
		agent := &agentsv1alpha1.Agent{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "triage"}, agent)).To(Succeed())
		agent.Annotations = big
		Expect(k8sClient.Update(ctx, agent)).To(Succeed())
		ep, id := f.endpoint(ctx, endpointSpec{name: "ballast", secret: "s", mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Annotations = big
			ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ballast"}
			ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
		}})

		cachedThread := &agentsv1alpha1.AgentThread{}
		Eventually(func() error { return receiverCache.Get(ctx, client.ObjectKeyFromObject(thread), cachedThread) }).Should(Succeed())
		Expect(cachedThread.Annotations).To(BeEmpty())
		Expect(cachedThread.Labels).To(BeEmpty())
		Expect(cachedThread.ManagedFields).To(BeEmpty())
		Expect(cachedThread.Spec).To(Equal(agentsv1alpha1.AgentThreadSpec{AgentRef: thread.Spec.AgentRef}))

		cachedAgent := &agentsv1alpha1.Agent{}
		Eventually(func() map[string]string {
			Expect(receiverCache.Get(ctx, client.ObjectKeyFromObject(agent), cachedAgent)).To(Succeed())
			return cachedAgent.Annotations
		}).Should(BeEmpty())
		Expect(cachedAgent.ResourceVersion).NotTo(BeEmpty())
		Expect(cachedAgent.Spec.A2A.URL).To(BeEmpty())

		e := handler.table.Lookup(id)
		Expect(e.Obj.Annotations).To(BeEmpty())
		Expect(e.Obj.ManagedFields).To(BeEmpty())
		Expect(e.Obj.UID).To(Equal(ep.UID))
		Expect(e.Obj.Spec.TargetThreadRef).NotTo(BeNil(), "what the receiver reads stays")

		// And it still serves from what it kept.
		Expect(post(id, ptr("s"), `{}`).status).To(Equal(202))
	})

	It("keeps no prompt and no compiled filter of an endpoint not called; a run carries the prompt of the moment of its call", func(ctx SpecContext) {
		f := newFixture(ctx)
		prompt := strings.Repeat("é", 32768) // 64 KiB, the most the schema allows
		ep, id := f.endpoint(ctx, endpointSpec{name: "largest", secret: "s", mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Prompt = prompt
			ep.Spec.Filter = `event == ""`
		}})
		e := handler.table.Lookup(id)
		Expect(e.Obj.Spec.Prompt).To(BeEmpty(), "the informer keeps no prompt")
		Expect(e.Obj.Spec.Filter).To(Equal(`event == ""`), "the expression stays, to be compiled when needed")
		compiled, _, _ := handler.table.Compiled(ep.UID)
		Expect(compiled).To(BeFalse(), "nothing is compiled before a call needs it")

		runPrompt := func(body string) string {
			GinkgoHelper()
			r := post(id, ptr("s"), body)
			Expect(r.status).To(Equal(202))
			run := &agentsv1alpha1.AgentRun{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
			return run.Spec.Prompt
		}
		Expect(runPrompt(`{"n":1}`)).To(Equal(prompt))
		compiled, _, _ = handler.table.Compiled(ep.UID)
		Expect(compiled).To(BeTrue(), "compiled for the call, and kept")
		Expect(runPrompt(`{"n":2}`)).To(Equal(prompt), "from the prompts kept")

		By("a changed prompt is the next run's, as soon as the receiver serves the new generation")
		patch := client.MergeFrom(ep.DeepCopy())
		ep.Spec.Prompt = "the new prompt"
		Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed())
		Eventually(func() int64 { return handler.table.Lookup(id).Obj.Generation }).Should(Equal(ep.Generation))
		Expect(runPrompt(`{"n":3}`)).To(Equal("the new prompt"))
	})

	It("keeps no fields of an endpoint: they are read and compiled when a call needs them, and again for a new generation", func(ctx SpecContext) {
		f := newFixture(ctx)
		ep, id := f.endpoint(ctx, endpointSpec{name: "fields", secret: "s", mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Fields = map[string]agentsv1alpha1.FieldExpression{"n": `body.n`, "long": agentsv1alpha1.FieldExpression(`"` + strings.Repeat("x", 1014) + `" != ""`)}
		}})
		Expect(handler.table.Lookup(id).Obj.Spec.FieldsStripped()).To(BeTrue(), "the informer keeps only a mark that there are fields")
		_, compiled, _ := handler.table.Compiled(ep.UID)
		Expect(compiled).To(BeFalse(), "nothing is compiled before a call needs it")

		fieldsOfRun := func(body string) string {
			GinkgoHelper()
			r := post(id, ptr("s"), body)
			Expect(r.status).To(Equal(202), string(r.body))
			return string(payloadSecret(ctx, f.ns, r.runID).Data[agentsv1alpha1.PayloadFieldsKey])
		}
		Expect(fieldsOfRun(`{"n":1}`)).To(Equal(`{"long":true,"n":1}`))
		_, compiled, _ = handler.table.Compiled(ep.UID)
		Expect(compiled).To(BeTrue(), "compiled for the call, and kept")

		By("changed fields are the next run's, as soon as the receiver serves the new generation")
		patch := client.MergeFrom(ep.DeepCopy())
		ep.Spec.Fields = map[string]agentsv1alpha1.FieldExpression{"doubled": `body.n * 2`}
		Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed())
		Eventually(func() int64 { return handler.table.Lookup(id).Obj.Generation }).Should(Equal(ep.Generation))
		Expect(fieldsOfRun(`{"n":2}`)).To(Equal(`{"doubled":4}`))

		By("an endpoint whose fields are removed evaluates none")
		patch = client.MergeFrom(ep.DeepCopy())
		ep.Spec.Fields = nil
		Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed())
		Eventually(func() int64 { return handler.table.Lookup(id).Obj.Generation }).Should(Equal(ep.Generation))
		r := post(id, ptr("s"), `{"n":3}`)
		Expect(r.status).To(Equal(202))
		Expect(payloadSecret(ctx, f.ns, r.runID).Data).NotTo(HaveKey(agentsv1alpha1.PayloadFieldsKey))
	})
})
