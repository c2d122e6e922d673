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

package clusterinstall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The names the callers use (Namespace and the service accounts) are the ones
// config/rbac creates, and InstallAccessControl reads objects, not the
// kustomization.yaml next to them.
func TestAccessControlManifestsCreateTheNamedObjects(t *testing.T) {
	root := filepath.Join("..", "..")
	objs, err := read([]string{filepath.Join(root, "config", "rbac"), filepath.Join(root, "config", "policies")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"Namespace//" + Namespace:                                    false,
		"ServiceAccount/" + Namespace + "/" + OperatorServiceAccount: false,
		"ServiceAccount/" + Namespace + "/" + ReceiverServiceAccount: false,
	}
	for _, o := range objs {
		if o.GetKind() == "Kustomization" {
			t.Errorf("read a kustomization as an object: %s", o.GetName())
		}
		key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		if _, ok := want[key]; ok {
			want[key] = true
		}
	}
	for key, found := range want {
		if !found {
			t.Errorf("config/rbac has no %s", key)
		}
	}
}

// Each mode installs every policy of config/policies but the one that names
// the mode; the owner-required mode has no MutatingAdmissionPolicy, and its
// hookrun-endpoint-owner requires spec.owner.
func TestPolicyFilesOfEachMode(t *testing.T) {
	root := filepath.Join("..", "..")
	kinds := func(mode OwnerDefaulting) map[string]*unstructured.Unstructured {
		t.Helper()
		files, err := PolicyFiles(root, mode)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := read(files)
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]*unstructured.Unstructured{}
		for _, o := range objs {
			key := o.GetKind() + "/" + o.GetName()
			if byKey[key] != nil {
				t.Errorf("%s: %s twice", mode, key)
			}
			byKey[key] = o
		}
		return byKey
	}
	policy, required := kinds(OwnerDefaultingPolicy), kinds(OwnerDefaultingRequired)
	for _, key := range []string{"MutatingAdmissionPolicy/hookrun-endpoint-owner", "MutatingAdmissionPolicyBinding/hookrun-endpoint-owner"} {
		if policy[key] == nil {
			t.Errorf("Policy mode has no %s", key)
		}
		if required[key] != nil {
			t.Errorf("Required mode has %s", key)
		}
		delete(policy, key)
	}
	if len(policy) != len(required) {
		t.Errorf("Policy mode has %d other objects, Required mode %d", len(policy), len(required))
	}
	for key, o := range policy {
		r := required[key]
		switch {
		case r == nil:
			t.Errorf("Required mode has no %s", key)
		case key == "ValidatingAdmissionPolicy/hookrun-endpoint-owner":
			if messages(r) == messages(o) || !strings.Contains(messages(r), "spec.owner is required") {
				t.Errorf("Required mode's %s is Policy mode's, or does not require spec.owner: %s", key, messages(r))
			}
		case !equality.Semantic.DeepEqual(o.Object, r.Object):
			t.Errorf("%s differs between the modes", key)
		}
	}
	if _, err := PolicyFiles(root, "Auto"); err == nil {
		t.Error("PolicyFiles accepted mode Auto")
	}
}

func messages(policy *unstructured.Unstructured) string {
	validations, _, _ := unstructured.NestedSlice(policy.Object, "spec", "validations")
	var b strings.Builder
	for _, v := range validations {
		m, _, _ := unstructured.NestedString(asMap(v), "messageExpression")
		b.WriteString(m)
	}
	return b.String()
}

// asMap is v as a JSON object, or an empty one.
func asMap(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	return m
}

// The exemptions are literals in every policy that has them (a parameter
// object could be missing or written by anyone it exempts): they are the
// same lists in all of them, as the chart writes them from one value.
func TestEveryPolicyExemptsTheSameRequesters(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]map[string]string{} // variable → dir/policy → expression
	for _, dir := range []string{"policies", "policies-owner-required"} {
		objs, err := read([]string{filepath.Join(root, "config", dir)})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() != "ValidatingAdmissionPolicy" {
				continue
			}
			variables, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
			for _, v := range variables {
				name, _, _ := unstructured.NestedString(asMap(v), "name")
				expr, _, _ := unstructured.NestedString(asMap(v), "expression")
				if name == "exemptUsers" || name == "adminGroups" {
					if seen[name] == nil {
						seen[name] = map[string]string{}
					}
					seen[name][dir+"/"+o.GetName()] = expr
				}
			}
		}
	}
	for name, byPolicy := range seen {
		want := byPolicy["policies/hookrun-endpoint-ownership"]
		if want == "" {
			t.Fatalf("ownership.yaml has no variable %s", name)
		}
		for policy, expr := range byPolicy {
			if expr != want {
				t.Errorf("%s of %s is %s; ownership.yaml's is %s", name, policy, expr, want)
			}
		}
	}
	if len(seen["exemptUsers"]) < 3 {
		t.Errorf("exemptUsers in %d policies, want both modes' hookrun-endpoint-owner and hookrun-endpoint-ownership", len(seen["exemptUsers"]))
	}
}

// DetectOwnerDefaulting reads the API server's discovery: Policy where
// MutatingAdmissionPolicy is served in admissionregistration.k8s.io/v1
// (an older version does not count), else Required.
func TestDetectOwnerDefaulting(t *testing.T) {
	for _, c := range []struct {
		served []schema.GroupVersionKind
		want   OwnerDefaulting
	}{
		{[]schema.GroupVersionKind{mutatingAdmissionPolicy}, OwnerDefaultingPolicy},
		{[]schema.GroupVersionKind{{Group: "admissionregistration.k8s.io", Version: "v1beta1", Kind: "MutatingAdmissionPolicy"},
			{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}}, OwnerDefaultingRequired},
		{nil, OwnerDefaultingRequired},
	} {
		mapper := meta.NewDefaultRESTMapper(nil)
		for _, gvk := range c.served {
			mapper.Add(gvk, meta.RESTScopeRoot)
		}
		got, err := DetectOwnerDefaulting(fake.NewClientBuilder().WithRESTMapper(mapper).Build())
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("served %v: %s, want %s", c.served, got, c.want)
		}
	}
}

// ApplyInOwned names the owner of the WebhookEndpoints that name none, and
// leaves every other object, and an owner already named, as it is.
func TestApplyInOwnedNamesTheOwner(t *testing.T) {
	dir := t.TempDir()
	manifest := `apiVersion: agents.hookrun.dev/v1alpha1
kind: WebhookEndpoint
metadata: {name: unowned}
spec: {agentRef: {name: triage}}
---
apiVersion: agents.hookrun.dev/v1alpha1
kind: WebhookEndpoint
metadata: {name: owned}
spec: {agentRef: {name: triage}, owner: {user: bob}}
---
apiVersion: agents.hookrun.dev/v1alpha1
kind: Agent
metadata: {name: triage}
spec: {a2a: {url: "http://127.0.0.1:1/"}}
`
	if err := os.WriteFile(filepath.Join(dir, "samples.yaml"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"WebhookEndpoint", "Agent"} {
		mapper.Add(schema.GroupVersionKind{Group: "agents.hookrun.dev", Version: "v1alpha1", Kind: kind}, meta.RESTScopeNamespace)
	}
	c := fake.NewClientBuilder().WithRESTMapper(mapper).Build()
	if err := ApplyInOwned(context.Background(), c, "team-a", "alice", dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"unowned": "alice", "owned": "bob"} {
		ep := &unstructured.Unstructured{}
		ep.SetAPIVersion("agents.hookrun.dev/v1alpha1")
		ep.SetKind("WebhookEndpoint")
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: name}, ep); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedString(ep.Object, "spec", "owner", "user"); got != want {
			t.Errorf("%s: owner %q, want %q", name, got, want)
		}
	}
	agent := &unstructured.Unstructured{}
	agent.SetAPIVersion("agents.hookrun.dev/v1alpha1")
	agent.SetKind("Agent")
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "triage"}, agent); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(agent.Object, "spec", "owner"); found {
		t.Error("the Agent got an owner")
	}
}
