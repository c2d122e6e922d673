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

package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// A reference makes the operator read a Secret with its own rights: only
// Secrets labelled for hookrun are used.
var _ = Describe("Secrets named by a reference", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	unlabelled := func(ctx SpecContext, name string, value []byte) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data:       map[string][]byte{"token": value},
		})).To(Succeed())
	}

	It("fails a run whose agent's token Secret is not labelled for hookrun, and sends nothing", func(ctx SpecContext) {
		agent := servePeer(ctx, ns, nil)
		unlabelled(ctx, "someone-elses", []byte("not-for-hookrun"))
		a := get(ctx, newAgent(ns, "triage"))
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "someone-elses", Key: "token"}
		Expect(k8sClient.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(get(ctx, newAgent(ns, "triage")).Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable))
		run := queueTestRun(ctx, ns, "run-unlabelled", "{}", nil)
		Eventually(func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(ContainSubstring(
			`Secret "someone-elses" named in the Agent's spec.a2a.authSecretRef is not labelled for hookrun`))
		Expect(get(ctx, run).Status.Message).To(ContainSubstring("kubectl label secret someone-elses agents.hookrun.dev/allow-reference=true"))
		Expect(agent.Messages()).To(BeEmpty(), "the token must not reach the agent")
	})
})
