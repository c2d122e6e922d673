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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

var _ = Describe("An endpoint's filter", func() {
	It("is Ready=False FilterInvalid, with a Warning event, while it does not compile, and Available once fixed", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		ep := newEndpoint(ns, "filtered", "triage")
		ep.Spec.Filter = `event == "issues" && body.action = "opened"`
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())

		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonFilterInvalid),
			HaveField("Message", And(ContainSubstring("Syntax error"), ContainSubstring("422 filter_invalid")))))
		Expect(endpointState(ctx, ep)().Status.URL).NotTo(BeEmpty(), "the endpoint has its ID and URL: only the filter is wrong")
		Eventually(eventsFor(ctx, ep, agentsv1alpha1.EventFilterInvalid)).Should(ConsistOf(HaveField("Note", ContainSubstring("Syntax error"))))

		fixed := endpointState(ctx, ep)()
		patch := client.MergeFrom(fixed.DeepCopy())
		fixed.Spec.Filter = `event == "issues" && body.action == "opened"`
		Expect(k8sClient.Patch(ctx, fixed, patch)).To(Succeed())
		readyEndpoint(ctx, ep)
		Consistently(eventsFor(ctx, ep, agentsv1alpha1.EventFilterInvalid), "1s").Should(HaveLen(1))
	})

	It("is Ready=False FieldsInvalid, with a Warning event, while its fields do not compile, and Available once fixed", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		ep := newEndpoint(ns, "fields", "triage")
		ep.Spec.Fields = map[string]agentsv1alpha1.FieldExpression{"title": `body.issue.title`, "labels": `body.issue.labels.map(l, l.nme`}
		ep.Spec.Payload = agentsv1alpha1.PayloadFields
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())

		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonFieldsInvalid),
			HaveField("Message", And(ContainSubstring("field labels: "), ContainSubstring("422 fields_invalid")))))
		Eventually(eventsFor(ctx, ep, agentsv1alpha1.EventFieldsInvalid)).Should(ConsistOf(HaveField("Note", ContainSubstring("field labels"))))

		fixed := endpointState(ctx, ep)()
		patch := client.MergeFrom(fixed.DeepCopy())
		fixed.Spec.Fields["labels"] = `body.issue.labels.map(l, l.name)`
		Expect(k8sClient.Patch(ctx, fixed, patch)).To(Succeed())
		readyEndpoint(ctx, ep)
		Consistently(eventsFor(ctx, ep, agentsv1alpha1.EventFieldsInvalid), "1s").Should(HaveLen(1))
	})
})
