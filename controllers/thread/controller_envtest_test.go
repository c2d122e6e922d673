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

package thread

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What the AgentThread controller shows of a thread that no run has used
// yet: the context it attaches, and its Agent's readiness.
var _ = Describe("The AgentThread controller", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("shows an attached context, and gives a thread no owner reference to its Agent", func(ctx SpecContext) {
		th := &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, ContextID: "ctx-123"},
		}
		Expect(k8sClient.Create(ctx, th)).To(Succeed())
		threadState := func() *agentsv1alpha1.AgentThread {
			got := &agentsv1alpha1.AgentThread{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(th), got)).To(Succeed())
			return got
		}
		Eventually(func() *metav1.Condition {
			return conditionOf(threadState().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).
			Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound))
		Expect(threadState().Status.ContextID).To(Equal("ctx-123"))

		agent := newAgent(ns, "triage")
		Expect(k8sClient.Create(ctx, agent)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(threadState().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).
			Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
		Consistently(func() []metav1.OwnerReference { return threadState().OwnerReferences }).Should(BeEmpty())
	})
})
