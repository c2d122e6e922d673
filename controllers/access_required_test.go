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
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
)

// withoutMutatingAdmissionPolicy are the kube-apiserver flags that stop it
// serving MutatingAdmissionPolicy, as on Kubernetes before 1.36: the API
// (runtime-config) and its admission plugin, whose informer would otherwise
// keep the server from ever being ready.
var withoutMutatingAdmissionPolicy = map[string]string{
	"runtime-config":            "admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false",
	"disable-admission-plugins": "MutatingAdmissionPolicy",
}

// The access specs once more, on a second API server that does not serve
// MutatingAdmissionPolicy, with the owner-required policies installed as
// hack/clusterinstall finds them needed there, and the operator running
// against it. On an API server that serves no MutatingAdmissionPolicy
// anyway (make test-k8s on 1.33) the specs above ran in that mode already.
var _ = Describe("access control without MutatingAdmissionPolicy", Ordered, ContinueOnFailure, func() {
	BeforeAll(func(ctx SpecContext) {
		if ownerDefaulting == clusterinstall.OwnerDefaultingRequired {
			Skip("the suite's API server serves no MutatingAdmissionPolicy: the access specs ran in the owner-required mode")
		}
		useSecondServer(ctx, withoutMutatingAdmissionPolicy)
		Expect(ownerDefaulting).To(Equal(clusterinstall.OwnerDefaultingRequired), "the API server still serves MutatingAdmissionPolicy")
	})
	Describe("access control", accessControlSpecs)
	Describe("server-side apply by a non-owner", serverSideApplySpecs)
})

// useSecondServer starts another API server, with flags added to envtest's
// kube-apiserver flags, installs access control on it in the mode it needs,
// and points the suite at it (cfg, k8sClient, watchClient, ownerDefaulting
// and the operator's manager) until the container's specs are done.
func useSecondServer(ctx context.Context, flags map[string]string) {
	GinkgoHelper()
	stopManager()
	first := struct {
		cfg         *rest.Config
		k8sClient   client.Client
		watchClient client.WithWatch
		mode        clusterinstall.OwnerDefaulting
	}{cfg, k8sClient, watchClient, ownerDefaulting}
	// The second API server stops after the cleanup below (cleanups run last
	// in, first out): the manager on it stops first.
	useCluster(ctx, flags)
	DeferCleanup(func() {
		stopManager()
		cfg, k8sClient, watchClient, ownerDefaulting = first.cfg, first.k8sClient, first.watchClient, first.mode
		stopManager = startManager()
	})
	stopManager = startManager()
}

// creatorOwner is the spec.owner a spec writes for an endpoint that user,
// with groups, creates for themselves: none where the API server fills it in
// (Policy), else what it would have filled in.
func creatorOwner(user string, groups ...string) *agentsv1alpha1.Owner {
	if ownerDefaulting == clusterinstall.OwnerDefaultingPolicy {
		return nil
	}
	return &agentsv1alpha1.Owner{User: user, Groups: append(slices.Clone(groups), "system:authenticated")}
}

// awaitOwnerPolicies waits until the API server enforces the owner policies
// of the suite's mode (its policy informers are asynchronous), probing with
// a dry run of creator's create of probe, an endpoint without an owner: the
// owner is filled in (Policy) or the create refused for the want of one
// (Required).
func awaitOwnerPolicies(ctx context.Context, creator client.Client, probe *agentsv1alpha1.WebhookEndpoint) {
	GinkgoHelper()
	Expect(probe.Spec.Owner).To(BeNil())
	if ownerDefaulting == clusterinstall.OwnerDefaultingRequired {
		Eventually(func() error { return creator.Create(ctx, probe.DeepCopy(), client.DryRunAll) }).
			Should(MatchError(ContainSubstring("spec.owner is required")))
		return
	}
	Eventually(func() (*agentsv1alpha1.Owner, error) {
		p := probe.DeepCopy()
		err := creator.Create(ctx, p, client.DryRunAll)
		return p.Spec.Owner, err
	}).ShouldNot(BeNil())
}
