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

package chart

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/test/testenv"
)

// checkOwnership checks the ownership rules of the release installed in
// namespace release, in its owner-defaulting mode, with the settings its
// values gave the policies: gitops in admission.exemptUsers, argoCD in
// admission.actionUsers. alice and bob are members of Agent triage in
// teamSpace; as impersonates a user.
func checkOwnership(g *WithT, mode clusterinstall.OwnerDefaulting, admin client.Client, as func(string, ...string) client.Client) {
	ctx := context.Background()
	prefix := strings.ToLower(string(mode)) + "-"
	endpoint := func(name string, owner *agentsv1alpha1.Owner) *agentsv1alpha1.WebhookEndpoint {
		return &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: teamSpace, Name: prefix + name},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun, Owner: owner,
			},
		}
	}
	// The API server enforces new policies (and knows new CRDs' schemas in
	// them) after its informers see them.
	g.Eventually(func() error {
		return as(bob).Create(ctx, endpoint("probe", &agentsv1alpha1.Owner{User: alice}), client.DryRunAll)
	}).Should(MatchError(ContainSubstring("spec.owner.user must be you")))
	var mine *agentsv1alpha1.WebhookEndpoint
	switch mode {
	case clusterinstall.OwnerDefaultingPolicy:
		g.Eventually(func() (*agentsv1alpha1.Owner, error) {
			probe := endpoint("probe", nil)
			err := as(alice).Create(ctx, probe, client.DryRunAll)
			return probe.Spec.Owner, err
		}).ShouldNot(BeNil())
		mine = endpoint("mine", nil)
		g.Expect(as(alice).Create(ctx, mine)).To(Succeed())
		g.Expect(mine.Spec.Owner.User).To(Equal(alice), "the owner is filled from the creator")
	case clusterinstall.OwnerDefaultingRequired:
		g.Eventually(func() error { return as(alice).Create(ctx, endpoint("probe", nil), client.DryRunAll) }).
			Should(MatchError(ContainSubstring("ValidatingAdmissionPolicy 'hookrun-endpoint-owner' with binding 'hookrun-endpoint-owner' " +
				"denied request: spec.owner is required on this cluster, which does not fill it in: set spec.owner.user to your user name, " + alice)))
		g.Expect(as(bob).Create(ctx, endpoint("for-alice", &agentsv1alpha1.Owner{User: alice}))).
			To(MatchError(ContainSubstring("spec.owner.user must be you: set it to your user name, " + bob)))
		mine = endpoint("mine", &agentsv1alpha1.Owner{User: alice})
		g.Expect(as(alice).Create(ctx, mine)).To(Succeed(), "the creator names themselves")
		g.Expect(as(gitops, "system:serviceaccounts").Create(ctx, endpoint("from-git-unowned", nil))).
			To(Succeed(), "the GitOps controller named in values may leave the owner out")
	}
	g.Expect(as(gitops, "system:serviceaccounts").Create(ctx, endpoint("from-git", &agentsv1alpha1.Owner{User: alice}))).
		To(Succeed(), "the GitOps controller named in values is exempt")
	sa := func(name string) string { return "system:serviceaccount:" + release + ":" + name }

	change := func(c client.Client, mutate func(*agentsv1alpha1.WebhookEndpoint)) error {
		cur := &agentsv1alpha1.WebhookEndpoint{}
		g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(mine), cur)).To(Succeed())
		patch := client.MergeFrom(cur.DeepCopy())
		mutate(cur)
		return c.Patch(ctx, cur, patch)
	}
	newPrompt := func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Prompt = "Something else." }
	edit := func(c client.Client) error { return change(c, newPrompt) }
	err := edit(as(bob))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue())
	g.Expect(err.Error()).To(ContainSubstring("only the owner (alice@example.com) can change this endpoint's spec"))
	g.Expect(edit(as(sa("hookrun-operator"), "system:serviceaccounts", "system:serviceaccounts:"+release))).
		To(Succeed(), "the operator of the release namespace is exempt")
	// Argo CD's server, named in admission.actionUsers, pauses and resumes an
	// endpoint it does not own, and changes nothing else.
	argo := as(argoCD, "system:serviceaccounts", "system:serviceaccounts:argocd")
	g.Expect(change(argo, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Paused = true })).To(Succeed())
	g.Expect(change(argo, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Paused = false })).To(Succeed())
	err = change(argo, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Paused = true; ep.Spec.Prompt = "Argo CD's." })
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("only the owner (alice@example.com) can change this endpoint's spec"))
}

// admission.ownerDefaulting: Auto renders the MutatingAdmissionPolicy only
// where the API server serves it (helm install asks; helm template knows
// only --api-versions), Policy and Required whatever it serves, and the
// schema refuses any other value.
func TestChartOwnerDefaulting(t *testing.T) {
	g := NewWithT(t)
	const (
		served     = "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy"
		mutating   = served + "//hookrun-endpoint-owner"
		validating = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy//hookrun-endpoint-owner"
	)
	for _, c := range []struct {
		args     []string
		defaults bool // the MutatingAdmissionPolicy fills spec.owner
	}{
		{nil, false},
		{[]string{"--api-versions", served}, true},
		{[]string{"--set", "admission.ownerDefaulting=Policy"}, true},
		{[]string{"--set", "admission.ownerDefaulting=Required", "--api-versions", served}, false},
	} {
		objs := render(t, c.args...)
		g.Expect(objs).To(HaveKey(validating), "%v", c.args)
		requires := strings.Contains(fmt.Sprint(objs[validating].Object["spec"]), "spec.owner is required")
		if c.defaults {
			g.Expect(objs).To(HaveKey(mutating), "%v", c.args)
			g.Expect(requires).To(BeFalse(), "%v", c.args)
		} else {
			g.Expect(objs).NotTo(HaveKey(mutating), "%v", c.args)
			g.Expect(requires).To(BeTrue(), "%v", c.args)
		}
	}
	out, err := helmCommand(t, "template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"),
		"--set", "publicBaseURL=https://hooks.example.com", "--set", "admission.ownerDefaulting=Mutating").CombinedOutput()
	g.Expect(err).To(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("value must be one of 'Auto', 'Policy', 'Required'"))
}
