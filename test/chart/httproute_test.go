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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
)

// gatewayAPICRDs are the Gateway API CRDs (standard channel) of the module
// the test builds with: HTTPRoute and what it refers to.
func gatewayAPICRDs(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	var files []string
	for _, kind := range []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"} {
		files = append(files, filepath.Join(dir, "gateway.networking.k8s.io_"+kind+".yaml"))
	}
	return files
}

// TestChartHTTPRoute: receiver.httpRoute renders a Gateway API HTTPRoute for
// the receive route only, which the API server accepts with the Gateway API
// CRDs installed (server dry run) and refuses when a value is invalid.
func TestChartHTTPRoute(t *testing.T) {
	g := NewWithT(t)
	routeValues := valuesFile(t, `receiver:
  httpRoute:
    enabled: true
    parentRefs:
    - {name: public, namespace: gateway-system, sectionName: https}
    labels: {team: platform}
`)
	objs := render(t, "-f", routeValues)
	u := objs["gateway.networking.k8s.io/v1/HTTPRoute/"+release+"/hookrun-receiver"]
	g.Expect(u).NotTo(BeNil(), "no HTTPRoute rendered")
	b, err := yaml.Marshal(u.Object)
	g.Expect(err).NotTo(HaveOccurred())
	var route gatewayv1.HTTPRoute
	g.Expect(yaml.UnmarshalStrict(b, &route)).To(Succeed())

	section := gatewayv1.SectionName("https")
	gwNamespace := gatewayv1.Namespace("gateway-system")
	g.Expect(route.Spec.ParentRefs).To(Equal([]gatewayv1.ParentReference{{Name: "public", Namespace: &gwNamespace, SectionName: &section}}))
	g.Expect(route.Spec.Hostnames).To(Equal([]gatewayv1.Hostname{"hooks.example.com"}), "the host of publicBaseURL")
	g.Expect(route.Labels).To(HaveKeyWithValue("team", "platform"))
	g.Expect(route.Spec.Rules).To(HaveLen(1))
	rule := route.Spec.Rules[0]
	g.Expect(rule.Matches).To(HaveLen(1))
	g.Expect(*rule.Matches[0].Path.Type).To(Equal(gatewayv1.PathMatchPathPrefix))
	g.Expect(*rule.Matches[0].Path.Value).To(Equal("/api/webhooks/"))
	g.Expect(rule.BackendRefs).To(HaveLen(1))
	g.Expect(string(rule.BackendRefs[0].Name)).To(Equal("hookrun-receiver"))
	service := objs["v1/Service/"+release+"/hookrun-receiver"]
	g.Expect(service).NotTo(BeNil())
	ports, _, err := unstructured.NestedSlice(service.Object, "spec", "ports")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ports).NotTo(BeEmpty())
	port, ok := ports[0].(map[string]any)
	g.Expect(ok).To(BeTrue())
	g.Expect(int64(*rule.BackendRefs[0].Port)).To(BeEquivalentTo(port["port"]), "the receiver Service's port")

	// No HTTPRoute unless asked for; none without a Gateway to attach to.
	for key := range render(t) {
		g.Expect(key).NotTo(ContainSubstring("HTTPRoute"))
	}
	out, err := helmCommand(t, "template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"), "--namespace", release,
		"--set", "publicBaseURL=https://hooks.example.com", "--set", "receiver.httpRoute.enabled=true").CombinedOutput()
	g.Expect(err).To(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("receiver.httpRoute.parentRefs must name at least one Gateway"))

	// The API server with the Gateway API CRDs validates what the chart renders.
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	env := &envtest.Environment{CRDDirectoryPaths: gatewayAPICRDs(t), ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: release}})).To(Succeed())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(devcluster.WriteKubeconfig(cfg, "admin", kubeconfig)).To(Succeed())
	dryRun := func(manifest []byte) (string, error) {
		cmd := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), "--kubeconfig", kubeconfig,
			"apply", "--dry-run=server", "-f", "-")
		cmd.Stdin = strings.NewReader(string(manifest))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out2, err := dryRun(b)
	g.Expect(err).NotTo(HaveOccurred(), out2)
	g.Expect(out2).To(ContainSubstring("httproute.gateway.networking.k8s.io/hookrun-receiver created (server dry run)"))

	// A hostname the Gateway API refuses is refused by the API server too.
	bad := render(t, "-f", routeValues, "--set", "receiver.httpRoute.hostnames={Hooks_Example.com}")
	b, err = yaml.Marshal(bad["gateway.networking.k8s.io/v1/HTTPRoute/"+release+"/hookrun-receiver"].Object)
	g.Expect(err).NotTo(HaveOccurred())
	out2, err = dryRun(b)
	g.Expect(err).To(HaveOccurred(), out2)
	g.Expect(out2).To(ContainSubstring("spec.hostnames"))
}
