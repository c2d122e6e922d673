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
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/hookrun/hookrun/test/testenv"
)

// objects parses a multi-document YAML stream by apiVersion/kind/namespace/name.
func objects(t *testing.T, stream string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		out[u.GetAPIVersion()+"/"+u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName()] = u
	}
}

// `kustomize build config/default` renders what `helm template` renders with
// the default values in namespace hookrun-system, but for the Namespace
// itself (helm install --create-namespace makes it) and the chart's labels
// and keep annotations on the CRDs.
func TestKustomizeRendersWhatTheChartRenders(t *testing.T) {
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		t.Fatal("KUSTOMIZE is not set: run `make test`, which installs the pinned kustomize into bin/")
	}
	root := testenv.Root()
	built, err := exec.Command(kustomize, "build", filepath.Join(root, "config", "default")).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, built)
	}
	fromKustomize := objects(t, string(built))
	// config/default installs config/policies: the owner-defaulting mode
	// Policy, which the chart's Auto picks where the API server serves
	// MutatingAdmissionPolicy.
	fromHelm := objects(t, helm(t, "template", "hookrun", filepath.Join(root, "charts", "hookrun"),
		"--namespace", "hookrun-system", "--include-crds", "--set", "publicBaseURL=https://hooks.example.com",
		"--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy"))

	delete(fromKustomize, "v1/Namespace//hookrun-system")
	if fromHelm["admissionregistration.k8s.io/v1/MutatingAdmissionPolicy//hookrun-endpoint-owner"] == nil {
		t.Error("the chart rendered no MutatingAdmissionPolicy where the API server serves it")
	}
	crds := 0
	for k, o := range fromHelm {
		if o.GetKind() == "CustomResourceDefinition" {
			withoutChartMetadata(t, k, o)
			crds++
		}
	}
	if crds != 4 {
		t.Errorf("the chart rendered %d CRDs, want 4", crds)
	}
	sameObjects(t, "config/default", fromKustomize, fromHelm)
	if len(fromHelm) < 25 {
		t.Errorf("the chart rendered only %d objects", len(fromHelm))
	}
}

// `kustomize build config/policies-owner-required` renders the admission
// policies the chart renders in the owner-required mode, which its Auto
// picks where the API server does not serve MutatingAdmissionPolicy (and
// helm template, which cannot ask, always).
func TestKustomizeRendersTheOwnerRequiredPolicies(t *testing.T) {
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		t.Fatal("KUSTOMIZE is not set: run `make test`, which installs the pinned kustomize into bin/")
	}
	root := testenv.Root()
	built, err := exec.Command(kustomize, "build", filepath.Join(root, "config", "policies-owner-required")).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, built)
	}
	fromKustomize := objects(t, string(built))
	chart := filepath.Join(root, "charts", "hookrun")
	for _, mode := range [][]string{{}, {"--set", "admission.ownerDefaulting=Required"},
		{"--set", "admission.ownerDefaulting=Required", "--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy"}} {
		fromHelm := objects(t, helm(t, append([]string{"template", "hookrun", chart, "--namespace", "hookrun-system",
			"--set", "publicBaseURL=https://hooks.example.com"}, mode...)...))
		for k := range fromHelm {
			if !strings.HasPrefix(k, "admissionregistration.k8s.io/") {
				delete(fromHelm, k)
			}
		}
		sameObjects(t, "config/policies-owner-required (chart "+strings.Join(mode, " ")+")", fromKustomize, fromHelm)
	}
	if len(fromKustomize) != 10 {
		t.Errorf("config/policies-owner-required rendered %d objects, want 5 policies and their bindings", len(fromKustomize))
	}
}

// sameObjects reports the objects that only one of kustomize's and helm's
// renderings holds, or that differ between them.
func sameObjects(t *testing.T, what string, fromKustomize, fromHelm map[string]*unstructured.Unstructured) {
	t.Helper()
	var keys []string
	for k := range fromKustomize {
		keys = append(keys, k)
	}
	for k := range fromHelm {
		if _, ok := fromKustomize[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		a, b := fromKustomize[k], fromHelm[k]
		switch {
		case a == nil:
			t.Errorf("%s: only the chart renders it", k)
		case b == nil:
			t.Errorf("%s: only %s renders it", k, what)
		case !equality.Semantic.DeepEqual(a.Object, b.Object):
			t.Errorf("%s: %s differs:\nkustomize: %v\nhelm:      %v", what, k, a.Object, b.Object)
		}
	}
}

// withoutChartMetadata removes from a CRD the labels and annotations only the
// chart gives it, failing if any is missing.
func withoutChartMetadata(t *testing.T, key string, crd *unstructured.Unstructured) {
	t.Helper()
	labels, annotations := crd.GetLabels(), crd.GetAnnotations()
	if labels["app.kubernetes.io/managed-by"] != "Helm" || labels["app.kubernetes.io/name"] != "hookrun" {
		t.Errorf("%s: labels %v, want the chart's", key, labels)
	}
	for k, want := range map[string]string{
		"helm.sh/resource-policy":         "keep",
		"argocd.argoproj.io/sync-options": "Delete=false,Prune=false",
	} {
		if annotations[k] != want {
			t.Errorf("%s: annotation %s is %q, want %q", key, k, annotations[k], want)
		}
		delete(annotations, k)
	}
	crd.SetLabels(nil)
	crd.SetAnnotations(annotations)
}
