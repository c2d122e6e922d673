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
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// Server-side apply shares a field among every manager that applied it.
// A non-owner who applies a value identical to the owner's changes nothing
// in the spec, yet co-owns the field: when the owner drops the line from
// the manifest, the API server keeps the value. The ownership policy
// refuses a non-owner's write that changes who manages the spec.
var _ = Describe("server-side apply by a non-owner", serverSideApplySpecs)

// serverSideApplySpecs are the specs of server-side apply by a non-owner,
// in the suite's owner-defaulting mode (ownerDefaulting).
func serverSideApplySpecs() {
	const (
		alice = "alice@example.com" // the owner
		bob   = "bob@example.com"   // another member
	)
	var ns string
	as := func(user string) client.Client {
		GinkgoHelper()
		c, err := client.New(testenv.AsUser(cfg, user), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		return c
	}
	apply := func(ctx SpecContext, user string, spec map[string]any) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": agentsv1alpha1.GroupVersion.String(), "kind": "WebhookEndpoint",
			"metadata": map[string]any{"namespace": ns, "name": "status-page", "labels": map[string]any{"applied-by": user[:3]}},
		}}
		if spec != nil {
			u.Object["spec"] = spec
		}
		return as(user).Patch(ctx, u, client.Apply, client.FieldOwner(user), client.ForceOwnership) //nolint:staticcheck // the apply patch of kubectl apply --server-side
	}
	allowUnauthenticated := func(ctx SpecContext) bool {
		return get(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "status-page"}}).Spec.AllowUnauthenticated
	}
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		create(ctx, newAgent(ns, "triage"))
		for _, user := range []string{alice, bob} {
			create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "agent-user-"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hookrun-agent-user"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
			})
		}
	})

	It("cannot co-own allowUnauthenticated, so the owner's removal of it takes effect", func(ctx SpecContext) {
		manifest := map[string]any{
			"agentRef": map[string]any{"name": "triage"}, "prompt": "Look.", "threadStrategy": "NewThreadEachRun",
			"allowUnauthenticated": true,
		}
		if creatorOwner(alice) != nil { // the owner-required mode
			manifest["owner"] = map[string]any{"user": alice}
		}
		Eventually(func() error { return apply(ctx, alice, manifest) }).Should(Succeed())
		Expect(allowUnauthenticated(ctx)).To(BeTrue())

		// The same value, so the spec does not change: only who manages it would.
		err := apply(ctx, bob, map[string]any{"allowUnauthenticated": true})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("only the owner (alice@example.com) can manage this endpoint's spec fields " +
			"(server-side apply makes you a co-owner of them, and the owner's next apply could no longer remove them)"))
		// Writing managedFields directly claims the same.
		ep := get(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "status-page"}})
		patch := client.MergeFrom(ep.DeepCopy())
		ep.ManagedFields = append(ep.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: "bob", Operation: metav1.ManagedFieldsOperationApply, APIVersion: agentsv1alpha1.GroupVersion.String(),
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:allowUnauthenticated":{}}}`),
		})
		Expect(as(bob).Patch(ctx, ep, patch)).To(MatchError(ContainSubstring("can manage this endpoint's spec fields")))
		// Labels are not the owner's alone, applied or not.
		Expect(apply(ctx, bob, nil)).To(Succeed())
		Expect(get(ctx, ep).Labels).To(HaveKeyWithValue("applied-by", "bob"))

		delete(manifest, "allowUnauthenticated")
		Expect(apply(ctx, alice, manifest)).To(Succeed())
		Expect(allowUnauthenticated(ctx)).To(BeFalse(), "the owner's manifest no longer sets it")
	})
}
