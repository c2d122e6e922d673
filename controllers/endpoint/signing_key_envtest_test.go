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
	"encoding/base64"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
)

var _ = Describe("Signing keys of signed senders", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
	})

	signingKey := func(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) func() (*corev1.Secret, error) {
		return func() (*corev1.Secret, error) {
			s := &corev1.Secret{}
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: clusterinstall.Namespace, Name: agentsv1alpha1.SigningKeySecretName(string(ep.UID))}, s)
			return s, err
		}
	}
	// keyOf reads the secret the signing-key Secret hands the receiver.
	keyOf := func(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) func(Gomega) []byte {
		return func(g Gomega) []byte {
			s, err := signingKey(ctx, ep)()
			g.Expect(err).NotTo(HaveOccurred())
			return s.Data[agentsv1alpha1.SigningKeySecret]
		}
	}

	It("copies a GitHub endpoint's generated secret into the receiver's namespace, and removes it with the endpoint", func(ctx SpecContext) {
		ep := newEndpoint(ns, "gh", "triage")
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		ready := readyEndpoint(ctx, ep)
		value := generatedSecret(ctx, ready).Data[agentsv1alpha1.WebhookSecretKey]
		Eventually(keyOf(ctx, ready)).Should(Equal(value))
		s, _ := signingKey(ctx, ready)()
		Expect(s.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelSigningKey, "true"))
		Expect(s.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelEndpointNamespace, ns))
		Expect(s.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelEndpointUID, string(ready.UID)))
		Expect(s.Annotations).To(HaveKeyWithValue(agentsv1alpha1.AnnotationKeyHash, ready.Status.SecretHash))

		By("putting back a deleted signing key")
		Expect(k8sClient.Delete(ctx, s)).To(Succeed())
		Eventually(keyOf(ctx, ready)).Should(Equal(value))

		By("removing it when the endpoint goes (no garbage collector in envtest: the operator does it)")
		Expect(k8sClient.Delete(ctx, ready)).To(Succeed())
		Eventually(func() bool { _, err := signingKey(ctx, ready)(); return apierrors.IsNotFound(err) }).Should(BeTrue())
	})

	It("removes the signing key of an endpoint deleted and recreated under its name while the operator was down", func(ctx SpecContext) {
		ep := newEndpoint(ns, "again", "triage")
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		old := readyEndpoint(ctx, ep)
		Eventually(keyOf(ctx, old)).ShouldNot(BeEmpty())

		stopManager()
		Expect(k8sClient.Delete(ctx, old)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(old), &agentsv1alpha1.WebhookEndpoint{}))
		}).Should(BeTrue())
		// What the garbage collector does, which envtest lacks.
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName("again")}})).To(Succeed())
		again := newEndpoint(ns, "again", "triage") // a Header endpoint now
		Expect(k8sClient.Create(ctx, again)).To(Succeed())
		stopManager = startManager()

		readyEndpoint(ctx, again)
		Eventually(func() bool { _, err := signingKey(ctx, old)(); return apierrors.IsNotFound(err) }).Should(BeTrue())
	})

	It("re-checks the secret's form when a signed endpoint changes type", func(ctx SpecContext) {
		ep := newEndpoint(ns, "was-github", "triage")
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		ready := readyEndpoint(ctx, ep)
		Eventually(keyOf(ctx, ready)).ShouldNot(BeEmpty())
		patch := client.MergeFrom(ready.DeepCopy())
		ready.Spec.Sender.Type = agentsv1alpha1.SenderStandardWebhooks
		Expect(k8sClient.Patch(ctx, ready, patch)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotStandardWebhooks))
	})

	It("keeps no signing key for hash-only senders, and drops it when an endpoint stops signing", func(ctx SpecContext) {
		ep := newEndpoint(ns, "hmac", "triage")
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC, HMAC: &agentsv1alpha1.HMACSettings{Header: "X-Signature"}}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		ready := readyEndpoint(ctx, ep)
		Eventually(keyOf(ctx, ready)).Should(Equal(generatedSecret(ctx, ready).Data[agentsv1alpha1.WebhookSecretKey]))

		patch := client.MergeFrom(ready.DeepCopy())
		ready.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer}
		Expect(k8sClient.Patch(ctx, ready, patch)).To(Succeed())
		Eventually(func() bool { _, err := signingKey(ctx, ready)(); return apierrors.IsNotFound(err) }).Should(BeTrue())
		Expect(readyEndpoint(ctx, ep).Status.SecretHash).To(Equal(ready.Status.SecretHash), "the secret itself stays")
	})

	It("generates a whsec_ secret for Standard Webhooks and asks for a rotation when an older secret is not one", func(ctx SpecContext) {
		ep := newEndpoint(ns, "svix", "triage")
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStandardWebhooks}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		ready := readyEndpoint(ctx, ep)
		value := string(generatedSecret(ctx, ready).Data[agentsv1alpha1.WebhookSecretKey])
		Expect(value).To(HavePrefix("whsec_"))
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(value, "whsec_"))
		Expect(err).NotTo(HaveOccurred())
		Expect(raw).To(HaveLen(32))
		Eventually(keyOf(ctx, ready)).Should(Equal([]byte(value)), "the receiver derives the key for the endpoint's type")

		By("switching a Header endpoint to Standard Webhooks")
		old := newEndpoint(ns, "was-header", "triage")
		Expect(k8sClient.Create(ctx, old)).To(Succeed())
		old = readyEndpoint(ctx, old)
		patch := client.MergeFrom(old.DeepCopy())
		old.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStandardWebhooks}
		Expect(k8sClient.Patch(ctx, old, patch)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, old)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotStandardWebhooks))
		Expect(conditionOf(endpointState(ctx, old)().Status.Conditions, agentsv1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))

		cur := endpointState(ctx, old)()
		patch = client.MergeFrom(cur.DeepCopy())
		metav1.SetMetaDataAnnotation(&cur.ObjectMeta, agentsv1alpha1.AnnotationRotateSecret, "to-whsec")
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		rotated := readyEndpoint(ctx, old)
		Expect(string(generatedSecret(ctx, rotated).Data[agentsv1alpha1.WebhookSecretKey])).To(HavePrefix("whsec_"))
		Eventually(func(g Gomega) string {
			s, err := signingKey(ctx, rotated)()
			g.Expect(err).NotTo(HaveOccurred())
			return s.Annotations[agentsv1alpha1.AnnotationKeyHash]
		}).Should(Equal(rotated.Status.SecretHash))
	})

	It("keeps the previous key for rotationOverlap after a rotation, then drops it", func(ctx SpecContext) {
		ep := newEndpoint(ns, "overlap", "triage")
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, RotationOverlap: &metav1.Duration{Duration: time.Hour}}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		first := readyEndpoint(ctx, ep)
		firstValue := generatedSecret(ctx, first).Data[agentsv1alpha1.WebhookSecretKey]
		Eventually(keyOf(ctx, first)).Should(Equal(firstValue))

		patch := client.MergeFrom(first.DeepCopy())
		metav1.SetMetaDataAnnotation(&first.ObjectMeta, agentsv1alpha1.AnnotationRotateSecret, "r1")
		Expect(k8sClient.Patch(ctx, first, patch)).To(Succeed())
		Eventually(func() string { return endpointState(ctx, ep)().Status.LastHandledRotation }).Should(Equal("r1"))
		second := endpointState(ctx, ep)()
		Expect(second.Status.PreviousSecretHash).To(Equal(first.Status.SecretHash))
		Expect(second.Status.PreviousSecretExpiresAt.Time).To(BeTemporally("==", fakeClock.Now().Add(time.Hour)))
		secondValue := generatedSecret(ctx, second).Data[agentsv1alpha1.WebhookSecretKey]
		Eventually(func(g Gomega) {
			s, err := signingKey(ctx, second)()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Data[agentsv1alpha1.SigningKeySecret]).To(Equal(secondValue))
			g.Expect(s.Data[agentsv1alpha1.SigningKeyPreviousSecret]).To(Equal(firstValue))
			g.Expect(s.Annotations).To(HaveKeyWithValue(agentsv1alpha1.AnnotationPreviousKeyHash, first.Status.SecretHash))
		}).Should(Succeed())

		By("letting the overlap run out")
		fakeClock.Step(time.Hour)
		poke(ctx, second)
		Eventually(func() string { return endpointState(ctx, ep)().Status.PreviousSecretHash }).Should(BeEmpty())
		Eventually(func(g Gomega) {
			s, err := signingKey(ctx, second)()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Data).NotTo(HaveKey(agentsv1alpha1.SigningKeyPreviousSecret))
			g.Expect(s.Data[agentsv1alpha1.SigningKeySecret]).To(Equal(secondValue))
		}).Should(Succeed())
	})

	It("refuses a secretRef value with white space around it, which no header could carry", func(ctx SpecContext) {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "echoed", Labels: referableLabels()},
			Data:       map[string][]byte{"token": []byte(strings.Repeat("a", 40) + "\n")},
		}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())
		ep := newEndpoint(ns, "echoed", "triage")
		ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "echoed", Key: "token"}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretHasWhiteSpace))
		Expect(endpointState(ctx, ep)().Status.SecretHash).To(BeEmpty())

		secret.Data["token"] = []byte(strings.Repeat("a", 40))
		Expect(k8sClient.Update(ctx, secret)).To(Succeed())
		Expect(readyEndpoint(ctx, ep).Status.SecretHash).To(Equal(sha256Hex(secret.Data["token"])))
	})

	It("keeps the previous hash of a hash-only sender when the secretRef Secret changes", func(ctx SpecContext) {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitlab-token", Labels: referableLabels()},
			Data:       map[string][]byte{"token": []byte(strings.Repeat("a", 40))},
		}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())
		ep := newEndpoint(ns, "gl", "triage")
		ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "gitlab-token", Key: "token"}
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitLab, RotationOverlap: &metav1.Duration{Duration: 10 * time.Minute}}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		first := readyEndpoint(ctx, ep)

		secret.Data["token"] = []byte(strings.Repeat("b", 40))
		Expect(k8sClient.Update(ctx, secret)).To(Succeed())
		Eventually(func() string { return endpointState(ctx, ep)().Status.SecretHash }).Should(Equal(sha256Hex(secret.Data["token"])))
		Expect(endpointState(ctx, ep)().Status.PreviousSecretHash).To(Equal(first.Status.SecretHash))
		_, err := signingKey(ctx, first)()
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "GitLab's token is compared by hash: no key leaves the namespace")
	})
})
