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

package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/guide"
	"github.com/hookrun/hookrun/test/testenv"
)

// guideCommands says what the node does with each command of
// docs/getting-started.md (the end-to-end suite follows the same guide on
// the dev cluster, with a table of its own).
var guideCommands = []guide.Command{
	{Prefix: "kind create cluster", Skip: "the node of make test-node is the cluster"},
	{Prefix: "kubectl version", Want: "Server Version: v1."},
	{Prefix: "kubectl api-resources --api-group=admissionregistration.k8s.io", Want: "mutatingadmissionpolicies"},
	{Prefix: "helm install hookrun oci://", Want: "STATUS: deployed"},
	{Prefix: "kubectl -n hookrun-system wait", Want: "condition met"},
	{Prefix: "curl -fsSLO https://github.com/hookrun/hookrun/releases", Skip: "no network here; test/release applies the release's install.yaml on an API server (TestInstallYAML), and the chart is installed here"},
	{Prefix: "sed -i 's#https://hooks.example.com#", Skip: "see install.yaml above"},
	{Prefix: "kubectl apply -f install.yaml", Skip: "the chart is installed here; install.yaml is the chart's rendering (TestInstallYAML)"},
	{Prefix: "git clone", Skip: "the suite runs in the checkout"},
	{Prefix: "cd hookrun", Skip: "the suite runs in the checkout"},
	{Prefix: "docker build", Skip: "no Docker daemon here; make release builds the image with ko"},
	{Prefix: "kind load docker-image", Skip: "no Docker daemon here"},
	{Prefix: "VERSION=dev KO_DOCKER_REPO=", Skip: "make release builds the image with ko the same way, and the node runs it"},
	{Prefix: "helm install hookrun charts/hookrun", Skip: "the release's chart is installed from oci:// above"},
	{Prefix: "kubectl -n hookrun-system port-forward", Want: "Forwarding from 127.0.0.1:8080", Background: true},
	{Prefix: "make build", Skip: "the spec builds the plugin as make build does"},
	{Prefix: "export PATH=", Skip: "the spec's PATH holds the plugin and kubectl"},
	{Prefix: "kubectl hookrun --help", Want: "kubectl hookrun"},
	{Prefix: "kubectl create namespace team-a", Want: "created"},
	{Prefix: "kubectl config set-context --current --namespace=team-a", Want: "modified"},
	{Prefix: "kubectl apply -f agent.yaml", Want: "agent.agents.hookrun.dev/triage created"},
	{Prefix: "kubectl get agent triage -o wide", Want: "True", Eventually: true},
	{Prefix: "kubectl describe agent triage", Want: "Runs are sent to"},
	{Prefix: "kubectl auth whoami", Want: "hookrun-node-admin"},
	{Prefix: "kubectl apply -f endpoint.yaml", Want: "webhookendpoint.agents.hookrun.dev/github-issues created"},
	{Prefix: "kubectl get whe github-issues", Want: "Active", Eventually: true},
	{Prefix: "kubectl hookrun show github-issues", Want: "Sender:"},
	{Prefix: "kubectl hookrun secret github-issues"},
	{Prefix: "kubectl hookrun test github-issues --receiver-url", Want: ": success in ", Eventually: true},
	{Prefix: "kubectl hookrun test github-issues", Skip: "the endpoint's URL names the receiver's Service by its cluster DNS name, which this machine does not resolve; the line with --receiver-url goes through the port-forward"},
	{Prefix: "kubectl hookrun runs github-issues --watch", Want: "success", Follow: true},
	{Prefix: "kubectl get agentrun github-issues-", Want: "Demo agent received"},
	{Prefix: "kubectl delete namespace team-a", Want: `namespace "team-a" deleted`},
	{Prefix: "helm uninstall hookrun", Skip: "the node's specs after the guide go on with this release (the node is removed with it)"},
}

// followGuide runs docs/getting-started.md on the node: it installs the
// release with the guide's own helm line (the release's registry in place
// of ghcr.io), and the guide's Agent is the release's demo agent, applied
// into team-a from demo-agent.yaml before the guide applies its Agent.
func followGuide(ctx context.Context) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	bin := filepath.Join(dir, "bin")
	Expect(os.Mkdir(bin, 0o755)).To(Succeed())
	Expect(os.Symlink(node.kubectl, filepath.Join(bin, "kubectl"))).To(Succeed())
	Expect(os.Symlink(node.helm, filepath.Join(bin, "helm"))).To(Succeed())
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "kubectl-hookrun"), "./hack/kubectl-hookrun")
	build.Dir = testenv.Root()
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "building the plugin: %s", out)
	kc, err := os.ReadFile(node.kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig)

	version := strings.TrimPrefix(node.version, "v")
	install := "oci://" + node.registry + "/hookrun/charts/hookrun --version " + version + " --plain-http --set image.repository=" + node.registry + "/hookrun/hookrun"
	// NODE_TEST_HELM_SET: more values for the install, to run the specs
	// against them (receiver.shutdownDelay=0s shows what the drain saves).
	for _, set := range strings.Fields(os.Getenv("NODE_TEST_HELM_SET")) {
		install += " --set " + set
	}
	replace := strings.NewReplacer(
		// The release's registry, over plain HTTP, and its image.
		"oci://ghcr.io/hookrun/charts/hookrun --version X.Y.Z", install,
		"https://hooks.example.com", publicBaseURL,
		"http://triage.team-a.svc:8080/", demoAgentURL("team-a"),
	)
	ran := guide.Runner{
		Guide: filepath.Join(testenv.Root(), "docs", "getting-started.md"), Dir: dir, Env: env,
		Commands: guideCommands, Replace: replace,
		Files: map[string]string{"Agent": "agent.yaml", "WebhookEndpoint": "endpoint.yaml"},
		Rewrite: func(line string) string {
			switch {
			case strings.HasPrefix(line, "kubectl apply -f agent.yaml"):
				// The agent the guide's Agent points at.
				demoAgent(ctx, "team-a")
			case strings.HasPrefix(line, "kubectl get agentrun github-issues-"):
				runs := &agentsv1alpha1.AgentRunList{}
				Expect(admin.List(ctx, runs, client.InNamespace("team-a"), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "github-issues"})).To(Succeed())
				Expect(runs.Items).NotTo(BeEmpty(), "the guide's test call made no run")
				fields := strings.Fields(line)
				fields[3] = runs.Items[len(runs.Items)-1].Name
				line = strings.Join(fields, " ")
			}
			return line
		},
	}.Run(ctx)
	Expect(ran).To(BeNumerically(">=", 18), "the spec ran fewer of the guide's commands than it knows")
}
