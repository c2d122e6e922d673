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

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/guide"
	"github.com/hookrun/hookrun/test/testenv"
)

// guidePath is the guide the spec below follows, command by command.
const guidePath = "docs/getting-started.md"

// guideCommands says what the spec does with each command of the guide on
// the dev cluster (test/node follows the same guide on a real node).
var guideCommands = []guide.Command{
	{Prefix: "kind create cluster", Skip: "the suite's cluster is the dev cluster of make dev"},
	{Prefix: "kubectl version", Want: "Server Version: v1."},
	{Prefix: "kubectl api-resources --api-group=admissionregistration.k8s.io", Want: "mutatingadmissionpolicies"},
	{Prefix: "helm install hookrun oci://", Skip: "the dev cluster runs hookrun as processes; test/node runs this line on a real node, with the release of make release"},
	{Prefix: "kubectl -n hookrun-system wait", Skip: "the dev cluster runs the operator and the receiver as processes, not Deployments (test/node runs it)"},
	{Prefix: "curl -fsSLO https://github.com/hookrun/hookrun/releases", Skip: "no release is published here; test/release applies the release's install.yaml (TestInstallYAML)"},
	{Prefix: "sed -i 's#https://hooks.example.com#", Skip: "see install.yaml above"},
	{Prefix: "kubectl apply -f install.yaml", Skip: "test/release applies the release's install.yaml (TestInstallYAML)"},
	{Prefix: "git clone", Skip: "the suite runs in the checkout"},
	{Prefix: "cd hookrun", Skip: "the suite runs in the checkout"},
	{Prefix: "docker build", Skip: "no Docker daemon here; test/release builds the image with ko"},
	{Prefix: "kind load docker-image", Skip: "no Docker daemon here"},
	{Prefix: "VERSION=dev KO_DOCKER_REPO=", Skip: "make release builds the image with ko the same way (test/release)"},
	{Prefix: "helm install hookrun charts/hookrun", Skip: "the dev cluster runs hookrun as processes; test/chart renders the chart, test/release dry-runs it on an API server"},
	{Prefix: "kubectl -n hookrun-system port-forward", Skip: "the dev cluster's receiver already listens on loopback; the --receiver-url command gets its address (test/node forwards to the receiver's Service)"},
	{Prefix: "make build", Skip: "the suite builds the plugin as make build does"},
	{Prefix: "export PATH=", Skip: "the suite's PATH holds the plugin and kubectl"},
	{Prefix: "kubectl hookrun --help", Want: "kubectl hookrun"},
	{Prefix: "kubectl create namespace team-a", Want: "created"},
	{Prefix: "kubectl config set-context --current --namespace=team-a", Want: "modified"},
	{Prefix: "kubectl apply -f agent.yaml", Want: "agent.agents.hookrun.dev/triage created"},
	{Prefix: "kubectl get agent triage -o wide", Want: "True", Eventually: true},
	{Prefix: "kubectl describe agent triage", Want: "Runs are sent to"},
	{Prefix: "kubectl auth whoami", Want: "hookrun-dev-admin"},
	{Prefix: "kubectl apply -f endpoint.yaml", Want: "webhookendpoint.agents.hookrun.dev/github-issues created"},
	{Prefix: "kubectl get whe github-issues", Want: "Active", Eventually: true},
	{Prefix: "kubectl hookrun show github-issues", Want: "Sender:"},
	{Prefix: "kubectl hookrun secret github-issues"},
	{Prefix: "kubectl hookrun test github-issues", Want: ": success in ", Eventually: true},
	{Prefix: "kubectl hookrun runs github-issues --watch", Want: "success", Follow: true},
	{Prefix: "kubectl get agentrun github-issues-", Want: "Demo agent received"},
	{Prefix: "kubectl delete namespace team-a", Want: `namespace "team-a" deleted`},
	{Prefix: "helm uninstall hookrun", Skip: "the dev cluster stops with the suite"},
}

var _ = Describe("the getting-started guide", func() {
	It("works as written, step by step, on the dev cluster: each command runs, or the guide's table says why not", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		By("a PATH with kubectl and the plugin, and a kubeconfig of the cluster's admin the guide may change")
		bin := filepath.Join(dir, "bin")
		Expect(os.Mkdir(bin, 0o755)).To(Succeed())
		Expect(os.Symlink(cluster.Kubectl(), filepath.Join(bin, "kubectl"))).To(Succeed())
		Expect(os.Symlink(thePlugin(ctx), filepath.Join(bin, "kubectl-hookrun"))).To(Succeed())
		admin, err := os.ReadFile(cluster.Kubeconfig("admin"))
		Expect(err).NotTo(HaveOccurred())
		kubeconfig := filepath.Join(dir, "kubeconfig")
		Expect(os.WriteFile(kubeconfig, admin, 0o600)).To(Succeed())
		env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig)

		// What the guide names that the dev cluster has elsewhere.
		replace := strings.NewReplacer(
			"http://triage.team-a.svc:8080/", demoAgentURL,
			"http://127.0.0.1:8080", cluster.ReceiverURL,
		)
		lastRun := func() string {
			runs := &agentsv1alpha1.AgentRunList{}
			Expect(cluster.AdminClient.List(ctx, runs, client.InNamespace("team-a"))).To(Succeed())
			Expect(runs.Items).NotTo(BeEmpty(), "the guide's test call made no run")
			return runs.Items[len(runs.Items)-1].Name
		}

		ran := guide.Runner{
			Guide: filepath.Join(testenv.Root(), guidePath), Dir: dir, Env: env,
			Commands: guideCommands, Replace: replace,
			Files: map[string]string{"Agent": "agent.yaml", "WebhookEndpoint": "endpoint.yaml"},
			Rewrite: func(line string) string {
				if strings.HasPrefix(line, "kubectl get agentrun github-issues-") {
					fields := strings.Fields(line)
					fields[3] = lastRun()
					line = strings.Join(fields, " ")
				}
				return line
			},
			Check: func(line, out string) {
				if strings.HasPrefix(line, "kubectl hookrun secret github-issues") {
					// The secret GitHub needs, exactly, on the first line (a
					// reminder to save it follows).
					secret := &corev1.Secret{}
					Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: agentsv1alpha1.GeneratedSecretName("github-issues")}, secret)).To(Succeed())
					first, _, _ := strings.Cut(out, "\n")
					Expect(first).To(Equal(string(secret.Data[agentsv1alpha1.WebhookSecretKey])))
				}
			},
		}.Run(ctx)
		Expect(ran).To(BeNumerically(">=", 15), "the spec ran fewer of the guide's commands than it knows")
	}, SpecTimeout(5*time.Minute))
})
