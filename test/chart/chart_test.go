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

// Package chart tests charts/hookrun: it lints and renders the chart with
// the pinned helm, installs what it renders into a real API server in a
// namespace other than hookrun-system, and checks the access control it
// carries.
package chart

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers"
	"github.com/hookrun/hookrun/controllers/sharedflags"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/receiver"
	"github.com/hookrun/hookrun/test/testenv"
)

const (
	release   = "platform" // the release namespace, deliberately not hookrun-system
	gitops    = "system:serviceaccount:flux-system:kustomize-controller"
	argoCD    = "system:serviceaccount:argocd:argocd-server"
	alice     = "alice@example.com"
	bob       = "bob@example.com"
	teamSpace = "team-a"
)

// kubeVersion is the Kubernetes version helm template renders for: the
// chart requires 1.36 or later, and helm built without its release's
// ldflags assumes 1.20.
const kubeVersion = "1.37.0"

// helmCommand is the pinned helm (make test sets HELM) with args, rendering
// for kubeVersion.
func helmCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		t.Fatal("HELM is not set: run `make test`, which installs the pinned helm into bin/")
	}
	if len(args) > 0 && (args[0] == "template" || args[0] == "lint") {
		args = append(args, "--kube-version", kubeVersion)
	}
	return exec.Command(bin, args...)
}

// renders holds the output of each helm template the tests ran, by its
// arguments: the chart does not change while they run, and several render
// the same values (a render by the race-built helm takes about a second).
var renders sync.Map

// helm runs the pinned helm and returns its output.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	key := strings.Join(args, "\x00")
	if args[0] == "template" {
		if out, ok := renders.Load(key); ok {
			if s, ok := out.(string); ok {
				return s
			}
		}
	}
	out, err := helmCommand(t, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if args[0] == "template" {
		renders.Store(key, string(out))
	}
	return string(out)
}

func TestChartInstallsAccessControl(t *testing.T) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(20 * time.Second)
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	helm(t, "lint", "--strict", chart, "--set", "publicBaseURL=https://hooks.example.com")

	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(testenv.Root(), "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(agentsv1alpha1.AddToScheme(scheme)).To(Succeed())
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	// Rendered as helm install would for this API server: the owner
	// defaulting (Auto) follows what its discovery serves.
	mode, err := clusterinstall.DetectOwnerDefaulting(admin)
	g.Expect(err).NotTo(HaveOccurred())
	releaseValues := []string{"--namespace", release, "--set", "publicBaseURL=https://hooks.example.com",
		"--set", "admission.exemptUsers={" + gitops + "}", "--set", "admission.actionUsers={" + argoCD + "}"}
	if mode == clusterinstall.OwnerDefaultingPolicy {
		releaseValues = append(releaseValues, "--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")
	}
	rendered := helm(t, append([]string{"template", "hookrun", chart}, releaseValues...)...)
	manifest := filepath.Join(t.TempDir(), "rendered.yaml")
	g.Expect(os.WriteFile(manifest, []byte(rendered), 0o600)).To(Succeed())
	as := func(user string, groups ...string) client.Client {
		c, err := client.New(testenv.AsUser(cfg, user, groups...), client.Options{Scheme: scheme})
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	ctx := context.Background()
	for _, ns := range []string{release, teamSpace} {
		g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	// Everything the chart renders, the optional parts too, passes the API
	// server's validation (kubectl apply --dry-run=server).
	full := helm(t, "template", "hookrun", chart, "--namespace", release,
		"--set", "publicBaseURL=https://hooks.example.com", "--set", "receiver.ingress.enabled=true",
		"--set", "receiver.autoscaling.enabled=true", "--set", "receiver.networkPolicy.enabled=true",
		"-f", egressValues(t), "-f", collectorValues(t), "-f", podValues(t))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(devcluster.WriteKubeconfig(cfg, "admin", kubeconfig)).To(Succeed())
	dry := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), "--kubeconfig", kubeconfig,
		"apply", "--dry-run=server", "-f", "-")
	dry.Stdin = strings.NewReader(full)
	out, err := dry.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl apply --dry-run=server:\n%s", out)
	for _, kind := range []string{"deployment.apps/hookrun-operator", "deployment.apps/hookrun-receiver", "service/hookrun-receiver",
		"ingress.networking.k8s.io/hookrun-receiver", "horizontalpodautoscaler.autoscaling/hookrun-receiver",
		"poddisruptionbudget.policy/hookrun-receiver", "networkpolicy.networking.k8s.io/hookrun-receiver",
		"networkpolicy.networking.k8s.io/hookrun-operator"} {
		g.Expect(string(out)).To(ContainSubstring(kind + " created (server dry run)"))
	}

	g.Expect(clusterinstall.Apply(ctx, admin, manifest)).To(Succeed())

	// The roles are bound to the release's service accounts.
	sa := func(name string) string { return "system:serviceaccount:" + release + ":" + name }
	for _, c := range []struct {
		user, verb, group, resource, namespace string
		want                                   bool
	}{
		{sa("hookrun-receiver"), "create", "", "secrets", teamSpace, true},
		{sa("hookrun-receiver"), "get", "", "secrets", teamSpace, false},
		{sa("hookrun-receiver"), "list", "", "secrets", teamSpace, false},
		// The signing keys of signed senders: only in its own namespace.
		{sa("hookrun-receiver"), "get", "", "secrets", release, true},
		{sa("hookrun-receiver"), "watch", "", "secrets", release, true},
		{sa("hookrun-receiver"), "get", agentsv1alpha1.GroupVersion.Group, "agentruns", teamSpace, true},
		{sa("hookrun-receiver"), "create", agentsv1alpha1.GroupVersion.Group, "agentruns", teamSpace, true},
		{sa("hookrun-operator"), "delete", agentsv1alpha1.GroupVersion.Group, "agentruns", teamSpace, true},
		{sa("hookrun-operator"), "create", agentsv1alpha1.GroupVersion.Group, "agentruns", teamSpace, false},
	} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: c.user, Groups: []string{"system:serviceaccounts", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: c.namespace, Verb: c.verb, Group: c.group, Resource: c.resource},
		}}
		g.Expect(admin.Create(ctx, review)).To(Succeed())
		g.Expect(review.Status.Allowed).To(Equal(c.want), "%s %s %s in %s", c.user, c.verb, c.resource, c.namespace)
	}

	// Ownership, with the settings the release gave the policy.
	g.Expect(admin.Create(ctx, &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: teamSpace, Name: "triage"},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/"}},
	})).To(Succeed())
	for user, role := range map[string]string{alice: "hookrun-agent-user", bob: "hookrun-agent-user", gitops: "hookrun-edit", argoCD: "hookrun-edit"} {
		g.Expect(admin.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: teamSpace, GenerateName: "member-"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})).To(Succeed())
	}
	checkOwnership(g, mode, admin, as)
	if mode == clusterinstall.OwnerDefaultingPolicy {
		// The same release in the owner-required mode, as on an API
		// server without MutatingAdmissionPolicy: applied over the first,
		// without the MutatingAdmissionPolicy it no longer renders.
		rendered := helm(t, append([]string{"template", "hookrun", chart, "--set", "admission.ownerDefaulting=Required"}, releaseValues...)...)
		g.Expect(objects(t, rendered)).NotTo(HaveKey("admissionregistration.k8s.io/v1/MutatingAdmissionPolicy//hookrun-endpoint-owner"))
		required := filepath.Join(t.TempDir(), "required.yaml")
		g.Expect(os.WriteFile(required, []byte(rendered), 0o600)).To(Succeed())
		g.Expect(clusterinstall.Apply(ctx, admin, required)).To(Succeed())
		for _, kind := range []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"} {
			o := &unstructured.Unstructured{}
			o.SetAPIVersion("admissionregistration.k8s.io/v1")
			o.SetKind(kind)
			o.SetName("hookrun-endpoint-owner")
			g.Expect(admin.Delete(ctx, o)).To(Succeed())
		}
		checkOwnership(g, clusterinstall.OwnerDefaultingRequired, admin, as)
	}

	smokeTest(t, g, cfg, admin, as(alice))
}

// egressValues writes a values file that limits the operator's egress:
// an allow list of agents and the NetworkPolicy with cluster CIDRs
// excepted, agents in one namespace and on two ports.
func egressValues(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "egress.yaml")
	err := os.WriteFile(file, []byte(`
operator:
  agentAllowedHosts: ["*.agents.example.com", "triage.team-a.svc.cluster.local"]
  agentAllowedCIDRs: ["203.0.113.0/24", "2001:db8::/32"]
  networkPolicy:
    enabled: true
    apiServer:
      ipBlocks: [{cidr: 172.18.0.2/32}]
      ports: [6443]
    agentIPBlocks:
      - cidr: 0.0.0.0/0
        except: [10.0.0.0/8, 169.254.0.0/16]
    agentPeers:
      - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}
    agentPorts: [443, 8080]
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// The allow list of agents reaches the operator as flags it accepts, and
// the operator's NetworkPolicy allows DNS, the API server and the agents
// the values name, and nothing else.
func TestChartOperatorAgentEgress(t *testing.T) {
	g := NewWithT(t)
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	render := func(args ...string) map[string]*unstructured.Unstructured {
		return objects(t, helm(t, append([]string{"template", "hookrun", chart, "--namespace", release,
			"--set", "publicBaseURL=https://hooks.example.com"}, args...)...))
	}
	const (
		deployment = "apps/v1/Deployment/" + release + "/hookrun-operator"
		policy     = "networking.k8s.io/v1/NetworkPolicy/" + release + "/hookrun-operator"
	)
	operatorArgs := func(objs map[string]*unstructured.Unstructured) []string {
		args, _, err := unstructured.NestedStringSlice(onlyContainer(g, objs[deployment]), "args")
		g.Expect(err).NotTo(HaveOccurred())
		return args
	}
	egress := func(objs map[string]*unstructured.Unstructured) []any {
		g.Expect(objs).To(HaveKey(policy))
		rules, _, _ := unstructured.NestedSlice(objs[policy].Object, "spec", "egress")
		return rules
	}

	// Defaults: no allow list, no policy.
	defaults := render()
	g.Expect(defaults).NotTo(HaveKey(policy))
	g.Expect(operatorArgs(defaults)).NotTo(ContainElement(HavePrefix("--agent-allowed-")))

	objs := render("-f", egressValues(t))
	args := operatorArgs(objs)
	g.Expect(args).To(ContainElements(
		"--agent-allowed-hosts=*.agents.example.com,triage.team-a.svc.cluster.local",
		"--agent-allowed-cidrs=203.0.113.0/24,2001:db8::/32"))
	opts, shared := controllers.NewOperatorOptions(), sharedflags.NewOptions()
	parseArgs(g, args, opts.BindFlags, sharedFlags(shared, "operator"))
	g.Expect(opts.Validate()).To(Succeed())
	g.Expect(shared.Validate()).To(Succeed())
	allow, err := opts.AgentAllowList()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(allow.AllowsHost("triage.team-a.svc.cluster.local")).To(BeTrue())
	g.Expect(allow.AllowsHost("kubernetes.default.svc")).To(BeFalse())

	field := func(o *unstructured.Unstructured, path ...string) any {
		v, _, err := unstructured.NestedFieldNoCopy(o.Object, path...)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
	np := objs[policy]
	g.Expect(field(np, "spec", "policyTypes")).To(Equal([]any{"Egress"}))
	g.Expect(field(np, "spec", "podSelector", "matchLabels")).To(Equal(field(objs[deployment], "spec", "template", "metadata", "labels")),
		"the policy selects the operator's pods")
	g.Expect(egress(objs)).To(Equal([]any{
		map[string]any{"ports": []any{
			map[string]any{"port": int64(53), "protocol": "UDP"}, map[string]any{"port": int64(53), "protocol": "TCP"}}},
		map[string]any{
			"to":    []any{map[string]any{"ipBlock": map[string]any{"cidr": "172.18.0.2/32"}}},
			"ports": []any{map[string]any{"port": int64(6443), "protocol": "TCP"}}},
		map[string]any{
			"to": []any{
				map[string]any{"ipBlock": map[string]any{"cidr": "0.0.0.0/0", "except": []any{"10.0.0.0/8", "169.254.0.0/16"}}},
				map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "team-a"}}}},
			"ports": []any{map[string]any{"port": int64(443), "protocol": "TCP"}, map[string]any{"port": int64(8080), "protocol": "TCP"}}},
	}))

	// Enabled with the defaults: agents anywhere, on any port.
	rules := egress(render("--set", "operator.networkPolicy.enabled=true"))
	g.Expect(rules).To(HaveLen(3))
	g.Expect(rules[2]).To(Equal(map[string]any{"to": []any{
		map[string]any{"ipBlock": map[string]any{"cidr": "0.0.0.0/0"}}, map[string]any{"ipBlock": map[string]any{"cidr": "::/0"}}}}))
	// No agent destinations: no agent rule at all (a rule without peers would allow everything).
	rules = egress(render("--set", "operator.networkPolicy.enabled=true", "--set-json", "operator.networkPolicy.agentIPBlocks=[]"))
	g.Expect(rules).To(HaveLen(2))
	for _, r := range rules {
		g.Expect(r).To(HaveKey("ports"), "every rule names its ports")
	}

	// The schema refuses what the operator would.
	for _, bad := range []string{"operator.agentAllowedHosts={agent.example.com:443}", "operator.agentAllowedCIDRs={example.com}"} {
		out, err := helmCommand(t, "template", "hookrun", chart, "--set", "publicBaseURL=https://hooks.example.com",
			"--set", bad).CombinedOutput()
		g.Expect(err).To(HaveOccurred(), "helm template --set %s:\n%s", bad, out)
		g.Expect(string(out)).To(ContainSubstring("does not match pattern"))
	}
}

// smokeTest runs the operator and the receiver as the release's service
// accounts (the chart's RBAC is all they have) and sends one call through
// them to a demo agent.
func smokeTest(t *testing.T, g *WithT, cfg *rest.Config, admin, owner client.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	agentSrv := httptest.NewServer(demoagent.New())
	t.Cleanup(agentSrv.Close)
	scheme := admin.Scheme()

	ropts := receiver.NewOptions()
	ropts.Namespace = release
	ropts.ListenAddress = "127.0.0.1:0"
	rmgr, err := ctrl.NewManager(testenv.AsServiceAccount(cfg, release, clusterinstall.ReceiverServiceAccount), ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Cache: receiver.CacheOptions(ropts),
	})
	g.Expect(err).NotTo(HaveOccurred())
	h, err := receiver.Setup(ctx, rmgr, ropts, receiver.Dependencies{})
	g.Expect(err).NotTo(HaveOccurred())
	rsrv := httptest.NewServer(h)
	t.Cleanup(rsrv.Close)

	oopts := controllers.NewOperatorOptions()
	oopts.PublicBaseURL = rsrv.URL
	oopts.Namespace = release
	omgr, err := ctrl.NewManager(testenv.AsServiceAccount(cfg, release, clusterinstall.OperatorServiceAccount), ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Client: client.Options{Cache: controllers.ClientCacheOptions()}, Cache: controllers.CacheOptions(oopts.Namespace),
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(controllers.SetupOperator(ctx, omgr, oopts, controllers.Dependencies{})).To(Succeed())
	for _, m := range []ctrl.Manager{rmgr, omgr} {
		go func() { _ = m.Start(ctx) }()
	}

	agent := &agentsv1alpha1.Agent{}
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: teamSpace, Name: "triage"}, agent)).To(Succeed())
	patch := client.MergeFrom(agent.DeepCopy())
	agent.Spec.A2A.URL = agentSrv.URL
	g.Expect(admin.Patch(ctx, agent, patch)).To(Succeed())
	ep := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: teamSpace, Name: "smoke"},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Owner:          &agentsv1alpha1.Owner{User: alice}, // in either mode
		},
	}
	g.Expect(owner.Create(ctx, ep)).To(Succeed())
	var url, secret string
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(ep), ep)).To(Succeed())
		g.Expect(ep.Status.URL).NotTo(BeEmpty())
		s := &corev1.Secret{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: teamSpace, Name: agentsv1alpha1.GeneratedSecretName("smoke")}, s)).To(Succeed())
		url, secret = ep.Status.URL, string(s.Data[agentsv1alpha1.WebhookSecretKey])
	}).Should(Succeed())
	var runID string
	g.Eventually(func() int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"smoke":1}`))
		req.Header.Set(agentsv1alpha1.SecretHeader, secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		defer func() { _ = resp.Body.Close() }()
		var body struct {
			RunID string `json:"runId"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		runID = body.RunID
		return resp.StatusCode
	}).Should(Equal(http.StatusAccepted), "the receiver informer sees the endpoint")
	g.Eventually(func() agentsv1alpha1.RunState {
		run := &agentsv1alpha1.AgentRun{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: teamSpace, Name: runID}, run)).To(Succeed())
		return run.Status.State
	}).Should(Equal(agentsv1alpha1.RunSuccess))
}
