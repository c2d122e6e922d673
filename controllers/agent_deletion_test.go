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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Deleting an Agent deletes its endpoints and threads through the Agent's
// finalizer, not owner references (envtest has no garbage collector: what
// goes here, the operator deleted).
var _ = Describe("Deleting an Agent", func() {
	// fresh is a copy of o to read into.
	fresh := func(o client.Object) client.Object {
		GinkgoHelper()
		c, ok := o.DeepCopyObject().(client.Object)
		Expect(ok).To(BeTrue())
		return c
	}
	newThread := func(ns, name, agent string) *agentsv1alpha1.AgentThread {
		return &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent}},
		}
	}
	create := func(ctx SpecContext, objs ...client.Object) {
		GinkgoHelper()
		for _, o := range objs {
			Expect(k8sClient.Create(ctx, o)).To(Succeed())
		}
	}
	gone := func(ctx SpecContext, o client.Object) func() bool {
		return func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(o), fresh(o)))
		}
	}
	// alive: o exists and is not being deleted.
	alive := func(ctx SpecContext, o client.Object) func() bool {
		return func() bool {
			cur := fresh(o)
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(o), cur) == nil && cur.GetDeletionTimestamp().IsZero()
		}
	}
	finalizers := func(ctx SpecContext, o client.Object) func() []string {
		return func() []string { return get(ctx, fresh(o)).GetFinalizers() }
	}
	ownerRefs := func(ctx SpecContext, o client.Object) func() []metav1.OwnerReference {
		return func() []metav1.OwnerReference { return get(ctx, fresh(o)).GetOwnerReferences() }
	}
	// patchMeta changes o's metadata as an admin would.
	patchMeta := func(ctx SpecContext, o client.Object, mutate func(client.Object)) {
		GinkgoHelper()
		cur := get(ctx, fresh(o))
		patch := client.MergeFrom(fresh(cur))
		mutate(cur)
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
	}

	It("deletes its endpoints and threads, waits until they are gone, and touches nothing of another Agent", func(ctx SpecContext) {
		ns, elsewhere := newNamespace(ctx), newNamespace(ctx)
		triage, other, twin := newAgent(ns, "triage"), newAgent(ns, "other"), newAgent(elsewhere, "triage")
		create(ctx, triage, other, twin)
		ep, th := newEndpoint(ns, "hooks", "triage"), newThread(ns, "ops", "triage")
		otherEP, otherTH := newEndpoint(ns, "other-hooks", "other"), newThread(ns, "other-ops", "other")
		twinEP, twinTH := newEndpoint(elsewhere, "hooks", "triage"), newThread(elsewhere, "ops", "triage") // same names, another namespace
		held := newEndpoint(ns, "held", "triage")
		held.Finalizers = []string{"example.com/hold"}
		create(ctx, ep, th, otherEP, otherTH, twinEP, twinTH, held)

		Eventually(finalizers(ctx, triage)).Should(ConsistOf(agentsv1alpha1.FinalizerCleanup))
		readyEndpoint(ctx, ep)
		// A finalizer removed by hand from a live Agent comes back.
		patchMeta(ctx, triage, func(o client.Object) { controllerutil.RemoveFinalizer(o, agentsv1alpha1.FinalizerCleanup) })
		Eventually(finalizers(ctx, triage)).Should(ConsistOf(agentsv1alpha1.FinalizerCleanup))
		for _, o := range []client.Object{ep, th, held} {
			Expect(get(ctx, fresh(o)).GetOwnerReferences()).To(BeEmpty(), "%s carries no owner reference", o.GetName())
		}

		Expect(k8sClient.Delete(ctx, triage)).To(Succeed())
		Eventually(gone(ctx, ep)).Should(BeTrue())
		Eventually(gone(ctx, th)).Should(BeTrue())
		// The held endpoint is being deleted; the Agent waits for it.
		Eventually(alive(ctx, held)).Should(BeFalse())
		Consistently(finalizers(ctx, triage)).Should(ConsistOf(agentsv1alpha1.FinalizerCleanup))
		patchMeta(ctx, held, func(o client.Object) { o.SetFinalizers(nil) })
		Eventually(gone(ctx, triage)).Should(BeTrue())

		for _, o := range []client.Object{other, otherEP, otherTH, twin, twinEP, twinTH} {
			Expect(alive(ctx, o)()).To(BeTrue(), "%s/%s is not touched", o.GetNamespace(), o.GetName())
		}
	})

	It("deletes an endpoint with the Agent its agentRef names now, not the one it named before", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		first, second := newAgent(ns, "first"), newAgent(ns, "second")
		create(ctx, first, second)
		ep := newEndpoint(ns, "moving", "first")
		create(ctx, ep)
		readyEndpoint(ctx, ep)
		cur := endpointState(ctx, ep)()
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.AgentRef.Name = "second"
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionAgentReady)
		}).Should(HaveField("Message", ContainSubstring(`"second"`)))

		Eventually(finalizers(ctx, first)).Should(ContainElement(agentsv1alpha1.FinalizerCleanup))
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		Eventually(gone(ctx, first)).Should(BeTrue())
		Consistently(alive(ctx, ep)).Should(BeTrue())

		Eventually(finalizers(ctx, second)).Should(ContainElement(agentsv1alpha1.FinalizerCleanup))
		Expect(k8sClient.Delete(ctx, second)).To(Succeed())
		Eventually(gone(ctx, ep)).Should(BeTrue())
		Eventually(gone(ctx, second)).Should(BeTrue())
	})

	It("after a restart: adopts what an earlier version left, cleans up an Agent deleted meanwhile, and leaves what a finalizer removed by hand let go", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		stopManager()
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				stopManager = startManager()
			}
		})

		// As an earlier version left them: an Agent without the finalizer,
		// an endpoint and a thread owned by it (the endpoint also by
		// something of the user's, which stays).
		legacy := newAgent(ns, "legacy")
		create(ctx, legacy)
		usersOwner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "users-owner"}}
		create(ctx, usersOwner)
		agentOwner := metav1.OwnerReference{APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "Agent", Name: "legacy", UID: legacy.UID}
		legacyEP, legacyTH := newEndpoint(ns, "legacy-hooks", "legacy"), newThread(ns, "legacy-ops", "legacy")
		legacyEP.OwnerReferences = []metav1.OwnerReference{agentOwner, {APIVersion: "v1", Kind: "ConfigMap", Name: "users-owner", UID: usersOwner.UID}}
		legacyTH.OwnerReferences = []metav1.OwnerReference{agentOwner}
		create(ctx, legacyEP, legacyTH)

		// Deleted while the operator was down: the finalizer holds it.
		doomed := newAgent(ns, "doomed")
		doomed.Finalizers = []string{agentsv1alpha1.FinalizerCleanup}
		doomedEP, doomedTH := newEndpoint(ns, "doomed-hooks", "doomed"), newThread(ns, "doomed-ops", "doomed")
		create(ctx, doomed, doomedEP, doomedTH)
		Expect(k8sClient.Delete(ctx, doomed)).To(Succeed())

		// Deleted while the operator was down, and its finalizer removed by
		// hand: the Agent goes at once, its endpoint and thread stay.
		released := newAgent(ns, "released")
		released.Finalizers = []string{agentsv1alpha1.FinalizerCleanup}
		releasedEP, releasedTH := newEndpoint(ns, "released-hooks", "released"), newThread(ns, "released-ops", "released")
		create(ctx, released, releasedEP, releasedTH)
		Expect(k8sClient.Delete(ctx, released)).To(Succeed())
		patchMeta(ctx, released, func(o client.Object) { o.SetFinalizers(nil) })
		Expect(gone(ctx, released)()).To(BeTrue())
		Expect(alive(ctx, doomed)()).To(BeFalse())
		Expect(gone(ctx, doomed)()).To(BeFalse(), "the finalizer keeps it while the operator is down")

		stopManager, restarted = startManager(), true

		Eventually(finalizers(ctx, legacy)).Should(ConsistOf(agentsv1alpha1.FinalizerCleanup))
		Eventually(ownerRefs(ctx, legacyEP)).Should(ConsistOf(HaveField("Kind", "ConfigMap")))
		Eventually(ownerRefs(ctx, legacyTH)).Should(BeEmpty())

		Eventually(gone(ctx, doomedEP)).Should(BeTrue())
		Eventually(gone(ctx, doomedTH)).Should(BeTrue())
		Eventually(gone(ctx, doomed)).Should(BeTrue())

		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, releasedEP)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound))
		Consistently(alive(ctx, releasedEP)).Should(BeTrue())
		Expect(alive(ctx, releasedTH)()).To(BeTrue())
		Expect(alive(ctx, legacyEP)()).To(BeTrue())
	})
})
