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

package release

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// releaseImage is the image the chart installs by default (DESIGN section 11).
const releaseImage = "ghcr.io/hookrun/hookrun"

// chartRef is the chart by digest, as make release wrote it in chart.txt
// (REGISTRY/charts/hookrun:X.Y.Z@sha256:...).
func chartRef(t *testing.T, r release) string {
	t.Helper()
	line := strings.TrimSpace(string(distFile(t, r, "chart.txt")))
	tagged, digest, ok := strings.Cut(line, "@")
	if !ok || tagged != r.chartRepo()+":"+r.chartVersion() || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("chart.txt: %q, want %s:%s@sha256:...", line, r.chartRepo(), r.chartVersion())
	}
	return r.chartRepo() + "@" + digest
}

// helm runs the pinned helm against the loopback registry (plain HTTP).
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	return run(t, tool(t, "HELM"), append(args, "--plain-http")...)
}

// kubeVersion is the Kubernetes version of the test API server, for helm
// template (the chart's kubeVersion).
func kubeVersion(t *testing.T) string {
	t.Helper()
	return strings.TrimPrefix(tool(t, "K8S_VERSION"), "v")
}

// objects decodes a multi-document YAML stream.
func objects(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		o := &unstructured.Unstructured{}
		err := dec.Decode(&o.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

// containerImages is kind/namespace/name -> the images of a workload's containers.
func containerImages(t *testing.T, objs []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	images := map[string][]string{}
	for _, o := range objs {
		containers, found, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			continue
		}
		key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		for _, c := range containers {
			container, ok := c.(map[string]any)
			if !ok {
				t.Fatalf("%s: a container is a %T", key, c)
			}
			image, _, err := unstructured.NestedString(container, "image")
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			images[key] = append(images[key], image)
		}
	}
	return images
}

// The chart pulled from oci:// is the release's (the archive in dist, its
// version and appVersion), renders the release image at its appVersion, and
// what it renders passes the API server's validation (a server-side dry run).
func TestChartFromOCI(t *testing.T) {
	r := theRelease(t)
	dir := t.TempDir()
	oci := "oci://" + r.chartRepo()
	helm(t, "pull", oci, "--version", r.chartVersion(), "--destination", dir)
	archive := "hookrun-" + r.chartVersion() + ".tgz"
	pulled, err := os.ReadFile(filepath.Join(dir, archive))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pulled, distFile(t, r, archive)) {
		t.Errorf("the chart pulled from %s is not dist/%s", oci, archive)
	}
	var meta struct{ Version, AppVersion string }
	if err := yaml.Unmarshal(helm(t, "show", "chart", oci, "--version", r.chartVersion()), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Version != r.chartVersion() || meta.AppVersion != r.chartVersion() {
		t.Errorf("the chart's version %s and appVersion %s, want %s", meta.Version, meta.AppVersion, r.chartVersion())
	}

	const ns = "hookrun-from-oci"
	rendered := helm(t, "template", "hookrun", oci, "--version", r.chartVersion(), "--namespace", ns,
		"--kube-version", kubeVersion(t), "--set", "publicBaseURL=https://hooks.example.com")
	images := containerImages(t, objects(t, rendered))
	for _, d := range []string{"hookrun-operator", "hookrun-receiver"} {
		if got := images["Deployment/"+ns+"/"+d]; len(got) != 1 || got[0] != releaseImage+":"+r.chartVersion() {
			t.Errorf("%s runs %v, want %s:%s", d, got, releaseImage, r.chartVersion())
		}
	}

	if out, err := kubectl(t, nil, "create", "namespace", ns); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := kubectl(t, rendered, "apply", "--dry-run=server", "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"hookrun-operator", "hookrun-receiver"} {
		if !strings.Contains(string(out), "deployment.apps/"+d+" created (server dry run)") {
			t.Errorf("the server dry run did not create %s:\n%s", d, out)
		}
	}
}

// dist/install.yaml is the chart with default values and the image by
// digest, with its namespace; it applies to the API server, whose CRDs are
// then established, and its Deployments exist.
func TestInstallYAML(t *testing.T) {
	r := theRelease(t)
	manifest := distFile(t, r, "install.yaml")
	objs := objects(t, manifest)
	if len(objs) == 0 || objs[0].GetKind() != "Namespace" || objs[0].GetName() != "hookrun-system" {
		t.Fatalf("install.yaml does not begin with the Namespace hookrun-system")
	}
	image := imageRef(t, r)
	images := containerImages(t, objs)
	for _, d := range []string{"hookrun-operator", "hookrun-receiver"} {
		if got := images["Deployment/hookrun-system/"+d]; len(got) != 1 || got[0] != image {
			t.Errorf("%s runs %v, want %s (by digest)", d, got, image)
		}
	}
	if len(images) != 2 {
		t.Errorf("install.yaml runs %v, want the operator and the receiver", images)
	}
	var crds []string
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, "crd/"+o.GetName())
		}
	}
	if len(crds) != 4 {
		t.Errorf("install.yaml has the CRDs %v, want hookrun's four", crds)
	}
	// The owner-required mode, which every supported version serves: a
	// file applied without Helm cannot ask whether MutatingAdmissionPolicy is.
	policies := map[string]bool{}
	for _, o := range objs {
		if strings.HasSuffix(o.GetKind(), "AdmissionPolicy") {
			policies[o.GetKind()+"/"+o.GetName()] = true
		}
	}
	if !policies["ValidatingAdmissionPolicy/hookrun-endpoint-owner"] || policies["MutatingAdmissionPolicy/hookrun-endpoint-owner"] {
		t.Errorf("install.yaml's admission policies are %v, want the owner-required mode (ValidatingAdmissionPolicy/hookrun-endpoint-owner, no MutatingAdmissionPolicy)", policies)
	}

	if out, err := kubectl(t, manifest, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply -f install.yaml: %v\n%s", err, out)
	}
	if out, err := kubectl(t, nil, append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, crds...)...); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
	if out, err := kubectl(t, nil, "get", "-n", "hookrun-system", "deployment/hookrun-operator", "deployment/hookrun-receiver"); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}
