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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

var _ = Describe("Two endpoints with one endpoint ID", func() {
	It("leaves the ID with the older one and reports the conflict on the newer until the older is gone", func(ctx SpecContext) {
		victimNS, thiefNS := newNamespace(ctx), newNamespace(ctx)
		for _, ns := range []string{victimNS, thiefNS} {
			Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		}
		victim := newEndpoint(victimNS, "victim", "triage")
		Expect(k8sClient.Create(ctx, victim)).To(Succeed())
		victim = readyEndpoint(ctx, victim)
		// creationTimestamp has whole seconds, and endpoints of one second
		// are ordered by UID: make the victim the older by a second.
		Eventually(time.Now).Should(BeTemporally(">=", victim.CreationTimestamp.Add(time.Second)))
		thief := newEndpoint(thiefNS, "thief", "triage")
		Expect(k8sClient.Create(ctx, thief)).To(Succeed())
		thief = readyEndpoint(ctx, thief)

		// The victim's ID copied into the thief's status (what admission
		// now stops tenants from doing; an ID pinned twice looks the same).
		patch := client.MergeFrom(thief.DeepCopy())
		thief.Status.EndpointID = victim.Status.EndpointID
		Expect(k8sClient.Status().Patch(ctx, thief, patch)).To(Succeed())

		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, thief)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonEndpointIDConflict))
		Expect(endpointState(ctx, thief)().Status.EndpointID).To(Equal(victim.Status.EndpointID), "the operator does not replace an ID someone may have")
		Consistently(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, victim)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}, "2s").Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))

		Expect(k8sClient.Delete(ctx, victim)).To(Succeed())
		readyEndpoint(ctx, thief)
	})
})
