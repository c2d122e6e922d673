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
	cryptorand "crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// An endpoint ID pinned through spec.endpointIDSecretRef: read once from a
// Secret labelled for hookrun, refused when it is not an ID, and unique in
// the cluster like every ID (the older endpoint keeps it).
var _ = Describe("A pinned endpoint ID", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
	})

	// Every spec pins its own ID: the endpoints of earlier specs stay (one
	// namespace each) and would hold it.
	var id string
	BeforeEach(func() {
		b := make([]byte, TokenBytes)
		_, err := cryptorand.Read(b)
		Expect(err).NotTo(HaveOccurred())
		id = base64.RawURLEncoding.EncodeToString(b)
	})

	idSecret := func(ctx SpecContext, name, value string, labels map[string]string) *corev1.Secret {
		GinkgoHelper()
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Data:       map[string][]byte{"id": []byte(value)},
		}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		return s
	}
	setValue := func(ctx SpecContext, s *corev1.Secret, value string) {
		GinkgoHelper()
		cur := get(ctx, s.DeepCopy())
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Data = map[string][]byte{"id": []byte(value)}
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
	}
	pinned := func(ctx SpecContext, name, secret string) *agentsv1alpha1.WebhookEndpoint {
		GinkgoHelper()
		ep := newEndpoint(ns, name, "triage")
		ep.Spec.AllowUnauthenticated = true // the case pinning matters most for: the URL is the credential
		ep.Spec.EndpointIDSecretRef = &agentsv1alpha1.SecretKeyReference{Name: secret, Key: "id"}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		return ep
	}
	readyReason := func(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) func() *metav1.Condition {
		return func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}
	}

	It("takes the ID from the Secret once: its URL is known before the endpoint exists, and a later change of the Secret changes nothing", func(ctx SpecContext) {
		s := idSecret(ctx, "hook-id", id, referableLabels())
		ep := readyEndpoint(ctx, pinned(ctx, "status-page", "hook-id"))
		Expect(ep.Status.EndpointID).To(Equal(id))
		Expect(ep.Status.URL).To(Equal(publicBaseURL + "/api/webhooks/" + id + "/receive"))

		setValue(ctx, s, strings.Repeat("B", 42)+"A") // another valid ID
		poke(ctx, ep)
		Consistently(func() string { return endpointState(ctx, ep)().Status.EndpointID }, "2s").Should(Equal(id))

		// The field can be set only while the endpoint has no ID: on an
		// endpoint with a random one the API server refuses it.
		random := readyEndpoint(ctx, func() *agentsv1alpha1.WebhookEndpoint {
			e := newEndpoint(ns, "random", "triage")
			Expect(k8sClient.Create(ctx, e)).To(Succeed())
			return e
		}())
		patch := client.MergeFrom(random.DeepCopy())
		random.Spec.EndpointIDSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "hook-id", Key: "id"}
		err := k8sClient.Patch(ctx, random, patch)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.endpointIDSecretRef can be set only when the endpoint is created"))
		// Dropping it is fine, and keeps the ID.
		cur := endpointState(ctx, ep)()
		patch = client.MergeFrom(cur.DeepCopy())
		cur.Spec.EndpointIDSecretRef = nil
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		Consistently(func() string { return endpointState(ctx, ep)().Status.EndpointID }, "1s").Should(Equal(id))
	})

	It("refuses a value that is not an ID, with EndpointIDInvalid, and takes it once it is one", func(ctx SpecContext) {
		s := idSecret(ctx, "hook-id", id+"\n", referableLabels()) // echo without -n
		ep := pinned(ctx, "status-page", "hook-id")
		Eventually(readyReason(ctx, ep)).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonEndpointIDInvalid),
			HaveField("Message", ContainSubstring("holds 44 bytes that are not an endpoint ID"))))
		Expect(conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionStalled)).
			To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonEndpointIDInvalid))
		got := endpointState(ctx, ep)()
		Expect(got.Status.EndpointID).To(BeEmpty(), "no random ID instead: it would be fixed for good")
		Expect(got.Status.URL).To(BeEmpty())

		setValue(ctx, s, id) // the Secret's watch brings the endpoint back
		Expect(readyEndpoint(ctx, ep).Status.EndpointID).To(Equal(id))
	})

	It("reads only a Secret labelled for hookrun, and waits for one that does not exist yet", func(ctx SpecContext) {
		ep := pinned(ctx, "status-page", "hook-id")
		Eventually(readyReason(ctx, ep)).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotFound),
			HaveField("Message", ContainSubstring("spec.endpointIDSecretRef"))))

		idSecret(ctx, "hook-id", id, nil) // as External Secrets restores it, but unlabelled
		Eventually(readyReason(ctx, ep)).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable),
			HaveField("Message", ContainSubstring("kubectl label secret hook-id agents.hookrun.dev/allow-reference=true"))))
		Expect(endpointState(ctx, ep)().Status.EndpointID).To(BeEmpty())

		setReferable(ctx, ns, "hook-id", true)
		Expect(readyEndpoint(ctx, ep).Status.EndpointID).To(Equal(id))
	})

	It("never writes a pinned ID that another endpoint holds: the copy is EndpointIDConflict, without an ID, until that one is deleted", func(ctx SpecContext) {
		holderNS := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(holderNS, "triage"))).To(Succeed())
		holder := newEndpoint(holderNS, "holder", "triage")
		Expect(k8sClient.Create(ctx, holder)).To(Succeed())
		holder = readyEndpoint(ctx, holder)
		Expect(holder.Status.EndpointIDSince).NotTo(BeNil(), "the operator stamps when it wrote the ID")

		idSecret(ctx, "copied-id", holder.Status.EndpointID, referableLabels())
		copycat := pinned(ctx, "copycat", "copied-id")
		Eventually(readyReason(ctx, copycat)).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonEndpointIDConflict),
			HaveField("Message", ContainSubstring(`Another WebhookEndpoint holds the endpoint ID that Secret "copied-id" pins`))))
		Expect(endpointState(ctx, copycat)().Status.EndpointID).To(BeEmpty())
		Consistently(readyReason(ctx, holder), "2s").Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))

		// Deleting the holder hands the ID over, to another namespace only
		// once the holder's namespace had IDHandoverReserve to take it.
		Expect(k8sClient.Delete(ctx, holder)).To(Succeed())
		Eventually(readyReason(ctx, copycat)).Should(HaveField("Message", ContainSubstring("only an endpoint of its namespace may take it")))
		Expect(endpointState(ctx, copycat)().Status.EndpointID).To(BeEmpty())
		fakeClock.Step(IDHandoverReserve)
		poke(ctx, endpointState(ctx, copycat)())
		Expect(readyEndpoint(ctx, copycat).Status.EndpointID).To(Equal(holder.Status.EndpointID))
	})

	// The handover: endpoints of another namespace stacked on a holder's ID
	// never win it from the holder's own namespace, however many; they may
	// take it only IDHandoverReserve after the deletion.
	It("hands a deleted holder's ID to an endpoint of its namespace pinning it, before any number of another namespace's, and to those only 10 minutes later", func(ctx SpecContext) {
		holderNS := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(holderNS, "triage"))).To(Succeed())
		holder := readyEndpoint(ctx, func() *agentsv1alpha1.WebhookEndpoint {
			ep := newEndpoint(holderNS, "holder", "triage")
			Expect(k8sClient.Create(ctx, ep)).To(Succeed())
			return ep
		}())
		heldID := holder.Status.EndpointID

		idSecret(ctx, "stacked-id", heldID, referableLabels())
		var stacked []*agentsv1alpha1.WebhookEndpoint
		for i := range 4 {
			stacked = append(stacked, pinned(ctx, fmt.Sprintf("sleeper-%d", i), "stacked-id"))
		}
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: holderNS, Name: "moved-id", Labels: referableLabels()},
			Data:       map[string][]byte{"id": []byte(heldID)},
		})).To(Succeed())
		successor := newEndpoint(holderNS, "successor", "triage")
		successor.Spec.EndpointIDSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "moved-id", Key: "id"}
		Expect(k8sClient.Create(ctx, successor)).To(Succeed())
		for _, ep := range append(stacked, successor) {
			Eventually(readyReason(ctx, ep)).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonEndpointIDConflict))
		}

		Expect(k8sClient.Delete(ctx, holder)).To(Succeed())
		Expect(readyEndpoint(ctx, successor).Status.EndpointID).To(Equal(heldID), "the holder's namespace takes its ID")
		for _, ep := range stacked {
			Expect(endpointState(ctx, ep)().Status.EndpointID).To(BeEmpty())
		}

		// The successor goes too: only its namespace may take the ID for
		// 10 minutes, and then one of the others does.
		Expect(k8sClient.Delete(ctx, successor)).To(Succeed())
		for _, ep := range stacked {
			Eventually(readyReason(ctx, ep)).Should(HaveField("Message", ContainSubstring("only an endpoint of its namespace may take it")))
		}
		Consistently(func() []string {
			var ids []string
			for _, ep := range stacked {
				ids = append(ids, endpointState(ctx, ep)().Status.EndpointID)
			}
			return ids
		}, "2s").Should(HaveEach(BeEmpty()), "no other namespace takes the ID within 10 minutes")
		fakeClock.Step(IDHandoverReserve - time.Second)
		poke(ctx, endpointState(ctx, stacked[0])())
		Consistently(func() string { return endpointState(ctx, stacked[0])().Status.EndpointID }, "2s").Should(BeEmpty())
		fakeClock.Step(time.Second)
		for _, ep := range stacked {
			poke(ctx, endpointState(ctx, ep)())
		}
		Eventually(func() int {
			n := 0
			for _, ep := range stacked {
				if endpointState(ctx, ep)().Status.EndpointID == heldID {
					n++
				}
			}
			return n
		}).Should(Equal(1), "after 10 minutes one endpoint of another namespace takes it")
	})

	// The sleeper: created first, pinning a Secret that does not exist yet,
	// then handed a victim's ID once its owner learned the victim's URL.
	// Older by creationTimestamp, it would have taken the victim's calls.
	It("leaves an ID with the endpoint that held it first, even when a sleeper pinning it is older", func(ctx SpecContext) {
		sleeper := pinned(ctx, "sleeper", "later-id")
		Eventually(readyReason(ctx, sleeper)).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotFound))
		// creationTimestamp has whole seconds: make the sleeper the older.
		Eventually(time.Now).Should(BeTemporally(">=", endpointState(ctx, sleeper)().CreationTimestamp.Add(time.Second)))

		victimNS := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(victimNS, "triage"))).To(Succeed())
		victim := newEndpoint(victimNS, "victim", "triage")
		Expect(k8sClient.Create(ctx, victim)).To(Succeed())
		victim = readyEndpoint(ctx, victim)

		idSecret(ctx, "later-id", victim.Status.EndpointID, referableLabels())
		Eventually(readyReason(ctx, sleeper)).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonEndpointIDConflict))
		Consistently(func() string { return endpointState(ctx, sleeper)().Status.EndpointID }, "2s").Should(BeEmpty())
		Expect(readyReason(ctx, victim)()).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
	})
})
