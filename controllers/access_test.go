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
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/test/testenv"
)

// patchStatus patches the status of obj (read fresh into it) as c, with
// mutate's change.
func patchStatus[T client.Object](ctx context.Context, c client.Client, obj T, mutate func(T), opts ...client.SubResourcePatchOption) error {
	GinkgoHelper()
	cur := get(ctx, obj)
	orig, ok := cur.DeepCopyObject().(T)
	Expect(ok).To(BeTrue())
	mutate(cur)
	return c.Status().Patch(ctx, cur, client.MergeFrom(orig), opts...)
}

// The admission policies of config/policies and the roles of config/rbac,
// installed by the suite, against users impersonated on the real API server.
// They run once more on an API server without MutatingAdmissionPolicy, in
// the owner-required mode (access_required_test.go).
var _ = Describe("access control", accessControlSpecs)

// accessControlSpecs are the specs of access control, in the suite's
// owner-defaulting mode (ownerDefaulting).
func accessControlSpecs() {
	const (
		alice = "alice@example.com" // a member; owns the endpoints
		bob   = "bob@example.com"   // another member
		carol = "carol@example.com" // may edit endpoints (hookrun-edit) but is no member
		dave  = "dave@example.com"  // in the hookrun-admins group
	)
	var ns string

	as := func(user string, groups ...string) client.Client {
		GinkgoHelper()
		c, err := client.New(testenv.AsUser(cfg, user, groups...), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		return c
	}
	bind := func(ctx SpecContext, role, user string) *rbacv1.RoleBinding {
		GinkgoHelper()
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: role + "-"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		Expect(k8sClient.Create(ctx, rb)).To(Succeed())
		return rb
	}
	// refusedBy matches a refusal by admission policy carrying msg.
	refusedBy := func(policy, msg string) OmegaMatcher {
		return And(
			WithTransform(apierrors.IsForbidden, BeTrue()),
			WithTransform(func(err error) string { return err.Error() }, And(ContainSubstring(policy), ContainSubstring(msg))),
		)
	}
	// forbidden matches a refusal by the ownership policy carrying msg.
	forbidden := func(msg string) OmegaMatcher { return refusedBy("hookrun-endpoint-ownership", msg) }
	// notTheCreator matches the refusal of an endpoint created by user for
	// someone else, in the suite's mode.
	notTheCreator := func(user string) OmegaMatcher {
		if ownerDefaulting == clusterinstall.OwnerDefaultingRequired {
			return refusedBy("hookrun-endpoint-owner", "spec.owner.user must be you: set it to your user name, "+user+
				"; only hookrun admins create endpoints for someone else")
		}
		return refusedBy("hookrun-endpoint-owner", "spec.owner.user must be you ("+user+"): leave spec.owner empty and you "+
			"become the owner; only hookrun admins create endpoints for someone else")
	}
	// mayGetSecret lets user get Secret name of the spec's namespace, and nothing else.
	mayGetSecret := func(ctx SpecContext, user, name string) {
		GinkgoHelper()
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "get-" + name + "-"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{name}, Verbs: []string{"get"}}},
		}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})).To(Succeed())
	}
	// labelledSecret is a Secret marked for hookrun, created by the admin.
	labelledSecret := func(ctx SpecContext, name string) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: referableLabels()},
			Data:       map[string][]byte{"token": []byte(strings.Repeat("t", 40))},
		})).To(Succeed())
	}
	endpoint := func(name string, owner *agentsv1alpha1.Owner) *agentsv1alpha1.WebhookEndpoint {
		ep := newEndpoint(ns, name, "triage")
		ep.Spec.Owner = owner
		return ep
	}
	// aliceEndpoint is an endpoint alice created herself.
	aliceEndpoint := func(ctx SpecContext, name string) *agentsv1alpha1.WebhookEndpoint {
		GinkgoHelper()
		ep := endpoint(name, creatorOwner(alice, "team-a"))
		Expect(as(alice, "team-a").Create(ctx, ep)).To(Succeed())
		return ep
	}
	// change patches the fields mutate changes (no resourceVersion: the
	// operator writes the endpoint too).
	change := func(ctx SpecContext, c client.Client, ep *agentsv1alpha1.WebhookEndpoint, mutate func(*agentsv1alpha1.WebhookEndpoint)) error {
		cur := get(ctx, ep.DeepCopy())
		patch := client.MergeFrom(cur.DeepCopy())
		mutate(cur)
		return c.Patch(ctx, cur, patch)
	}
	rotate := func(ep *agentsv1alpha1.WebhookEndpoint) {
		ep.SetAnnotations(map[string]string{agentsv1alpha1.AnnotationRotateSecret: time.Now().String()})
	}
	newPrompt := func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Prompt = "Summarize this." }

	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		bind(ctx, "hookrun-agent-user", alice)
		bind(ctx, "hookrun-agent-user", bob)
		bind(ctx, "hookrun-edit", carol)
		bind(ctx, "hookrun-edit", dave) // RBAC lets dave write; the policy exempts his group
		awaitOwnerPolicies(ctx, as(alice, "team-a"), endpoint("probe", nil))
		Eventually(func() error {
			return as(bob).Create(ctx, endpoint("probe", &agentsv1alpha1.Owner{User: alice}), client.DryRunAll)
		}).Should(notTheCreator(bob))
	})

	It("makes the creator the owner, with the creator's groups", func(ctx SpecContext) {
		if ownerDefaulting == clusterinstall.OwnerDefaultingRequired {
			Expect(as(alice, "team-a").Create(ctx, endpoint("unowned", nil))).To(refusedBy("hookrun-endpoint-owner",
				"spec.owner is required on this cluster, which does not fill it in: set spec.owner.user to your user name, "+alice+
					" (spec.owner.groups may list groups you belong to, for membership through a group)"))
		}
		ep := aliceEndpoint(ctx, "mine")
		Expect(get(ctx, ep).Spec.Owner).To(Equal(&agentsv1alpha1.Owner{User: alice, Groups: []string{"team-a", "system:authenticated"}}))
	})

	It("accepts the owner's edits, rotation and delete", func(ctx SpecContext) {
		ep := aliceEndpoint(ctx, "mine")
		Expect(change(ctx, as(alice, "team-a"), ep, newPrompt)).To(Succeed())
		Expect(change(ctx, as(alice, "team-a"), ep, rotate)).To(Succeed())
		Expect(as(alice, "team-a").Delete(ctx, ep)).To(Succeed())
	})

	It("refuses another member's edit, rotation and delete, naming the owner", func(ctx SpecContext) {
		ep := aliceEndpoint(ctx, "mine")
		Expect(change(ctx, as(bob), ep, newPrompt)).To(forbidden("only the owner (alice@example.com) can change this endpoint's spec"))
		Expect(change(ctx, as(bob), ep, rotate)).To(forbidden("only the owner (alice@example.com) can rotate this endpoint's secret"))
		Expect(as(bob).Delete(ctx, ep)).To(forbidden("only the owner (alice@example.com) or a hookrun admin can delete this endpoint"))
		Expect(change(ctx, as(bob), ep, func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "0000"}}
		})).To(forbidden("only the owner (alice@example.com) can change this endpoint's ownerReferences or finalizers"),
			"a dangling owner reference would have the garbage collector delete the endpoint")
		Expect(change(ctx, as(bob), ep, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Finalizers = []string{"example.com/stuck"} })).
			To(forbidden("ownerReferences or finalizers"))
		Expect(change(ctx, as(bob), ep, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Labels = map[string]string{"team": "b"} })).
			To(Succeed(), "labels are not the owner's alone")
	})

	It("lets only the owner change kubectl's last-applied-configuration, which the owner's next apply is merged against", func(ctx SpecContext) {
		ep := aliceEndpoint(ctx, "mine")
		lastApplied := func(spec string) func(*agentsv1alpha1.WebhookEndpoint) {
			return func(ep *agentsv1alpha1.WebhookEndpoint) {
				ep.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":` + spec + `}`})
			}
		}
		Expect(change(ctx, as(alice, "team-a"), ep, lastApplied(`{"prompt":"Triage this."}`))).To(Succeed())
		Expect(change(ctx, as(bob), ep, lastApplied(`{"prompt":"Triage this.","sender":{"events":["push"]}}`))).
			To(forbidden("only the owner (alice@example.com) can change this endpoint's kubectl.kubernetes.io/last-applied-configuration annotation"))
		Expect(change(ctx, as(bob), ep, func(ep *agentsv1alpha1.WebhookEndpoint) {
			delete(ep.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
		})).To(forbidden("last-applied-configuration"), "removing it changes it too")
		Expect(change(ctx, as(dave, "hookrun-admins"), ep, lastApplied(`{}`))).To(Succeed(), "admins are exempt")
	})

	It("refuses an owner other than the creator, and groups the creator does not hold", func(ctx SpecContext) {
		Expect(as(bob).Create(ctx, endpoint("for-alice", &agentsv1alpha1.Owner{User: alice}))).To(notTheCreator(bob))
		Expect(as(alice, "team-a").Create(ctx, endpoint("grabby", &agentsv1alpha1.Owner{User: alice, Groups: []string{"team-a", "platform-admins"}}))).
			To(forbidden("spec.owner.groups may only name groups you belong to; you are not in: platform-admins"))
		Expect(as(alice, "team-a").Create(ctx, endpoint("modest", &agentsv1alpha1.Owner{User: alice, Groups: []string{"team-a"}}))).To(Succeed())
		ep := &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "modest"}}
		Expect(change(ctx, as(alice, "team-a"), ep, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Owner.Groups = []string{"platform-admins"} })).
			To(forbidden("you are not in: platform-admins"))
	})

	It("refuses endpoints for an Agent the creator may not trigger: without trigger one is no member", func(ctx SpecContext) {
		Expect(as(carol).Create(ctx, endpoint("nope", creatorOwner(carol)))).
			To(forbidden("you may not trigger Agent triage in namespace " + ns))
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: carol, Groups: []string{"system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: "trigger", Group: agentsv1alpha1.GroupVersion.Group, Resource: "agents", Name: "triage",
			},
		}}
		Expect(k8sClient.Create(ctx, review)).To(Succeed())
		Expect(review.Status.Allowed).To(BeFalse(), "hookrun-edit alone does not make carol a member")
	})

	It("lets a member take ownership only while the owner is no longer a member", func(ctx SpecContext) {
		ep := aliceEndpoint(ctx, "handover")
		readyEndpoint(ctx, ep)
		claim := func(user string) func(*agentsv1alpha1.WebhookEndpoint) {
			return func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Owner = &agentsv1alpha1.Owner{User: user} }
		}
		Expect(change(ctx, as(bob), ep, claim(bob))).
			To(forbidden("this endpoint is owned by alice@example.com; you can take ownership only while it is paused with pauseReason OwnerNotMember"))
		Expect(change(ctx, as(bob), ep, claim(carol))).
			To(forbidden("spec.owner can only be set to yourself (bob@example.com)"))

		// Alice leaves; the receiver records the next call as skipped and
		// the operator pauses the endpoint.
		rbs := &rbacv1.RoleBindingList{}
		Expect(k8sClient.List(ctx, rbs, client.InNamespace(ns))).To(Succeed())
		for i := range rbs.Items {
			if rbs.Items[i].Subjects[0].Name == alice {
				Expect(k8sClient.Delete(ctx, &rbs.Items[i])).To(Succeed())
			}
		}
		fakeClock.Step(11 * time.Second) // past the operator's membership cache
		recordOwnerSkip(ctx, ep)
		Eventually(func() agentsv1alpha1.PauseReason { return get(ctx, ep.DeepCopy()).Status.PauseReason }).
			Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
		Consistently(func() agentsv1alpha1.PauseReason { return get(ctx, ep.DeepCopy()).Status.PauseReason }, time.Second).
			Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))

		Expect(change(ctx, as(carol), ep, claim(carol))).
			To(forbidden("you can take ownership only as a member of Agent triage"))
		Expect(k8sClient.Create(ctx, newAgent(ns, "other"))).To(Succeed())
		Expect(change(ctx, as(bob, "team-b"), ep, func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Owner = &agentsv1alpha1.Owner{User: bob}
			ep.Spec.AgentRef.Name = "other"
		})).To(forbidden("take ownership first, then change spec.agentRef"), "a takeover cannot move the URL to another Agent")
		claimKeepingGroups := func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Owner.User = bob }
		if ownerDefaulting == clusterinstall.OwnerDefaultingRequired {
			// Nothing replaces alice's groups: bob names his own, or none.
			Expect(change(ctx, as(bob, "team-b"), ep, claimKeepingGroups)).To(forbidden("spec.owner.groups may only name groups you belong to; " +
				"you are not in: team-a (taking ownership, set spec.owner.groups to groups of yours, or remove it)"))
			Expect(change(ctx, as(bob, "team-b"), ep, func(ep *agentsv1alpha1.WebhookEndpoint) {
				ep.Spec.Owner = &agentsv1alpha1.Owner{User: bob, Groups: []string{"team-b", "system:authenticated"}}
			})).To(Succeed())
		} else {
			// Bob claims with his name only; his groups replace alice's.
			Expect(change(ctx, as(bob, "team-b"), ep, claimKeepingGroups)).To(Succeed())
		}
		Expect(get(ctx, ep.DeepCopy()).Spec.Owner).To(Equal(&agentsv1alpha1.Owner{User: bob, Groups: []string{"team-b", "system:authenticated"}}))
		fakeClock.Step(11 * time.Second)
		Eventually(func() agentsv1alpha1.EndpointPhase { return get(ctx, ep.DeepCopy()).Status.Phase }).
			Should(Equal(agentsv1alpha1.EndpointActive), "the operator lifts the pause: the new owner is a member")
		Expect(change(ctx, as(bob, "team-b"), ep, newPrompt)).To(Succeed(), "bob is the owner now")
		Expect(change(ctx, as(alice, "team-a"), ep, newPrompt)).To(HaveOccurred(), "alice is not")
	})

	It("exempts the admin group, the operator and kube-system's controllers", func(ctx SpecContext) {
		ep := aliceEndpoint(ctx, "mine")
		Expect(change(ctx, as(dave, "hookrun-admins"), ep, newPrompt)).To(Succeed())
		Expect(change(ctx, as(dave, "hookrun-admins"), ep, rotate)).To(Succeed())
		Expect(as(dave, "hookrun-admins").Create(ctx, endpoint("for-alice", &agentsv1alpha1.Owner{User: alice, Groups: []string{"team-a"}}))).To(Succeed())
		unowned := endpoint("unowned", nil)
		Expect(as(dave, "hookrun-admins").Create(ctx, unowned)).To(Succeed())
		if ownerDefaulting == clusterinstall.OwnerDefaultingRequired {
			Expect(unowned.Spec.Owner).To(BeNil(), "an exempt creator may leave the owner out; a member may take the endpoint over")
		} else {
			Expect(unowned.Spec.Owner.User).To(Equal(dave), "the owner is filled in for admins too")
		}
		operator := as("system:serviceaccount:"+clusterinstall.Namespace+":"+clusterinstall.OperatorServiceAccount,
			"system:serviceaccounts", "system:serviceaccounts:"+clusterinstall.Namespace)
		Expect(change(ctx, operator, ep, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Prompt = "From the operator." })).To(Succeed())
		gc := as("system:serviceaccount:kube-system:generic-garbage-collector", "system:serviceaccounts", "system:serviceaccounts:kube-system")
		Expect(gc.Delete(ctx, ep)).To(Succeed())
		Expect(as(dave, "hookrun-admins").Delete(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "for-alice"}})).To(Succeed())
	})

	It("lets only someone who may read an Agent's token Secret name it or change the URL it is sent to", func(ctx SpecContext) {
		const erin = "erin@example.com" // edits Agents, and may read the token
		bind(ctx, "hookrun-edit", erin)
		labelledSecret(ctx, "triage-token")
		mayGetSecret(ctx, erin, "triage-token")
		changeAgent := func(c client.Client, mutate func(*agentsv1alpha1.Agent)) error {
			return patchTriage(ctx, c, ns, mutate)
		}
		useToken := func(a *agentsv1alpha1.Agent) {
			a.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "triage-token", Key: "token"}
		}
		moveTo := func(url string) func(*agentsv1alpha1.Agent) {
			return func(a *agentsv1alpha1.Agent) { a.Spec.A2A.URL = url }
		}
		const policy = "hookrun-secret-references"

		Eventually(func() error { return changeAgent(as(carol), useToken) }).
			Should(refusedBy(policy, "you may not read Secret triage-token in namespace "+ns+", so you may not name it in spec.a2a.authSecretRef"))
		withToken := newAgent(ns, "other")
		useToken(withToken)
		Expect(as(carol).Create(ctx, withToken)).To(refusedBy(policy, "you may not read Secret triage-token"))
		Expect(changeAgent(as(erin), useToken)).To(Succeed(), "erin may read the token")

		Expect(changeAgent(as(carol), moveTo("https://attacker.example.com/"))).
			To(refusedBy(policy, "so you may not change spec.a2a.url, where its token is sent"))
		Expect(changeAgent(as(carol), func(a *agentsv1alpha1.Agent) { a.Spec.DisplayName = "Triage" })).
			To(Succeed(), "other fields are anyone's with edit rights")
		Expect(changeAgent(as(erin), moveTo("https://triage.example.com/"))).To(Succeed())
		Expect(changeAgent(as(dave, "hookrun-admins"), moveTo("https://triage2.example.com/"))).To(Succeed(), "admins are exempt")
		Expect(changeAgent(as(carol), func(a *agentsv1alpha1.Agent) {
			a.Spec.A2A.AuthSecretRef = nil
			a.Spec.A2A.URL = "https://elsewhere.example.com/"
		})).To(Succeed(), "without a token the URL is no secret's")
	})

	It("lets only someone who may read an Agent's TLS Secrets name them or change the URL its client certificate goes to", func(ctx SpecContext) {
		const erin = "erin@example.com" // edits Agents, and may read the TLS Secrets
		bind(ctx, "hookrun-edit", erin)
		for _, name := range []string{"triage-ca", "triage-client"} {
			labelledSecret(ctx, name)
			mayGetSecret(ctx, erin, name)
		}
		changeAgent := func(c client.Client, mutate func(*agentsv1alpha1.Agent)) error {
			return patchTriage(ctx, c, ns, mutate)
		}
		useTLS := func(ca, cert string) func(*agentsv1alpha1.Agent) {
			return func(a *agentsv1alpha1.Agent) {
				a.Spec.A2A.URL = "https://triage.example.com/"
				a.Spec.A2A.TLS = &agentsv1alpha1.A2ATLS{}
				if ca != "" {
					a.Spec.A2A.TLS.CASecretRef = &agentsv1alpha1.SecretKeyReference{Name: ca, Key: "ca.crt"}
				}
				if cert != "" {
					a.Spec.A2A.TLS.ClientCertSecretRef = &agentsv1alpha1.SecretReference{Name: cert}
				}
			}
		}
		const policy = "hookrun-secret-references"

		Eventually(func() error { return changeAgent(as(carol), useTLS("triage-ca", "")) }).
			Should(refusedBy(policy, "you may not read Secret triage-ca in namespace "+ns+", so you may not name it in spec.a2a.tls.caSecretRef"))
		Expect(changeAgent(as(carol), useTLS("", "triage-client"))).
			To(refusedBy(policy, "you may not read Secret triage-client in namespace "+ns+", so you may not name it in spec.a2a.tls.clientCertSecretRef"))
		Expect(changeAgent(as(erin), useTLS("triage-ca", "triage-client"))).To(Succeed(), "erin may read both")

		Expect(changeAgent(as(carol), func(a *agentsv1alpha1.Agent) { a.Spec.A2A.URL = "https://attacker.example.com/" })).
			To(refusedBy(policy, "so you may not change spec.a2a.url, where its client certificate is presented"))
		Expect(changeAgent(as(carol), func(a *agentsv1alpha1.Agent) { a.Spec.DisplayName = "Triage" })).
			To(Succeed(), "other fields are anyone's with edit rights")
		Expect(changeAgent(as(carol), func(a *agentsv1alpha1.Agent) {
			a.Spec.A2A.TLS.ClientCertSecretRef = nil
			a.Spec.A2A.URL = "https://elsewhere.example.com/"
		})).To(Succeed(), "without a client certificate the URL is no secret's, and the CA named before stays")
	})

	It("lets only someone who may read a Secret name it in an endpoint's secretRef", func(ctx SpecContext) {
		labelledSecret(ctx, "gitops-secret")
		mayGetSecret(ctx, bob, "gitops-secret")
		withRef := func(name, creator string) *agentsv1alpha1.WebhookEndpoint {
			ep := endpoint(name, creatorOwner(creator))
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "gitops-secret", Key: "token"}
			return ep
		}
		const policy = "hookrun-secret-references"
		Eventually(func() error { return as(alice, "team-a").Create(ctx, withRef("alices", alice), client.DryRunAll) }).
			Should(refusedBy(policy, "you may not read Secret gitops-secret in namespace "+ns+", so you may not name it in spec.secretRef"))
		Expect(as(bob).Create(ctx, withRef("bobs", bob))).To(Succeed(), "bob may read the Secret")

		ep := aliceEndpoint(ctx, "mine")
		Expect(change(ctx, as(alice, "team-a"), ep, func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "gitops-secret", Key: "token"}
		})).To(refusedBy(policy, "so you may not name it in spec.secretRef"), "the owner too must be able to read it")
		Expect(change(ctx, as(bob), &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bobs"}},
			func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.SecretRef = nil })).To(Succeed(), "dropping a reference needs nothing")
	})

	It("lets only someone who may read a Secret name it in an endpoint's endpointIDSecretRef, whose value becomes the ID in status", func(ctx SpecContext) {
		labelledSecret(ctx, "pinned-id")
		mayGetSecret(ctx, bob, "pinned-id")
		withIDRef := func(name, creator string) *agentsv1alpha1.WebhookEndpoint {
			ep := endpoint(name, creatorOwner(creator))
			ep.Spec.EndpointIDSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "pinned-id", Key: "token"}
			return ep
		}
		const policy = "hookrun-secret-references"
		Eventually(func() error { return as(alice, "team-a").Create(ctx, withIDRef("alices", alice), client.DryRunAll) }).
			Should(refusedBy(policy, "you may not read Secret pinned-id in namespace "+ns+", so you may not name it in spec.endpointIDSecretRef"))
		Expect(as(bob).Create(ctx, withIDRef("bobs", bob))).To(Succeed(), "bob may read the Secret")
		Expect(change(ctx, as(bob), &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bobs"}},
			func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.EndpointIDSecretRef = nil })).To(Succeed(), "dropping a reference needs nothing")
	})

	It("lets only the operator and admins write the status of the four kinds, and the receiver that of runs", func(ctx SpecContext) {
		// frank owns the namespace: every verb on every hookrun resource,
		// status included, as a wildcard role gives. So does dave, an admin,
		// and here the receiver too: its own role grants it no endpoint
		// status, and the policy refuses it even with one that does.
		const frank = "frank@example.com"
		everything := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hookrun-everything"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{agentsv1alpha1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		}
		Expect(k8sClient.Create(ctx, everything)).To(Succeed())
		receiverName := "system:serviceaccount:" + clusterinstall.Namespace + ":" + clusterinstall.ReceiverServiceAccount
		for _, user := range []string{frank, dave, receiverName} {
			Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "everything-"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: everything.Name},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
			})).To(Succeed())
		}
		victim := aliceEndpoint(ctx, "victim")
		readyEndpoint(ctx, victim)
		thread := &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
		}
		Expect(k8sClient.Create(ctx, thread)).To(Succeed())
		run := &agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "victim-run"},
			Spec: agentsv1alpha1.AgentRunSpec{
				EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "gone"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "gone"},
				Prompt: "Triage this.", ThreadStrategy: agentsv1alpha1.NewThreadEachRun, ReceivedAt: metav1.Now(),
			},
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())

		operator := as("system:serviceaccount:"+clusterinstall.Namespace+":"+clusterinstall.OperatorServiceAccount,
			"system:serviceaccounts", "system:serviceaccounts:"+clusterinstall.Namespace)
		receiver := as(receiverName, "system:serviceaccounts", "system:serviceaccounts:"+clusterinstall.Namespace)
		type writeFunc func(client.Client, ...client.SubResourcePatchOption) error
		for _, c := range []struct {
			resource string
			hijack   writeFunc
			receiver bool // the receiver's role lets it write this status
		}{
			{"webhookendpoints", func(c client.Client, opts ...client.SubResourcePatchOption) error {
				return patchStatus(ctx, c, victim.DeepCopy(), func(ep *agentsv1alpha1.WebhookEndpoint) {
					ep.Status.Phase, ep.Status.PauseReason = agentsv1alpha1.EndpointPaused, agentsv1alpha1.PauseReasonOwnerNotMember
				}, opts...)
			}, false},
			{"agents", func(c client.Client, opts ...client.SubResourcePatchOption) error {
				return patchStatus(ctx, c, newAgent(ns, "triage"), func(a *agentsv1alpha1.Agent) { a.Status.ObservedGeneration = 99 }, opts...)
			}, false},
			{"agentthreads", func(c client.Client, opts ...client.SubResourcePatchOption) error {
				return patchStatus(ctx, c, thread.DeepCopy(), func(th *agentsv1alpha1.AgentThread) { th.Status.ContextID = "stolen" }, opts...)
			}, false},
			{"agentruns", func(c client.Client, opts ...client.SubResourcePatchOption) error {
				return patchStatus(ctx, c, run.DeepCopy(), func(r *agentsv1alpha1.AgentRun) { r.Status.State = agentsv1alpha1.RunSuccess }, opts...)
			}, true},
		} {
			writers := "only hookrun's operator"
			if c.receiver {
				writers = "only hookrun's operator and receiver"
			}
			Eventually(func() error { return c.hijack(as(frank)) }).Should(refusedBy("hookrun-status-writers",
				writers+" (and hookrun admins) write the status of "+c.resource+"; "+frank+" may not"), c.resource)
			// The allowed writers' changes are dry runs: the operator is at work on these objects.
			Expect(c.hijack(operator, client.DryRunAll)).To(Succeed(), c.resource)
			Expect(c.hijack(as(dave, "hookrun-admins"), client.DryRunAll)).To(Succeed(), c.resource)
			if c.receiver {
				Expect(c.hijack(receiver, client.DryRunAll)).To(Succeed(), c.resource)
			} else {
				Expect(c.hijack(receiver, client.DryRunAll)).To(refusedBy("hookrun-status-writers",
					writers+" (and hookrun admins) write the status of "+c.resource+"; "+receiverName+" may not"), c.resource)
			}
		}
		Expect(get(ctx, victim.DeepCopy()).Status.PauseReason).To(BeEmpty(), "no takeover was opened")
	})

	It("lets members see every endpoint and run, and nobody else", func(ctx SpecContext) {
		aliceEndpoint(ctx, "mine")
		Expect(as(bob).List(ctx, &agentsv1alpha1.WebhookEndpointList{}, client.InNamespace(ns))).To(Succeed())
		Expect(as(bob).List(ctx, &agentsv1alpha1.AgentRunList{}, client.InNamespace(ns))).To(Succeed())
		list := &agentsv1alpha1.WebhookEndpointList{}
		Expect(as(bob).List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		err := as("eve@example.com").List(ctx, &agentsv1alpha1.WebhookEndpointList{}, client.InNamespace(ns))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "eve has no role in the namespace: %v", err)
	})

	It("gives the receiver and the operator only what they use", func(ctx SpecContext) {
		allowed := func(user, verb, group, resource, subresource string) bool {
			GinkgoHelper()
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   user,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + clusterinstall.Namespace, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource,
				},
			}}
			Expect(k8sClient.Create(ctx, review)).To(Succeed())
			return review.Status.Allowed
		}
		receiver := "system:serviceaccount:" + clusterinstall.Namespace + ":" + clusterinstall.ReceiverServiceAccount
		operator := "system:serviceaccount:" + clusterinstall.Namespace + ":" + clusterinstall.OperatorServiceAccount
		const g = "agents.hookrun.dev"
		for _, c := range []struct {
			user, verb, group, resource, sub string
			want                             bool
		}{
			{receiver, "create", "", "secrets", "", true},
			{receiver, "get", "", "secrets", "", false},
			{receiver, "list", "", "secrets", "", false},
			{receiver, "watch", "", "secrets", "", false},
			{receiver, "create", g, "agentruns", "", true},
			{receiver, "update", g, "agentruns", "", false},
			{receiver, "patch", g, "agentruns", "status", true},
			{receiver, "patch", g, "webhookendpoints", "status", false}, // the operator alone writes the pause
			{receiver, "patch", g, "webhookendpoints", "", false},
			{receiver, "trigger", g, "agents", "", false},
			{receiver, "list", "", "configmaps", "", false},   // only in its own namespace
			{receiver, "create", "", "configmaps", "", false}, // its rejection report: only in its own namespace
			{receiver, "update", "", "configmaps", "", false},
			{operator, "list", "", "configmaps", "", false}, // the rejection reports: only in the receiver's namespace
			{operator, "delete", "", "configmaps", "", false},
			{operator, "create", g, "agentruns", "", false},
			{operator, "delete", g, "agentruns", "", true},
			{operator, "delete", g, "webhookendpoints", "", true}, // an Agent's cleanup (its finalizer)
			{operator, "delete", g, "agentthreads", "", true},
			{operator, "patch", g, "agents", "", true}, // the finalizer
			{operator, "update", g, "agents", "finalizers", true},
			{operator, "patch", g, "agents", "status", true},
			{operator, "update", g, "agents", "", false},
			{operator, "delete", g, "agents", "", false},
			{operator, "trigger", g, "agents", "", false},
			{operator, "create", "coordination.k8s.io", "leases", "", false}, // only in its own namespace
		} {
			Expect(allowed(c.user, c.verb, c.group, c.resource, c.sub)).To(Equal(c.want), "%s %s %s/%s", c.user, c.verb, c.resource, c.sub)
		}
	})
}

// patchTriage patches Agent triage of ns as c, changed by mutate.
func patchTriage(ctx SpecContext, c client.Client, ns string, mutate func(*agentsv1alpha1.Agent)) error {
	cur := get(ctx, newAgent(ns, "triage"))
	patch := client.MergeFrom(cur.DeepCopy())
	mutate(cur)
	return c.Patch(ctx, cur, patch)
}
