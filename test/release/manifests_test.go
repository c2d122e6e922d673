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
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// What dist/demo-agent.yaml runs, as its header comment and docs/operations.md
// name it.
const (
	demoNamespace = "hookrun-demo"
	demoName      = "demo-agent" // the Deployment, the Service and the Agent
	demoAgentURL  = "http://demo-agent.hookrun-demo.svc.cluster.local/"
	demoCardPath  = "/.well-known/agent-card.json"
)

// hookrun's CRDs, by name.
var crdNames = []string{
	"agentruns.agents.hookrun.dev", "agents.agents.hookrun.dev",
	"agentthreads.agents.hookrun.dev", "webhookendpoints.agents.hookrun.dev",
}

// applyCRDs applies dist/crds.yaml to the test API server as its header says
// (server-side) and waits until the CRDs are established.
func applyCRDs(t *testing.T, r release) {
	t.Helper()
	if out, err := kubectl(t, distFile(t, r, "crds.yaml"), "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply --server-side -f crds.yaml: %v\n%s", err, out)
	}
	args := []string{"wait", "--for=condition=Established", "--timeout=60s"}
	for _, n := range crdNames {
		args = append(args, "crd/"+n)
	}
	if out, err := kubectl(t, nil, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// dist/crds.yaml holds hookrun's four CRDs, each as config/crd/bases has it,
// and applies server-side to a real API server, where they become
// established.
func TestCRDsYAML(t *testing.T) {
	r := theRelease(t)
	var names []string
	for _, o := range objects(t, distFile(t, r, "crds.yaml")) {
		names = append(names, o.GetKind()+"/"+o.GetName())
		base, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "crd", "bases", "agents.hookrun.dev_"+strings.SplitN(o.GetName(), ".", 2)[0]+".yaml"))
		if err != nil {
			t.Errorf("%s: %v", o.GetName(), err)
			continue
		}
		if want := objects(t, base); len(want) != 1 || !reflect.DeepEqual(o.Object, want[0].Object) {
			t.Errorf("%s is not config/crd/bases' CRD", o.GetName())
		}
	}
	var want []string
	for _, n := range crdNames {
		want = append(want, "CustomResourceDefinition/"+n)
	}
	if slices.Sort(names); !slices.Equal(names, want) {
		t.Errorf("crds.yaml holds %v, want %v", names, want)
	}
	applyCRDs(t, r)
}

// decodeStrict decodes o into v, refusing fields v does not have.
func decodeStrict(t *testing.T, o *unstructured.Unstructured, v any) {
	t.Helper()
	data, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// demoAgentManifest is dist/demo-agent.yaml's objects, decoded: it fails the
// test unless the file holds the Namespace, Deployment, Service and Agent
// and nothing else.
func demoAgentManifest(t *testing.T, r release) (*appsv1.Deployment, *corev1.Service, *agentsv1alpha1.Agent) {
	t.Helper()
	var (
		kinds      []string
		deployment appsv1.Deployment
		service    corev1.Service
		agent      agentsv1alpha1.Agent
	)
	for _, o := range objects(t, distFile(t, r, "demo-agent.yaml")) {
		kinds = append(kinds, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
		switch o.GetKind() {
		case "Deployment":
			decodeStrict(t, o, &deployment)
		case "Service":
			decodeStrict(t, o, &service)
		case "Agent":
			decodeStrict(t, o, &agent)
		}
	}
	want := []string{"Namespace//" + demoNamespace, "Deployment/" + demoNamespace + "/" + demoName,
		"Service/" + demoNamespace + "/" + demoName, "Agent/" + demoNamespace + "/" + demoName}
	if !slices.Equal(kinds, want) {
		t.Fatalf("demo-agent.yaml holds %v, want %v", kinds, want)
	}
	return &deployment, &service, &agent
}

// dist/demo-agent.yaml runs the release's demo agent image by digest, as
// restricted Pods allow (non-root, read-only root, no capabilities,
// RuntimeDefault seccomp), with resources and probes on its card; the Service
// demo-agent serves its port on 80, and the Agent reads the card at the
// Service's DNS name. The host's binary from the image, run with the
// Deployment's arguments (on another port), answers the probes' path, and
// reached by that name its card sends clients to that same URL. The file
// applies to a real API server once crds.yaml is applied.
func TestDemoAgentYAML(t *testing.T) {
	r := theRelease(t)
	ref := r.demoAgent().ref(t, r)
	deployment, service, agent := demoAgentManifest(t, r)

	pod := deployment.Spec.Template.Spec
	if len(pod.Containers) != 1 || pod.Containers[0].Image != ref {
		t.Fatalf("the Deployment runs %+v, want one container of %s (by digest)", pod.Containers, ref)
	}
	c := pod.Containers[0]
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the Pod's securityContext %+v, want runAsNonRoot, runAsUser 65532, seccomp RuntimeDefault", sc)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("the container's securityContext %+v, want a read-only root, no privilege escalation, all capabilities dropped", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v, want CPU and memory requests and a memory limit", c.Resources)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" {
		t.Fatalf("ports %+v, want one named http", c.Ports)
	}
	port := c.Ports[0].ContainerPort
	listen := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--listen="); ok {
			listen = v
		}
	}
	if listen != fmt.Sprintf(":%d", port) {
		t.Errorf("args %q: the agent listens on %q, want :%d (the container port, on every address)", c.Args, listen, port)
	}
	var probePaths []string
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("the %s probe %+v, want an HTTP GET on the port http", name, p)
			continue
		}
		probePaths = append(probePaths, p.HTTPGet.Path)
	}

	if sp := service.Spec.Ports; len(sp) != 1 || sp[0].Port != 80 || sp[0].TargetPort != intstr.FromString("http") ||
		!subset(service.Spec.Selector, deployment.Spec.Template.Labels) {
		t.Errorf("the Service: ports %+v, selector %v; want 80 to the port http of the Deployment's Pods (labels %v)", sp, service.Spec.Selector, deployment.Spec.Template.Labels)
	}
	if a := agent.Spec.A2A; a.URL != demoAgentURL || a.ProtocolVersion != "" {
		t.Errorf("the Agent: url %q, protocolVersion %q; want %s and none (the card is read)", a.URL, a.ProtocolVersion, demoAgentURL)
	}

	t.Run("card", func(t *testing.T) {
		p := runtime.GOOS + "/" + runtime.GOARCH
		if !slices.Contains(platforms, p) {
			t.Skipf("the images have no %s binary to run", p)
		}
		files := exportFiles(t, ref, p, "ko-app/demo-agent")
		bin := filepath.Join(t.TempDir(), "demo-agent")
		if err := os.WriteFile(bin, files["ko-app/demo-agent"], 0o755); err != nil {
			t.Fatal(err)
		}
		addr := freeLoopbackAddress(t)
		args := slices.Clone(c.Args)
		args[slices.Index(args, "--listen="+listen)] = "--listen=" + addr
		cmd := exec.CommandContext(t.Context(), bin, args...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})

		for _, path := range probePaths {
			if code, _ := getUntilServed(t, "http://"+addr+path, ""); code != http.StatusOK {
				t.Errorf("GET %s (a probe's path): %d, want 200\n%s", path, code, &log)
			}
		}
		host := strings.TrimSuffix(strings.TrimPrefix(demoAgentURL, "http://"), "/")
		code, body := getUntilServed(t, "http://"+addr+demoCardPath, host)
		var card struct {
			SupportedInterfaces []struct {
				URL             string `json:"url"`
				ProtocolBinding string `json:"protocolBinding"`
			} `json:"supportedInterfaces"`
		}
		if err := json.Unmarshal(body, &card); code != http.StatusOK || err != nil || len(card.SupportedInterfaces) == 0 {
			t.Fatalf("the card through %s: %d %v\n%s\n%s", host, code, err, body, &log)
		}
		if i := card.SupportedInterfaces[0]; i.URL != demoAgentURL || i.ProtocolBinding != "JSONRPC" {
			t.Errorf("the card's first interface %+v, want JSONRPC at %s", i, demoAgentURL)
		}
		for _, i := range card.SupportedInterfaces {
			if !strings.HasPrefix(i.URL, demoAgentURL) {
				t.Errorf("the card sends %s to %s, not under the Service's URL %s", i.ProtocolBinding, i.URL, demoAgentURL)
			}
		}
	})

	applyCRDs(t, r)
	if out, err := kubectl(t, distFile(t, r, "demo-agent.yaml"), "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply -f demo-agent.yaml: %v\n%s", err, out)
	}
	if out, err := kubectl(t, nil, "get", "-n", demoNamespace, "deployment/"+demoName, "service/"+demoName, "agent/"+demoName); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}

// subset is whether every label of selector is in labels.
func subset(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

// freeLoopbackAddress is 127.0.0.1:PORT with a port free a moment ago.
func freeLoopbackAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// getUntilServed GETs url (with the Host header host, if given) until a
// server answers, for at most 30 s, and returns the answer's status and body.
func getUntilServed(t *testing.T, url, host string) (int, []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			var body bytes.Buffer
			_, err = body.ReadFrom(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, body.Bytes()
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
