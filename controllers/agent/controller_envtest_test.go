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

package agent

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What the Agent controller reports of an Agent: Ready, archived, or why
// it cannot take runs (its token Secret missing, or not labelled for
// hookrun).
var _ = Describe("The Agent controller", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	agentReady := func(ctx SpecContext, name string) func() *metav1.Condition {
		return func() *metav1.Condition {
			a := &agentsv1alpha1.Agent{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, a)).To(Succeed())
			return conditionOf(a.Status.Conditions, agentsv1alpha1.ConditionReady)
		}
	}
	unlabelled := func(ctx SpecContext, name string, value []byte) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data:       map[string][]byte{"token": value},
		})).To(Succeed())
	}

	It("reports an Agent Ready, archived, or missing its token Secret", func(ctx SpecContext) {
		agent := newAgent(ns, "triage")
		agent.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "triage-token", Key: "token"}
		Expect(k8sClient.Create(ctx, agent)).To(Succeed())
		Eventually(agentReady(ctx, "triage")).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonAuthSecretNotFound),
			HaveField("Message", ContainSubstring(`Secret "triage-token"`))))

		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage-token", Labels: referableLabels()},
			Data:       map[string][]byte{"token": []byte("bearer")},
		})).To(Succeed())
		Eventually(agentReady(ctx, "triage")).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))

		patch := client.MergeFrom(agent.DeepCopy())
		agent.Spec.Archived = true
		Expect(k8sClient.Patch(ctx, agent, patch)).To(Succeed())
		// Archived as asked: Ready (kstatus Current), the reason says archived.
		Eventually(agentReady(ctx, "triage")).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAgentArchived))
	})

	It("keeps an Agent SecretNotReferable while its token Secret is not labelled for hookrun", func(ctx SpecContext) {
		unlabelled(ctx, "db-password", []byte("hunter2"))
		agent := newAgent(ns, "triage")
		agent.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "db-password", Key: "token"}
		Expect(k8sClient.Create(ctx, agent)).To(Succeed())
		ready := func() *metav1.Condition {
			return conditionOf(get(ctx, agent.DeepCopy()).Status.Conditions, agentsv1alpha1.ConditionReady)
		}
		Eventually(ready).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable),
			HaveField("Message", ContainSubstring("kubectl label secret db-password agents.hookrun.dev/allow-reference=true"))))

		setReferable(ctx, ns, "db-password", true)
		Eventually(ready).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))

		setReferable(ctx, ns, "db-password", false)
		Eventually(ready).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable))
	})
})
