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
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// guidePath is the guide the spec below follows, command by command.
const guidePath = "docs/getting-started.md"

// guideBlock is one fenced block of the guide, with the step it is under.
type guideBlock struct {
	step, lang string
	lines      []string // continuation lines joined, comments and blank lines dropped
	text       string   // the block as written
}

// guideBlocks reads the fenced blocks of the guide in order.
func guideBlocks(path string) []guideBlock {
	GinkgoHelper()
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	var (
		blocks  []guideBlock
		step    string
		current *guideBlock
		pending string
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case current == nil && strings.HasPrefix(line, "#"):
			step = strings.TrimSpace(strings.TrimLeft(line, "#"))
		case current == nil && strings.HasPrefix(line, "```"):
			current = &guideBlock{step: step, lang: strings.TrimPrefix(line, "```")}
		case current != nil && line == "```":
			blocks = append(blocks, *current)
			current = nil
		case current != nil:
			current.text += line + "\n"
			if strings.HasSuffix(line, `\`) {
				pending += strings.TrimSuffix(line, `\`)
				continue
			}
			full := strings.TrimSpace(pending + line)
			pending = ""
			if full != "" && !strings.HasPrefix(full, "#") {
				current.lines = append(current.lines, full)
			}
		}
	}
	Expect(sc.Err()).NotTo(HaveOccurred())
	Expect(current).To(BeNil(), "%s ends inside a fenced block", path)
	return blocks
}

// guideCommand says what the spec does with a command of the guide that
// begins with prefix: run it (with replacements) and find want in what it
// prints, or skip it for the reason given.
type guideCommand struct {
	prefix string
	skip   string
	want   string
	// eventually: run it until want shows (a state the operator reaches).
	eventually bool
	// follow: a command that runs until interrupted; stopped after a while.
	follow bool
}

var guideCommands = []guideCommand{
	{prefix: "kind create cluster", skip: "the suite's cluster is the dev cluster of make dev"},
	{prefix: "kubectl version", want: "Server Version: v1."},
	{prefix: "kubectl api-resources --api-group=admissionregistration.k8s.io", want: "mutatingadmissionpolicies"},
	{prefix: "helm install hookrun oci://", skip: "no release is published here; test/release installs the release's chart from oci:// (TestChartFromOCI)"},
	{prefix: "kubectl -n hookrun-system wait", skip: "the dev cluster runs the operator and the receiver as processes, not Deployments"},
	{prefix: "curl -fsSLO https://github.com/hookrun/hookrun/releases", skip: "no release is published here; test/release applies the release's install.yaml (TestInstallYAML)"},
	{prefix: "sed -i 's#https://hooks.example.com#", skip: "see install.yaml above"},
	{prefix: "kubectl apply -f install.yaml", skip: "test/release applies the release's install.yaml (TestInstallYAML)"},
	{prefix: "git clone", skip: "the suite runs in the checkout"},
	{prefix: "cd hookrun", skip: "the suite runs in the checkout"},
	{prefix: "docker build", skip: "no Docker daemon here; test/release builds the image with ko"},
	{prefix: "kind load docker-image", skip: "no Docker daemon here"},
	{prefix: "VERSION=dev KO_DOCKER_REPO=", skip: "make release builds the image with ko the same way (test/release)"},
	{prefix: "helm install hookrun charts/hookrun", skip: "the dev cluster runs hookrun as processes; test/chart renders the chart, test/release dry-runs it on an API server"},
	{prefix: "kubectl -n hookrun-system port-forward", skip: "the dev cluster's receiver already listens on loopback; the --receiver-url command gets its address"},
	{prefix: "make build", skip: "the suite builds the plugin as make build does"},
	{prefix: "export PATH=", skip: "the suite's PATH holds the plugin and kubectl"},
	{prefix: "kubectl hookrun --help", want: "kubectl hookrun"},
	{prefix: "kubectl create namespace team-a", want: "created"},
	{prefix: "kubectl config set-context --current --namespace=team-a", want: "modified"},
	{prefix: "kubectl apply -f agent.yaml", want: "agent.agents.hookrun.dev/triage created"},
	{prefix: "kubectl get agent triage -o wide", want: "True", eventually: true},
	{prefix: "kubectl describe agent triage", want: "Runs are sent to"},
	{prefix: "kubectl auth whoami", want: "hookrun-dev-admin"},
	{prefix: "kubectl apply -f endpoint.yaml", want: "webhookendpoint.agents.hookrun.dev/github-issues created"},
	{prefix: "kubectl get whe github-issues", want: "Active", eventually: true},
	{prefix: "kubectl hookrun show github-issues", want: "Sender:"},
	{prefix: "kubectl hookrun secret github-issues"},
	{prefix: "kubectl hookrun test github-issues", want: ": success in ", eventually: true},
	{prefix: "kubectl hookrun runs github-issues --watch", want: "success", follow: true},
	{prefix: "kubectl get agentrun github-issues-", want: "Demo agent received"},
	{prefix: "kubectl delete namespace team-a", want: `namespace "team-a" deleted`},
	{prefix: "helm uninstall hookrun", skip: "the dev cluster stops with the suite"},
}

func guideCommandFor(line string) (guideCommand, bool) {
	for _, c := range guideCommands {
		if strings.HasPrefix(line, c.prefix) {
			return c, true
		}
	}
	return guideCommand{}, false
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

		shell := func(line string, timeout time.Duration) (string, error) {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			cmd := exec.CommandContext(cctx, "/bin/sh", "-c", line)
			cmd.Dir, cmd.Env = dir, env
			// A command that follows (runs --watch) is stopped with the
			// processes it started, as Ctrl-C stops them.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
			cmd.WaitDelay = 5 * time.Second
			out, err := cmd.CombinedOutput()
			GinkgoWriter.Printf("$ %s\n%s", line, out)
			if cctx.Err() != nil {
				return string(out), cctx.Err()
			}
			return string(out), err
		}

		ran := 0
		for _, b := range guideBlocks(filepath.Join(testenv.Root(), guidePath)) {
			switch b.lang {
			case "yaml":
				// The first YAML of a step is its file: step 5's Agent (a2a-go's
				// recipe), step 6's endpoint.
				name := map[string]string{"Agent": "agent.yaml", "WebhookEndpoint": "endpoint.yaml"}[kindOf(b.text)]
				Expect(name).NotTo(BeEmpty(), "a YAML of %q the spec does not know", b.step)
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
					continue
				}
				Expect(os.WriteFile(filepath.Join(dir, name), []byte(replace.Replace(b.text)), 0o600)).To(Succeed())
			case "console":
				// Output shown to the reader, not commands.
			case "sh":
				for _, line := range b.lines {
					c, ok := guideCommandFor(line)
					Expect(ok).To(BeTrue(), "%s (%q) has a command this spec does not know; add it to guideCommands: %s", guidePath, b.step, line)
					if c.skip != "" {
						GinkgoWriter.Printf("skipped (%s): %s\n", c.skip, line)
						continue
					}
					line = replace.Replace(line)
					if strings.HasPrefix(line, "kubectl get agentrun github-issues-") {
						fields := strings.Fields(line)
						fields[3] = lastRun()
						line = strings.Join(fields, " ")
					}
					By(b.step + ": " + line)
					ran++
					switch {
					case c.follow:
						out, err := shell(line, 5*time.Second)
						Expect(err).To(MatchError(context.DeadlineExceeded), out)
						Expect(out).To(ContainSubstring(c.want))
					case c.eventually:
						Eventually(func(g Gomega) {
							out, err := shell(line, time.Minute)
							g.Expect(err).NotTo(HaveOccurred(), out)
							g.Expect(out).To(ContainSubstring(c.want))
						}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
					default:
						out, err := shell(line, 2*time.Minute)
						Expect(err).NotTo(HaveOccurred(), out)
						Expect(out).To(ContainSubstring(c.want))
						if strings.HasPrefix(line, "kubectl hookrun secret github-issues") {
							// The secret GitHub needs, exactly, on the first line (a
							// reminder to save it follows).
							secret := &corev1.Secret{}
							Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: agentsv1alpha1.GeneratedSecretName("github-issues")}, secret)).To(Succeed())
							first, _, _ := strings.Cut(out, "\n")
							Expect(first).To(Equal(string(secret.Data[agentsv1alpha1.WebhookSecretKey])))
						}
					}
				}
			default:
				Fail(fmt.Sprintf("%s (%q) has a %q block this spec does not read; fence commands as sh", guidePath, b.step, b.lang))
			}
		}
		Expect(ran).To(BeNumerically(">=", 15), "the spec ran fewer of the guide's commands than it knows")
	}, SpecTimeout(5*time.Minute))
})

// kindOf is the kind a YAML document declares.
func kindOf(doc string) string {
	for _, line := range strings.Split(doc, "\n") {
		if k, ok := strings.CutPrefix(line, "kind: "); ok {
			return strings.TrimSpace(k)
		}
	}
	return ""
}
