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

package endpoint

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// A reference makes the operator read a Secret with its own rights: only
// Secrets labelled for hookrun are used.
var _ = Describe("An endpoint's secretRef", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	unlabelled := func(ctx SpecContext, name string, value []byte) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data:       map[string][]byte{"token": value},
		})).To(Succeed())
	}

	It("hashes an endpoint's secretRef Secret only while it is labelled for hookrun", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		value := []byte(strings.Repeat("s", 40))
		unlabelled(ctx, "db-password", value)
		ep := newEndpoint(ns, "probe", "triage")
		ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "db-password", Key: "token"}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		notReferable := func(g Gomega) {
			cur := endpointState(ctx, ep)()
			g.Expect(conditionOf(cur.Status.Conditions, agentsv1alpha1.ConditionSecretReady)).To(And(
				haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable),
				HaveField("Message", ContainSubstring("kubectl label secret db-password agents.hookrun.dev/allow-reference=true"))))
			g.Expect(conditionOf(cur.Status.Conditions, agentsv1alpha1.ConditionReady)).To(
				haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable))
			g.Expect(cur.Status.SecretHash).To(BeEmpty(), "nothing of the Secret's value may show")
		}
		Eventually(notReferable).Should(Succeed())
		Consistently(notReferable).Should(Succeed())

		setReferable(ctx, ns, "db-password", true)
		Expect(readyEndpoint(ctx, ep).Status.SecretHash).To(Equal(sha256Hex(value)))

		setReferable(ctx, ns, "db-password", false)
		Eventually(notReferable).Should(Succeed())
	})
})
