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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
)

const webhookEndpointsCRD = "webhookendpoints.agents.hookrun.dev"

// The CRDs are templates: installed unless crds.enabled=false, annotated to
// be kept unless crds.keep=false. The chart refuses Kubernetes before 1.33.
func TestChartCRDValues(t *testing.T) {
	g := NewWithT(t)
	crds := func(objs map[string]*unstructured.Unstructured) map[string]map[string]string {
		out := map[string]map[string]string{}
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				out[o.GetName()] = o.GetAnnotations()
			}
		}
		return out
	}
	defaults := crds(render(t))
	g.Expect(defaults).To(HaveLen(4))
	g.Expect(defaults).To(HaveKeyWithValue(webhookEndpointsCRD, HaveKeyWithValue("helm.sh/resource-policy", "keep")))
	g.Expect(defaults).To(HaveKeyWithValue(webhookEndpointsCRD, HaveKeyWithValue("argocd.argoproj.io/sync-options", "Delete=false,Prune=false")))
	notKept := crds(render(t, "--set", "crds.keep=false"))
	g.Expect(notKept).To(HaveLen(4))
	g.Expect(notKept[webhookEndpointsCRD]).NotTo(HaveKey("helm.sh/resource-policy"))
	g.Expect(notKept[webhookEndpointsCRD]).NotTo(HaveKey("argocd.argoproj.io/sync-options"))
	g.Expect(crds(render(t, "--set", "crds.enabled=false"))).To(BeEmpty())

	out, err := exec.Command(os.Getenv("HELM"), "template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"),
		"--set", "publicBaseURL=https://hooks.example.com", "--kube-version", "1.32.9").CombinedOutput()
	g.Expect(err).To(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("chart requires kubeVersion: >=1.33.0-0 which is incompatible with Kubernetes v1.32.9"))
}

// helm install, upgrade and uninstall against a real API server, from a
// chart of the previous layout (CRDs in crds/, which Helm never upgrades)
// through the migration docs/operations.md describes: after it the upgrade
// changes the CRDs, and the uninstall leaves them. Along the way: helm
// resolves admission.ownerDefaulting Auto from the API server's discovery,
// and an upgrade to Required removes the MutatingAdmissionPolicy.
func TestChartUpgradesCRDs(t *testing.T) {
	g := NewWithT(t)
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(devcluster.WriteKubeconfig(cfg, "admin", kubeconfig)).To(Succeed())
	inCluster := clusterCommands(t, kubeconfig)
	crd := func() *unstructured.Unstructured {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		g.Expect(c.Get(context.Background(), client.ObjectKey{Name: webhookEndpointsCRD}, crd)).To(Succeed())
		return crd
	}
	categories := func() []string {
		categories, _, err := unstructured.NestedStringSlice(crd().Object, "spec", "names", "categories")
		g.Expect(err).NotTo(HaveOccurred())
		return categories
	}

	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	set := []string{"--namespace", release, "--set", "publicBaseURL=https://hooks.example.com"}
	g.Expect(inCluster("helm", append([]string{"install", "hookrun", previousChart(t), "--create-namespace"}, set...)...)).To(Succeed())
	g.Expect(categories()).To(Equal([]string{"hookrun-old"}))
	g.Expect(inCluster("helm", append([]string{"upgrade", "hookrun", chart}, set...)...)).
		To(MatchError(ContainSubstring("invalid ownership metadata")), "CRDs installed from crds/ belong to no release")
	for _, name := range []string{"agents", "agentruns", "agentthreads", "webhookendpoints"} {
		crd := "crd/" + name + ".agents.hookrun.dev"
		g.Expect(inCluster("kubectl", "label", crd, "app.kubernetes.io/managed-by=Helm", "--overwrite")).To(Succeed())
		g.Expect(inCluster("kubectl", "annotate", crd, "meta.helm.sh/release-name=hookrun",
			"meta.helm.sh/release-namespace="+release, "--overwrite")).To(Succeed())
	}
	g.Expect(inCluster("helm", append([]string{"upgrade", "hookrun", chart}, set...)...)).To(Succeed())
	g.Expect(categories()).To(Equal([]string{"hookrun"}), "helm upgrade changes the CRD")
	g.Expect(crd().GetAnnotations()).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
	// admission.ownerDefaulting Auto: helm asked the API server.
	mode, err := clusterinstall.DetectOwnerDefaulting(c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ownerDefaultingInstalled(g, c)).To(Equal(mode))
	if mode == clusterinstall.OwnerDefaultingPolicy {
		g.Expect(inCluster("helm", append([]string{"upgrade", "hookrun", chart, "--set", "admission.ownerDefaulting=Required"}, set...)...)).To(Succeed())
		g.Expect(ownerDefaultingInstalled(g, c)).To(Equal(clusterinstall.OwnerDefaultingRequired), "the upgrade removes the MutatingAdmissionPolicy")
	}

	g.Expect(inCluster("helm", "uninstall", "hookrun", "--namespace", release)).To(Succeed())
	err = c.Get(context.Background(), client.ObjectKey{Namespace: release, Name: "hookrun-operator"}, &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the release is gone: %v", err)
	g.Expect(categories()).To(Equal([]string{"hookrun"}), "the CRD is kept")
}

// clusterCommands runs the pinned helm or envtest's kubectl against the
// cluster of kubeconfig; the error carries the output.
func clusterCommands(t *testing.T, kubeconfig string) func(tool string, args ...string) error {
	home := t.TempDir()
	return func(tool string, args ...string) error {
		bin := os.Getenv("HELM")
		if tool == "kubectl" {
			bin = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		}
		cmd := exec.Command(bin, append(args, "--kubeconfig", kubeconfig)...)
		cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w\n%s", tool, strings.Join(args, " "), err, out)
		}
		return nil
	}
}

// previousChart is the chart as it was before its CRDs became templates:
// the CRDs in crds/, the WebhookEndpoint's with another category so that an
// upgrade that changes it shows.
func previousChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hookrun")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testenv.Root(), "charts", "hookrun"))); err != nil {
		t.Fatal(err)
	}
	bases := filepath.Join(testenv.Root(), "config", "crd", "bases")
	if err := os.CopyFS(filepath.Join(dir, "crds"), os.DirFS(bases)); err != nil {
		t.Fatal(err)
	}
	templates, err := filepath.Glob(filepath.Join(dir, "templates", "generated-crd-*.yaml"))
	if err != nil || len(templates) != 4 {
		t.Fatalf("CRD templates: %v %v", templates, err)
	}
	for _, f := range templates {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "crds", "agents.hookrun.dev_webhookendpoints.yaml")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(text), "    categories:\n    - hookrun\n", "    categories:\n    - hookrun-old\n", 1)
	if old == string(text) {
		t.Fatal("no category to change in " + file)
	}
	if err := os.WriteFile(file, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ownerDefaultingInstalled says which mode's policies are installed:
// Policy with the MutatingAdmissionPolicy hookrun-endpoint-owner, Required
// with none but the ValidatingAdmissionPolicy of that name that requires an
// owner.
func ownerDefaultingInstalled(g *WithT, c client.Client) clusterinstall.OwnerDefaulting {
	ctx := context.Background()
	policy := func(kind string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("admissionregistration.k8s.io/v1")
		o.SetKind(kind)
		if err := c.Get(ctx, client.ObjectKey{Name: "hookrun-endpoint-owner"}, o); err != nil {
			g.Expect(apierrors.IsNotFound(err) || meta.IsNoMatchError(err)).To(BeTrue(), "%s: %v", kind, err)
			return nil
		}
		return o
	}
	validating := policy("ValidatingAdmissionPolicy")
	g.Expect(validating).NotTo(BeNil())
	requires := strings.Contains(fmt.Sprint(validating.Object["spec"]), "spec.owner is required")
	if policy("MutatingAdmissionPolicy") != nil {
		g.Expect(requires).To(BeFalse(), "the MutatingAdmissionPolicy and the owner-required policy together")
		return clusterinstall.OwnerDefaultingPolicy
	}
	g.Expect(requires).To(BeTrue(), "neither mode's hookrun-endpoint-owner")
	return clusterinstall.OwnerDefaultingRequired
}
