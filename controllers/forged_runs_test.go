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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/test/testenv"
)

// Runs are calls the receiver accepted. One written by anyone else could
// choose its owner and trust and name any Secret of its namespace as the
// payload: the API server refuses such a run (config/policies/runs.yaml),
// and the operator sends and deletes only a payload the run owns.
var _ = Describe("A forged AgentRun", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	forgedRun := func(name, payload string) *agentsv1alpha1.AgentRun {
		return &agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint: "hook", agentsv1alpha1.LabelAgent: "triage",
			}},
			Spec: agentsv1alpha1.AgentRunSpec{
				EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "hook"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
				Prompt: "Print your input.", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Owner:      &agentsv1alpha1.Owner{User: "victim@example.com"},
				Trust:      agentsv1alpha1.TrustStandard,
				Payload:    &agentsv1alpha1.PayloadReference{SecretName: payload, Bytes: 2},
				ReceivedAt: metav1.NewTime(fakeClock.Now()),
			},
		}
	}

	It("is refused at admission unless the receiver or an admin creates it", func(ctx SpecContext) {
		// A role with every verb on hookrun's kinds, as wildcard roles grant,
		// for mallory and for dave, a hookrun admin.
		const mallory = "mallory@example.com"
		role := create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "everything-hookrun"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{agentsv1alpha1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		})
		create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mallory"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects: []rbacv1.Subject{
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: mallory},
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "dave@example.com"},
			},
		})
		malloryClient, err := client.New(testenv.AsUser(cfg, mallory, "team-a"), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		// RBAC allows it (the role is cached by the authorizer a moment later).
		Eventually(func() error {
			return malloryClient.Create(ctx, forgedRun("github-issues-1", "db-password"), client.DryRunAll)
		}).Should(MatchError(ContainSubstring("hookrun-run-creators")))
		err = malloryClient.Create(ctx, forgedRun("github-issues-1", "db-password"))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(ContainSubstring("hookrun-run-creators"),
			ContainSubstring("AgentRuns are created by hookrun's receiver for the calls it accepts"),
			ContainSubstring("mallory@example.com may not create them")))

		receiver, err := client.New(testenv.AsServiceAccount(cfg, clusterinstall.Namespace, clusterinstall.ReceiverServiceAccount), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(receiver.Create(ctx, forgedRun("by-receiver", "by-receiver"))).To(Succeed())
		admin, err := client.New(testenv.AsUser(cfg, "dave@example.com", "hookrun-admins"), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(admin.Create(ctx, forgedRun("by-admin", "by-admin"))).To(Succeed())
	})

	It("that names a Secret which is not its payload ends PayloadInvalid: the Secret is neither sent nor deleted", func(ctx SpecContext) {
		agent := startPeer()
		a := newAgent(ns, "triage")
		a.Spec.A2A.URL = agent.URL
		a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
		create(ctx, a)
		// Someone else's Secret, and a payload Secret of another run.
		create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-password"},
			Data:       map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("hunter2"), "password": []byte("hunter2")},
		})
		other := queueTestRun(ctx, ns, "other-run", "{}", nil)
		Eventually(func() agentsv1alpha1.RunState { return get(ctx, other).Status.State }).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(agent.Messages()).To(HaveLen(1))

		for _, payload := range []string{"db-password", "other-run"} {
			run := create(ctx, forgedRun("forged-"+payload, payload))
			Eventually(func() *agentsv1alpha1.AgentRun { return get(ctx, run) }).Should(And(
				HaveField("Status.State", agentsv1alpha1.RunError),
				HaveField("Status.Reason", agentsv1alpha1.ReasonPayloadInvalid),
				HaveField("Status.Message", ContainSubstring("Secret "+payload+" is not this run's payload"))))
			Expect(conditionOf(get(ctx, run).Status.Conditions, agentsv1alpha1.ConditionReady)).To(
				haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonPayloadInvalid))
		}
		Expect(agent.Messages()).To(HaveLen(1), "nothing of the forged runs reached the agent")

		// Past the payload TTL retention deletes the real run's payload,
		// not a Secret a forged run names.
		fakeClock.Step(11 * time.Minute)
		poke(ctx, create(ctx, newEndpoint(ns, "hook", "triage")))
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "other-run"}, &corev1.Secret{}))
		}).Should(BeTrue(), "retention ran")
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-password"}, &corev1.Secret{})
		}, "2s").Should(Succeed())
	})
	// The type check on its own: a Secret the forged run owns, but not of
	// the payload type. Whoever may create runs and Secrets could otherwise
	// send any Secret data of theirs as if the receiver had accepted it.
	It("that names a Secret it owns but not of the payload type ends PayloadInvalid: the Secret is not sent", func(ctx SpecContext) {
		agent := startPeer()
		a := newAgent(ns, "triage")
		a.Spec.A2A.URL = agent.URL
		a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
		create(ctx, a)

		run := create(ctx, forgedRun("forged-owned", "owned-opaque"))
		create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned-opaque", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: run.Name, UID: run.UID,
			}}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("{}")},
		})
		Eventually(func() *agentsv1alpha1.AgentRun { return get(ctx, run) }).Should(And(
			HaveField("Status.State", agentsv1alpha1.RunError),
			HaveField("Status.Reason", agentsv1alpha1.ReasonPayloadInvalid),
			HaveField("Status.Message", ContainSubstring("Secret owned-opaque is not this run's payload"))))
		Expect(agent.Messages()).To(BeEmpty(), "the Secret did not reach the agent")
	})
})
