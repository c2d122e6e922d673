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
	"context"
	"reflect"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// staleClient serves one object from an old copy, as a cache that is behind.
type staleClient struct {
	client.Client
	stale client.Object
}

func (c staleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key == client.ObjectKeyFromObject(c.stale) && reflect.TypeOf(obj) == reflect.TypeOf(c.stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.stale.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// reconcileBehind reconciles with a cache that is far behind: it serves
// stale, the endpoint as it was created (no ID, owner or secret yet).
func reconcileBehind(ctx SpecContext, stale *agentsv1alpha1.WebhookEndpoint) {
	GinkgoHelper()
	behind := &Reconciler{
		Client: staleClient{Client: k8sClient, stale: stale}, APIReader: k8sClient, MetadataReader: k8sClient,
		Recorder: events.NewFakeRecorder(10), Clock: fakeClock, CacheClock: fakeClock, PublicBaseURL: publicBaseURL,
	}
	_, _ = behind.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
}

var _ = Describe("WebhookEndpoint reconciler", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
	})

	It("gives an endpoint an ID and URL once and keeps them across spec edits and operator restarts", func(ctx SpecContext) {
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		id := got.Status.EndpointID
		Expect(id).To(MatchRegexp(`^[A-Za-z0-9_-]{43}$`))
		Expect(got.Status.URL).To(Equal(publicBaseURL + "/api/webhooks/" + id + "/receive"))
		Expect(got.Status.Phase).To(Equal(agentsv1alpha1.EndpointActive))

		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.Prompt = "A new prompt."
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Eventually(func() int64 { return endpointState(ctx, ep)().Status.ObservedGeneration }).Should(Equal(got.Generation))

		stopManager()
		stopManager = startManager()
		// A change only a reconcile after the restart can answer.
		cur := endpointState(ctx, ep)()
		patch = client.MergeFrom(cur.DeepCopy())
		cur.Spec.Paused = true
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		Eventually(func() agentsv1alpha1.EndpointPhase { return endpointState(ctx, ep)().Status.Phase }).Should(Equal(agentsv1alpha1.EndpointPaused))
		Consistently(func() string { return endpointState(ctx, ep)().Status.EndpointID }).Should(Equal(id))
		Expect(endpointState(ctx, ep)().Status.URL).To(Equal(publicBaseURL + "/api/webhooks/" + id + "/receive"))
	})

	It("generates a 32-byte secret into an owned, labelled Secret and stores only its SHA-256", func(ctx SpecContext) {
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		secret := generatedSecret(ctx, got)

		value := secret.Data[agentsv1alpha1.WebhookSecretKey]
		Expect(value).To(HaveLen(43), "32 bytes as unpadded base64url")
		Expect(got.Status.SecretHash).To(Equal(sha256Hex(value)))
		Expect(got.Status.SecretName).To(Equal("github-issues-webhook-secret"))
		Expect(got.Status.AuthMode).To(Equal(agentsv1alpha1.AuthSecret))
		Expect(got.Status.SecretRotatedAt).NotTo(BeNil())
		Expect(conditionOf(got.Status.Conditions, agentsv1alpha1.ConditionSecretReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonSecretGenerated))
		Expect(metav1.IsControlledBy(secret, got)).To(BeTrue(), "the Secret is owned by the endpoint")
		Expect(secret.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelEndpoint, "github-issues"))
		Expect(string(mustJSON(got.Status))).NotTo(ContainSubstring(string(value)), "the plain secret is not in status")
		Eventually(eventsFor(ctx, got, agentsv1alpha1.EventSecretGenerated)).Should(HaveLen(1))
	})

	It("rotates exactly once per new annotation value", func(ctx SpecContext) {
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		first := readyEndpoint(ctx, ep)
		firstValue := generatedSecret(ctx, first).Data[agentsv1alpha1.WebhookSecretKey]

		fakeClock.Step(time.Minute)
		rotate := func(value string) {
			GinkgoHelper()
			cur := endpointState(ctx, ep)()
			patch := client.MergeFrom(cur.DeepCopy())
			metav1.SetMetaDataAnnotation(&cur.ObjectMeta, agentsv1alpha1.AnnotationRotateSecret, value)
			Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		}
		rotate("2026-11-22T10:00:00Z")
		Eventually(func() string { return endpointState(ctx, ep)().Status.LastHandledRotation }).Should(Equal("2026-11-22T10:00:00Z"))
		second := endpointState(ctx, ep)()
		secondValue := generatedSecret(ctx, second).Data[agentsv1alpha1.WebhookSecretKey]
		Expect(secondValue).NotTo(Equal(firstValue))
		Expect(second.Status.SecretHash).To(Equal(sha256Hex(secondValue)))
		Expect(second.Status.SecretHash).NotTo(Equal(first.Status.SecretHash))
		Expect(second.Status.SecretRotatedAt.Time).To(BeTemporally("==", fakeClock.Now()))
		Expect(conditionOf(second.Status.Conditions, agentsv1alpha1.ConditionSecretReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonSecretRotated))
		Eventually(eventsFor(ctx, second, agentsv1alpha1.EventSecretRotated)).Should(HaveLen(1))

		// Other changes do not rotate again.
		poke(ctx, second)
		Consistently(func() string { return endpointState(ctx, ep)().Status.SecretHash }).Should(Equal(second.Status.SecretHash))
		Expect(generatedSecret(ctx, second).Data[agentsv1alpha1.WebhookSecretKey]).To(Equal(secondValue))

		rotate("again")
		Eventually(func() string { return endpointState(ctx, ep)().Status.SecretHash }).ShouldNot(Equal(second.Status.SecretHash))
		third := endpointState(ctx, ep)()
		Expect(third.Status.SecretHash).To(Equal(sha256Hex(generatedSecret(ctx, third).Data[agentsv1alpha1.WebhookSecretKey])))
		// Recorded after the status write, by the event broadcaster.
		Eventually(eventsFor(ctx, third, agentsv1alpha1.EventSecretRotated)).Should(HaveLen(2))
	})

	// The cache keeps a rotate-secret value longer than 256 bytes as its
	// SHA-256, and status.lastHandledRotation records it so (its schema
	// allows 256 bytes): a live and a cached read of the endpoint must
	// agree that the value was handled, or it rotates on every reconcile.
	It("rotates exactly once for a rotate-secret value longer than 256 bytes, recording its SHA-256", func(ctx SpecContext) {
		ep := newEndpoint(ns, "long-rotation", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		first := readyEndpoint(ctx, ep)

		long := strings.Repeat("2026-11-22T10:00:00Z ", 40)
		cur := endpointState(ctx, ep)()
		patch := client.MergeFrom(cur.DeepCopy())
		metav1.SetMetaDataAnnotation(&cur.ObjectMeta, agentsv1alpha1.AnnotationRotateSecret, long)
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		Eventually(func() string { return endpointState(ctx, ep)().Status.LastHandledRotation }).Should(Equal(agentsv1alpha1.SecretHash([]byte(long))))
		rotated := endpointState(ctx, ep)()
		Expect(rotated.Status.SecretHash).NotTo(Equal(first.Status.SecretHash))
		Eventually(eventsFor(ctx, rotated, agentsv1alpha1.EventSecretRotated)).Should(HaveLen(1))

		poke(ctx, rotated)
		Consistently(func() string { return endpointState(ctx, ep)().Status.SecretHash }).Should(Equal(rotated.Status.SecretHash), "one rotation per value")
		Expect(eventsFor(ctx, rotated, agentsv1alpha1.EventSecretRotated)()).To(HaveLen(1))
	})

	It("keeps no secret for an unauthenticated endpoint and generates one at once when a secret is added", func(ctx SpecContext) {
		ep := newEndpoint(ns, "status-page", "triage")
		ep.Spec.AllowUnauthenticated = true
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		Expect(got.Status.SecretHash).To(BeEmpty())
		Expect(got.Status.AuthMode).To(Equal(agentsv1alpha1.AuthNone))
		Expect(conditionOf(got.Status.Conditions, agentsv1alpha1.ConditionSecretReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAuthenticationDisabled))
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}, &corev1.Secret{})
		Expect(err).To(HaveOccurred(), "no Secret for an unauthenticated endpoint")

		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.AllowUnauthenticated = false
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Eventually(func() string { return endpointState(ctx, ep)().Status.SecretHash }).ShouldNot(BeEmpty())
		withSecret := endpointState(ctx, ep)()
		Expect(withSecret.Status.AuthMode).To(Equal(agentsv1alpha1.AuthSecret))
		Expect(withSecret.Status.SecretHash).To(Equal(sha256Hex(generatedSecret(ctx, withSecret).Data[agentsv1alpha1.WebhookSecretKey])))

		// Back to unauthenticated: the hash and the generated Secret go.
		patch = client.MergeFrom(withSecret.DeepCopy())
		withSecret.Spec.AllowUnauthenticated = true
		Expect(k8sClient.Patch(ctx, withSecret, patch)).To(Succeed())
		Eventually(func() string { return endpointState(ctx, ep)().Status.SecretHash }).Should(BeEmpty())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}, &corev1.Secret{})
		}).Should(HaveOccurred())
	})

	It("keeps working from the hash when the generated Secret is deleted, and says so", func(ctx SpecContext) {
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		Expect(k8sClient.Delete(ctx, generatedSecret(ctx, got))).To(Succeed())

		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(And(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonGeneratedSecretDeleted),
			HaveField("Message", ContainSubstring("still accepts the secret it had"))))
		Consistently(func() string { return endpointState(ctx, ep)().Status.SecretHash }).Should(Equal(got.Status.SecretHash))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}, &corev1.Secret{})).NotTo(Succeed(),
			"the operator must not silently regenerate the secret")
		Expect(conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
	})

	It("hashes a secret brought with secretRef, follows its changes and refuses short ones", func(ctx SpecContext) {
		own := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitops-secret", Labels: referableLabels()},
			Data:       map[string][]byte{"token": []byte(strings.Repeat("k", 40))},
		}
		Expect(k8sClient.Create(ctx, own)).To(Succeed())
		ep := newEndpoint(ns, "github-issues", "triage")
		ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "gitops-secret", Key: "token"}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		Expect(got.Status.SecretHash).To(Equal(sha256Hex([]byte(strings.Repeat("k", 40)))))
		Expect(got.Status.SecretName).To(Equal("gitops-secret"))
		Expect(conditionOf(got.Status.Conditions, agentsv1alpha1.ConditionSecretReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonSecretFromRef))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}, &corev1.Secret{})).NotTo(Succeed(),
			"no Secret is generated when one is brought")

		own.Data["token"] = []byte(strings.Repeat("n", 64))
		Expect(k8sClient.Update(ctx, own)).To(Succeed())
		Eventually(func() string { return endpointState(ctx, ep)().Status.SecretHash }).Should(Equal(sha256Hex([]byte(strings.Repeat("n", 64)))))

		own.Data["token"] = []byte("too-short")
		Expect(k8sClient.Update(ctx, own)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretTooShort), HaveField("Message", ContainSubstring("holds 9 bytes"))))
		short := endpointState(ctx, ep)()
		Expect(short.Status.SecretHash).To(BeEmpty(), "a short secret must not be accepted")
		Expect(conditionOf(short.Status.Conditions, agentsv1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretTooShort))

		Expect(k8sClient.Delete(ctx, own)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotFound))
	})

	It("pauses and resumes with spec.paused", func(ctx SpecContext) {
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.Paused = true
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			cur := endpointState(ctx, ep)()
			g.Expect(cur.Status.Phase).To(Equal(agentsv1alpha1.EndpointPaused))
			g.Expect(cur.Status.PauseReason).To(Equal(agentsv1alpha1.PauseReasonPaused))
			// Paused as asked: Ready (kstatus Current), the reason says paused.
			g.Expect(conditionOf(cur.Status.Conditions, agentsv1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonPaused))
		}).Should(Succeed())

		cur := endpointState(ctx, ep)()
		patch = client.MergeFrom(cur.DeepCopy())
		cur.Spec.Paused = false
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		resumed := readyEndpoint(ctx, ep)
		Expect(resumed.Status.Phase).To(Equal(agentsv1alpha1.EndpointActive))
		Expect(resumed.Status.PauseReason).To(BeEmpty())
		Expect(resumed.Status.EndpointID).To(Equal(got.Status.EndpointID))
		Expect(resumed.Status.SecretHash).To(Equal(got.Status.SecretHash))
	})

	Describe("a pause because the owner is no longer a member", func() {
		grantTrigger := func(ctx SpecContext, user string) {
			GinkgoHelper()
			role := &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-user"},
				Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"agents.hookrun.dev"}, Resources: []string{"agents"}, Verbs: []string{"trigger"}}},
			}
			Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, role))).To(Succeed())
			Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-user-" + strings.ReplaceAll(strings.Split(user, "@")[0], ".", "-")},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "agent-user"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
			})).To(Succeed())
		}
		stateOf := func(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) func() agentsv1alpha1.PauseReason {
			return func() agentsv1alpha1.PauseReason { return endpointState(ctx, ep)().Status.PauseReason }
		}

		It("pauses for a skipped run while the owner is not a member and lifts when the owner is one again", func(ctx SpecContext) {
			ep := newEndpoint(ns, "github-issues", "triage")
			Expect(k8sClient.Create(ctx, ep)).To(Succeed())
			readyEndpoint(ctx, ep)
			skipped := recordOwnerSkip(ctx, ep)
			Eventually(func() *metav1.Condition {
				return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)
			}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonOwnerNotMember))
			Expect(endpointState(ctx, ep)().Status.Phase).To(Equal(agentsv1alpha1.EndpointPaused))
			Eventually(eventsFor(ctx, ep, agentsv1alpha1.EventOwnerNotMember)).Should(ConsistOf(And(
				HaveField("Type", corev1.EventTypeWarning),
				HaveField("Note", ContainSubstring("the owner alice@example.com may no longer trigger Agent triage")))))
			fakeClock.Step(11 * time.Second) // past the membership cache
			Consistently(stateOf(ctx, ep), 2*time.Second).Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
			Expect(endpointState(ctx, ep)().Status.Phase).To(Equal(agentsv1alpha1.EndpointPaused))

			grantTrigger(ctx, "alice@example.com")
			fakeClock.Step(11 * time.Second)
			// The slow periodic re-check notices without any change to the endpoint.
			Eventually(stateOf(ctx, ep)).Should(BeEmpty())
			resumed := readyEndpoint(ctx, ep)
			Expect(resumed.Status.Phase).To(Equal(agentsv1alpha1.EndpointActive))
			Expect(resumed.Status.OwnerNotMemberHandledUntil).To(HaveField("Time", BeTemporally("==", skipped.Spec.ReceivedAt.Time)))
			Eventually(eventsFor(ctx, ep, agentsv1alpha1.EventMembershipRestored)).Should(HaveLen(1))

			// Alice leaves again: the handled run does not pause the endpoint,
			// the next skipped call does.
			Expect(k8sClient.Delete(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-user-alice"}})).To(Succeed())
			fakeClock.Step(11 * time.Second)
			Consistently(stateOf(ctx, ep), 2*time.Second).Should(BeEmpty())
			recordOwnerSkip(ctx, ep)
			Eventually(stateOf(ctx, ep)).Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
		})

		It("lifts when another member takes ownership, and the old owner's skipped runs do not pause it again", func(ctx SpecContext) {
			ep := newEndpoint(ns, "github-issues", "triage")
			Expect(k8sClient.Create(ctx, ep)).To(Succeed())
			readyEndpoint(ctx, ep)
			grantTrigger(ctx, "bob@example.com")
			recordOwnerSkip(ctx, ep)
			Eventually(stateOf(ctx, ep)).Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
			fakeClock.Step(11 * time.Second)
			Consistently(stateOf(ctx, ep), time.Second).Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))

			alice := endpointState(ctx, ep)().Spec.Owner
			setOwner := func(owner *agentsv1alpha1.Owner) {
				GinkgoHelper()
				cur := endpointState(ctx, ep)()
				patch := client.MergeFrom(cur.DeepCopy())
				cur.Spec.Owner = owner
				Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
			}
			setOwner(&agentsv1alpha1.Owner{User: "bob@example.com"})
			Eventually(stateOf(ctx, ep)).Should(BeEmpty())
			Expect(endpointState(ctx, ep)().Status.Phase).To(Equal(agentsv1alpha1.EndpointActive))

			// Alice (still not a member) is made the owner again, exactly as
			// she was: her skipped run came before the owner changed and is
			// handled.
			setOwner(alice)
			Eventually(func() int64 { return endpointState(ctx, ep)().Status.ObservedGeneration }).Should(Equal(endpointState(ctx, ep)().Generation))
			Consistently(stateOf(ctx, ep), 2*time.Second).Should(BeEmpty())
		})

		It("lets the owner-not-member pause win over the owner's own, which stays when it lifts", func(ctx SpecContext) {
			ep := newEndpoint(ns, "github-issues", "triage")
			ep.Spec.Paused = true
			Expect(k8sClient.Create(ctx, ep)).To(Succeed())
			Eventually(stateOf(ctx, ep)).Should(Equal(agentsv1alpha1.PauseReasonPaused))
			recordOwnerSkip(ctx, ep)
			Eventually(stateOf(ctx, ep)).Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
			grantTrigger(ctx, "alice@example.com")
			fakeClock.Step(11 * time.Second)
			Eventually(stateOf(ctx, ep)).Should(Equal(agentsv1alpha1.PauseReasonPaused))
			Expect(endpointState(ctx, ep)().Status.Phase).To(Equal(agentsv1alpha1.EndpointPaused))
		})

		It("is not paused by a skipped run of an endpoint deleted before under its name", func(ctx SpecContext) {
			// Unauthenticated: envtest has no garbage collector, and the old
			// endpoint's generated Secret would stay and block the new one's.
			old := newEndpoint(ns, "again", "triage")
			old.Spec.AllowUnauthenticated = true
			Expect(k8sClient.Create(ctx, old)).To(Succeed())
			readyEndpoint(ctx, old)
			recordOwnerSkip(ctx, old)
			Eventually(stateOf(ctx, old)).Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
			Expect(k8sClient.Delete(ctx, old)).To(Succeed())
			gone := func() error {
				return k8sClient.Get(ctx, client.ObjectKeyFromObject(old), &agentsv1alpha1.WebhookEndpoint{})
			}
			Eventually(gone).Should(Satisfy(apierrors.IsNotFound))

			// The old run stays, as it may for a while in a cluster.
			fresh := newEndpoint(ns, "again", "triage")
			fresh.Spec.AllowUnauthenticated = true
			Expect(k8sClient.Create(ctx, fresh)).To(Succeed())
			Expect(readyEndpoint(ctx, fresh).Status.Phase).To(Equal(agentsv1alpha1.EndpointActive))
			runs := &agentsv1alpha1.AgentRunList{}
			Expect(k8sClient.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "again"})).To(Succeed())
			Expect(runs.Items).To(HaveLen(1))
			Consistently(stateOf(ctx, fresh), 2*time.Second).Should(BeEmpty())
		})
	})

	It("never gets an owner reference, also when it moves to another Agent (the Agent's finalizer deletes it)", func(ctx SpecContext) {
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		readyEndpoint(ctx, ep)
		other := newAgent(ns, "other")
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		cur := endpointState(ctx, ep)()
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.AgentRef.Name = "other"
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionAgentReady)
		}).Should(HaveField("Message", ContainSubstring(`"other"`)))
		Consistently(func() []metav1.OwnerReference { return endpointState(ctx, ep)().OwnerReferences }).Should(BeEmpty())
	})

	It("never replaces an ID or a secret from a cached copy that is behind the API server", func(ctx SpecContext) {
		ep := newEndpoint(ns, "stale", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		asCreated := ep.DeepCopy() // what a cache still shows if it missed every write since
		ready := readyEndpoint(ctx, ep)
		secret := generatedSecret(ctx, ep).Data["secret"]

		reconcileBehind(ctx, asCreated)
		now := endpointState(ctx, ep)()
		Expect(now.Status.EndpointID).To(Equal(ready.Status.EndpointID))
		Expect(now.Status.SecretHash).To(Equal(ready.Status.SecretHash))
		Expect(generatedSecret(ctx, ep).Data["secret"]).To(Equal(secret), "the Secret keeps the value whose hash is in status")

		// The owner deleted the generated Secret (the endpoint keeps its
		// hash): a copy that far behind must not leave a new Secret whose
		// value does not match the hash.
		Expect(k8sClient.Delete(ctx, generatedSecret(ctx, ep))).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonGeneratedSecretDeleted))
		reconcileBehind(ctx, asCreated)
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}, &corev1.Secret{})).
			To(Satisfy(apierrors.IsNotFound), "no Secret with a value whose hash is not in status")
		Expect(endpointState(ctx, ep)().Status.SecretHash).To(Equal(ready.Status.SecretHash))
	})

	It("does not overwrite a Secret of the generated name that is not its own", func(ctx SpecContext) {
		foreign := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "github-issues-webhook-secret"},
			Data:       map[string][]byte{"secret": []byte("someone else's")},
		}
		Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNameTaken))
		Expect(endpointState(ctx, ep)().Status.SecretHash).To(BeEmpty())
		Expect(get(ctx, foreign).Data["secret"]).To(Equal([]byte("someone else's")))

		Expect(k8sClient.Delete(ctx, foreign)).To(Succeed())
		readyEndpoint(ctx, ep)
	})

	It("explains a missing or archived agent", func(ctx SpecContext) {
		ep := newEndpoint(ns, "orphan", "no-such-agent")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		Eventually(func(g Gomega) {
			cur := endpointState(ctx, ep)()
			g.Expect(conditionOf(cur.Status.Conditions, agentsv1alpha1.ConditionAgentReady)).To(And(
				haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound),
				HaveField("Message", ContainSubstring(`Agent "no-such-agent" does not exist`))))
			g.Expect(conditionOf(cur.Status.Conditions, agentsv1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound))
			g.Expect(cur.Status.EndpointID).NotTo(BeEmpty(), "the ID is generated whatever else is wrong")
		}).Should(Succeed())

		Expect(k8sClient.Create(ctx, newAgent(ns, "no-such-agent"))).To(Succeed())
		readyEndpoint(ctx, ep)

		agent := get(ctx, newAgent(ns, "no-such-agent"))
		patch := client.MergeFrom(agent.DeepCopy())
		agent.Spec.Archived = true
		Expect(k8sClient.Patch(ctx, agent, patch)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionAgentReady)
		}).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonAgentArchived))
	})

	It("explains a missing thread or a thread of another agent", func(ctx SpecContext) {
		ep := newEndpoint(ns, "alerts", "triage")
		ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
		ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		threadCond := func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionThreadReady)
		}
		Eventually(threadCond).Should(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonThreadNotFound))

		Expect(k8sClient.Create(ctx, newAgent(ns, "other"))).To(Succeed())
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "other"}},
		})).To(Succeed())
		Eventually(threadCond).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonThreadOfAnotherAgent),
			HaveField("Message", ContainSubstring(`belongs to Agent "other", not to "triage"`))))

		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops-triage"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
		})).To(Succeed())
		cur := endpointState(ctx, ep)()
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.TargetThreadRef.Name = "ops-triage"
		Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
		Eventually(threadCond).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonThreadFound))
		readyEndpoint(ctx, ep)
	})
})
