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
	// Each match names its method: under Gateway API precedence (path, then
	// method, then headers and query parameters, then the oldest route) a
	// match without one loses to a route of another namespace with the same
	// prefix and `method: POST`, which would then receive every webhook.
	g.Expect(rule.Matches).To(HaveLen(2))
	var methods []gatewayv1.HTTPMethod
	for _, m := range rule.Matches {
		g.Expect(*m.Path.Type).To(Equal(gatewayv1.PathMatchPathPrefix))
		g.Expect(*m.Path.Value).To(Equal("/api/webhooks/"))
		g.Expect(m.Method).NotTo(BeNil(), "a match without a method is outranked by one with it")
		g.Expect(m.Headers).To(BeEmpty())
		g.Expect(m.QueryParams).To(BeEmpty())
		methods = append(methods, *m.Method)
	}
	g.Expect(methods).To(ConsistOf(gatewayv1.HTTPMethodPost, gatewayv1.HTTPMethodOptions),
		"POST for deliveries, OPTIONS for the CloudEvents handshake")
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
	// A parent without a listener would attach to every listener of the
	// Gateway, a shared one too, where another namespace's route can
	// outrank this one (Gateway API precedence) and receive every webhook.
	noSection := valuesFile(t, `receiver:
  httpRoute:
    enabled: true
    parentRefs:
    - {name: public, namespace: gateway-system, sectionName: https}
    - {name: shared, namespace: gateway-system}
`)
	out, err = helmCommand(t, "template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"), "--namespace", release,
		"--set", "publicBaseURL=https://hooks.example.com", "-f", noSection).CombinedOutput()
	g.Expect(err).To(HaveOccurred(), "%s", out)
	g.Expect(string(out)).To(And(ContainSubstring(`"name":"shared"`), ContainSubstring("names no sectionName")))

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

	// The Gateway docs/operations.md shows is valid, and its listener admits
	// routes of the release namespace only, for the receiver's hostname.
	gateway := documentedGateway(t)
	g.Expect(admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gateway.Namespace}})).To(Succeed())
	out2, err = dryRun(mustYAML(t, gateway))
	g.Expect(err).NotTo(HaveOccurred(), out2)
	g.Expect(out2).To(ContainSubstring("gateway.gateway.networking.k8s.io/public created (server dry run)"))
	g.Expect(gateway.Spec.Listeners).To(HaveLen(1))
	listener := gateway.Spec.Listeners[0]
	g.Expect(listener.Hostname).To(HaveValue(BeEquivalentTo("hooks.example.com")), "the receiver's exact hostname")
	g.Expect(listener.AllowedRoutes.Namespaces.From).To(HaveValue(Equal(gatewayv1.NamespacesFromSelector)))
	g.Expect(listener.AllowedRoutes.Namespaces.Selector.MatchLabels).To(Equal(map[string]string{
		"kubernetes.io/metadata.name": "hookrun-system"}), "the release namespace of docs/operations.md's install, and no other")
	g.Expect(listener.AllowedRoutes.Namespaces.Selector.MatchExpressions).To(BeEmpty())
	g.Expect(gateway.Spec.AllowedListeners).To(BeNil(), "no ListenerSets")

	// A hostname the Gateway API refuses is refused by the API server too.
	bad := render(t, "-f", routeValues, "--set", "receiver.httpRoute.hostnames={Hooks_Example.com}")
	b, err = yaml.Marshal(bad["gateway.networking.k8s.io/v1/HTTPRoute/"+release+"/hookrun-receiver"].Object)
	g.Expect(err).NotTo(HaveOccurred())
	out2, err = dryRun(b)
	g.Expect(err).To(HaveOccurred(), out2)
	g.Expect(out2).To(ContainSubstring("spec.hostnames"))
}

// documentedGateway is the Gateway of docs/operations.md: the YAML block
// holding "kind: Gateway".
func documentedGateway(t *testing.T) *gatewayv1.Gateway {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, "\nkind: Gateway\n") {
			continue
		}
		var gw gatewayv1.Gateway
		if err := yaml.UnmarshalStrict([]byte(block), &gw); err != nil {
			t.Fatalf("the Gateway of docs/operations.md: %v", err)
		}
		return &gw
	}
	t.Fatal("docs/operations.md shows no Gateway")
	return nil
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
