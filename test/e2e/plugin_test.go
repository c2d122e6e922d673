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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
)

// The kubectl plugin (hack/kubectl-hookrun) against the real cluster: every
// command's output, exit status and refusals, run as the built binary with a
// kubeconfig, as a user runs it. Outputs that are stable once the volatile
// parts (IDs, secrets, ages, addresses) are masked are compared with golden
// files in testdata/plugin; `go test ./test/e2e -args -update-golden`
// rewrites them.

var updateGolden = flag.Bool("update-golden", false, "rewrite the golden files of the kubectl plugin specs")

const (
	pluginNS = "plugin"
	viewer   = "viewer@example.com"   // the built-in view role
	member   = "member@example.com"   // hookrun-agent-user: may trigger, may not read Secrets
	stranger = "stranger@example.com" // no role at all
	leaver   = "leaver@example.com"   // a member who owns an endpoint, then leaves
)

// pluginResult is one run of the plugin.
type pluginResult struct {
	stdout, stderr string
	code           int
}

var pluginBinary string

// builtPlugin is the plugin thePlugin built, for every spec that runs it.
var builtPlugin string

// thePlugin is the plugin make test built, or one built from the tree, once
// for the suite.
func thePlugin(ctx context.Context) string {
	GinkgoHelper()
	if builtPlugin != "" {
		return builtPlugin
	}
	By("building the plugin (make test hands over the one it built with -race)")
	// In the suite's work directory: it outlives the spec that built it.
	bin, err := devcluster.Binary(ctx, testenv.Root(), workDir, "kubectl-hookrun", "./hack/kubectl-hookrun")
	Expect(err).NotTo(HaveOccurred())
	builtPlugin = bin
	return bin
}

// hookrunPlugin runs the plugin as the developer in the plugin namespace.
func hookrunPlugin(ctx context.Context, args ...string) pluginResult {
	GinkgoHelper()
	return runPlugin(ctx, append([]string{"--kubeconfig", cluster.DeveloperKubeconfig, "-n", pluginNS}, args...)...)
}

// hookrunPluginAs runs the plugin as user: the admin impersonating them, as
// `kubectl --as` does.
func hookrunPluginAs(ctx context.Context, user string, args ...string) pluginResult {
	GinkgoHelper()
	return runPlugin(ctx, append([]string{"--kubeconfig", cluster.Kubeconfig("admin"), "--as", user, "-n", pluginNS}, args...)...)
}

func runPlugin(ctx context.Context, args ...string) pluginResult {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, pluginBinary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := pluginResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	GinkgoWriter.Printf("kubectl hookrun %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	return r
}

// masks replace what changes from run to run with a placeholder.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`http://127\.0\.0\.1:\d+`), "http://<receiver>"},
	{regexp.MustCompile(`/api/webhooks/[A-Za-z0-9_-]{43}/`), "/api/webhooks/<endpoint-id>/"},
	{regexp.MustCompile(`-[0-9a-z]{26}\b`), "-<ulid>"},
	{regexp.MustCompile(`hookrun-(test|redeliver|sample)-[0-9a-f]{16}`), "hookrun-$1-<id>"},
	{regexp.MustCompile(`new:[0-9a-f-]{1,8}`), "new:<context>"},
	{regexp.MustCompile(`\b(\d+(\.\d+)?(ms|µs|s|m|h|d|y))+\b`), "<t>"},
	{regexp.MustCompile(` {2,}`), "  "},
	// Refusals counted while the receiver caught up with a new endpoint
	// depend on timing; the rotation spec checks the line.
	{regexp.MustCompile(`(?m)^Refused:.*\n`), ""},
}

// masked is out with the volatile parts and the given secrets masked.
func masked(out string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			out = strings.ReplaceAll(out, s, "<secret>")
		}
	}
	for _, m := range masks {
		out = m.re.ReplaceAllString(out, m.with)
	}
	return out
}

// matchesGolden compares out (masked) with testdata/plugin/name.golden.
func matchesGolden(name, out string, secrets ...string) {
	GinkgoHelper()
	path := filepath.Join("testdata", "plugin", name+".golden")
	got := masked(out, secrets...)
	if *updateGolden {
		Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		Expect(os.WriteFile(path, []byte(got), 0o644)).To(Succeed())
	}
	want, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred(), "no golden file: run go test ./test/e2e -args -update-golden")
	Expect(got).To(Equal(string(want)), "output differs from %s (masked)", path)
}

// samplesIn applies the samples at paths (under config/samples) in
// namespace as the developer, points their Agent triage at the suite's
// demo agent, and waits until endpoints are Ready and Active.
func samplesIn(ctx context.Context, namespace string, endpoints []string, paths ...string) {
	GinkgoHelper()
	samples := filepath.Join(testenv.Root(), "config", "samples")
	files := make([]string, 0, len(paths))
	for _, p := range paths {
		files = append(files, filepath.Join(samples, p))
	}
	Eventually(func() error { return clusterinstall.ApplyIn(ctx, developer(), namespace, files...) }).Should(Succeed())
	e2eAgent := &agentsv1alpha1.Agent{}
	Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "triage"}, e2eAgent)).To(Succeed())
	agent := &agentsv1alpha1.Agent{}
	Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "triage"}, agent)).To(Succeed())
	patch := client.MergeFrom(agent.DeepCopy())
	agent.Spec.A2A.URL = e2eAgent.Spec.A2A.URL
	Expect(developer().Patch(ctx, agent, patch)).To(Succeed())
	Eventually(func(g Gomega) {
		for _, name := range endpoints {
			ep := &agentsv1alpha1.WebhookEndpoint{}
			g.Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, ep)).To(Succeed())
			g.Expect(conditionStatus(ep.Status.Conditions, agentsv1alpha1.ConditionReady)).To(Equal(metav1.ConditionTrue), name)
			g.Expect(ep.Status.Phase).To(Equal(agentsv1alpha1.EndpointActive), name)
		}
	}).WithTimeout(time.Minute).Should(Succeed())
}

// bindRole binds a ClusterRole to user in the plugin namespace.
func bindRole(ctx context.Context, user, role string) *rbacv1.RoleBinding {
	GinkgoHelper()
	return bindRoleIn(ctx, pluginNS, user, role)
}

// bindRoleIn binds a ClusterRole to user in namespace.
func bindRoleIn(ctx context.Context, namespace, user, role string) *rbacv1.RoleBinding {
	GinkgoHelper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: role + "-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	Expect(cluster.AdminClient.Create(ctx, rb)).To(Succeed())
	return rb
}

// sampleCurl is the curl command of show's card, as printed.
func sampleCurl(card string) string {
	GinkgoHelper()
	_, rest, found := strings.Cut(card, "Sample call:\n")
	Expect(found).To(BeTrue(), card)
	var lines []string
	for _, line := range strings.Split(rest, "\n") {
		line = strings.TrimPrefix(line, "  ")
		lines = append(lines, line)
		if !strings.HasSuffix(line, `\`) {
			break
		}
	}
	Expect(lines[0]).To(HavePrefix("curl "), card)
	return strings.Join(lines, "\n")
}

// sh runs a command line with the POSIX shell, as a user pastes it.
func sh(ctx context.Context, line string) string {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", line).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return string(out)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var runIDInAnswer = regexp.MustCompile(`"runId":"([a-z0-9-]+)"`)

func pluginRun(ctx context.Context, name string) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	return get(ctx, &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: name}})
}

func pluginEndpoint(ctx context.Context, name string) *agentsv1alpha1.WebhookEndpoint {
	GinkgoHelper()
	return get(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: name}})
}

// generatedSecret is the generated secret of endpoint name, as the Secret holds it.
func generatedSecret(ctx context.Context, name string) string {
	GinkgoHelper()
	ep, err := cluster.EndpointFor(ctx, pluginNS, name)
	Expect(err).NotTo(HaveOccurred())
	return ep.Secret
}

// senderEndpoints are the endpoints of config/samples, one per sender type.
var senderEndpoints = map[string]agentsv1alpha1.SenderType{
	"github-issues": agentsv1alpha1.SenderHeader, "github-repo": agentsv1alpha1.SenderGitHub,
	"gitlab-issues": agentsv1alpha1.SenderGitLab, "alertmanager": agentsv1alpha1.SenderBearer,
	"deploy-events": agentsv1alpha1.SenderHMAC, "orders-events": agentsv1alpha1.SenderStandardWebhooks,
	"stripe-billing": agentsv1alpha1.SenderStripe, "slack-mentions": agentsv1alpha1.SenderSlack,
	"cluster-events": agentsv1alpha1.SenderCloudEvents,
}

var _ = Describe("kubectl hookrun", Ordered, func() {
	BeforeAll(func(ctx SpecContext) {
		pluginBinary = thePlugin(ctx)

		By("a namespace where the developer is an editor, with the samples of every sender type applied as the developer")
		Expect(cluster.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pluginNS}})).To(Succeed())
		bindRole(ctx, devcluster.Developer, "edit")
		bindRole(ctx, viewer, "view")
		bindRole(ctx, member, "hookrun-agent-user")
		// The samples' Stripe and Slack Secrets hold placeholders; they
		// are at least 32 bytes, so they sign as well as real ones.
		samplesIn(ctx, pluginNS, slices.Collect(maps.Keys(senderEndpoints)), "agent.yaml", "webhookendpoint_github.yaml", "senders")
	})

	It("lists the endpoints, and tells a user without a role which one they need", func(ctx SpecContext) {
		r := hookrunPlugin(ctx, "endpoints")
		Expect(r.code).To(Equal(0), r.stderr)
		matchesGolden("endpoints", r.stdout)

		r = hookrunPlugin(ctx, "endpoints", "-o", "json")
		Expect(r.code).To(Equal(0))
		list := &agentsv1alpha1.WebhookEndpointList{}
		Expect(json.Unmarshal([]byte(r.stdout), list)).To(Succeed())
		Expect(list.Items).To(HaveLen(len(senderEndpoints)))
		Expect(list.Kind).To(Equal("WebhookEndpointList"))
		Expect(list.Items[0].ManagedFields).To(BeEmpty(), "as kubectl, without managedFields")

		r = runPlugin(ctx, "--kubeconfig", cluster.Kubeconfig("admin"), "endpoints", "-A")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(HavePrefix("NAMESPACE"))
		Expect(r.stdout).To(ContainSubstring("\n" + ns + " "))
		Expect(r.stdout).To(ContainSubstring("\n" + pluginNS + " "))
		r = hookrunPlugin(ctx, "endpoints", "-A")
		Expect(r.code).To(Equal(1), "the developer may read only the namespaces where they have a role")
		Expect(r.stderr).To(ContainSubstring("you may not list webhook endpoints in every namespace: it needs read access"))

		r = hookrunPluginAs(ctx, stranger, "endpoints")
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(BeEmpty())
		matchesGolden("endpoints-stranger", r.stderr)
	})

	It("prints a card whose curl works as printed, for every sender type", func(ctx SpecContext) {
		for name, sender := range senderEndpoints {
			By("the card of " + name + " (" + string(sender) + ")")
			var runID string
			// The receiver learns of new endpoints and keys from its
			// informers: until then the printed call is refused.
			Eventually(func(g Gomega) {
				r := hookrunPlugin(ctx, "show", name)
				g.Expect(r.code).To(Equal(0), r.stderr)
				g.Expect(r.stdout).To(MatchRegexp(`\nSender:\s+` + string(sender) + `\n`))
				answer := sh(ctx, sampleCurl(r.stdout))
				g.Expect(answer).To(ContainSubstring("HTTP/1.1 202 Accepted"))
				m := runIDInAnswer.FindStringSubmatch(answer)
				g.Expect(m).To(HaveLen(2))
				runID = m[1]
			}).WithTimeout(time.Minute).Should(Succeed())
			run := pluginRun(ctx, runID)
			Expect(run.Spec.EndpointRef.Name).To(Equal(name))
			Expect(run.Spec.Sender.Type).To(Equal(sender))
			Eventually(func() agentsv1alpha1.RunState { return pluginRun(ctx, runID).Status.State }).Should(Equal(agentsv1alpha1.RunSuccess))
		}

		By("the Header endpoint's card, with its one run")
		r := hookrunPlugin(ctx, "show", "github-issues")
		Expect(r.code).To(Equal(0))
		matchesGolden("show-header", r.stdout, generatedSecret(ctx, "github-issues"))
		r = hookrunPlugin(ctx, "show", "github-issues", "-o", "yaml")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(ContainSubstring("curl: |-\n  curl -sS -i -X POST"))

		By("a viewer sees the card without the curl, and why")
		r = hookrunPluginAs(ctx, viewer, "show", "github-repo")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).NotTo(ContainSubstring("curl "))
		Expect(r.stdout).To(ContainSubstring("No sample call: it needs the endpoint's secret, and you may not read Secret plugin/github-repo-webhook-secret"))

		By("a card of an endpoint that does not exist")
		r = hookrunPlugin(ctx, "show", "nope")
		Expect(r.code).To(Equal(1))
		matchesGolden("show-not-found", r.stderr)
	})

	It("prints the secret with the warning, rotates it, and refuses who may not", func(ctx SpecContext) {
		old := generatedSecret(ctx, "github-issues")
		r := hookrunPlugin(ctx, "secret", "github-issues")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(Equal(old + "\n"))
		matchesGolden("secret-warning", r.stderr)

		r = hookrunPluginAs(ctx, member, "secret", "github-issues")
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(BeEmpty())
		matchesGolden("secret-member", r.stderr)

		By("only the owner rotates")
		r = hookrunPluginAs(ctx, member, "rotate", "github-issues")
		Expect(r.code).To(Equal(1))
		matchesGolden("rotate-member", r.stderr)
		Expect(pluginEndpoint(ctx, "github-issues").Status.SecretHash).To(Equal("sha256:" + sha256Hex(old)))

		r = hookrunPlugin(ctx, "rotate", "github-issues")
		Expect(r.code).To(Equal(0), r.stderr)
		fresh := strings.TrimSpace(r.stdout)
		Expect(fresh).NotTo(Equal(old))
		Expect(fresh).To(Equal(generatedSecret(ctx, "github-issues")))
		Expect(pluginEndpoint(ctx, "github-issues").Status.SecretHash).To(Equal("sha256:" + sha256Hex(fresh)))
		Expect(r.stderr).To(ContainSubstring("The previous secret no longer works."))
		url := pluginEndpoint(ctx, "github-issues").Status.URL
		Eventually(func() int { return call(ctx, url, old, "{}").Status }).Should(Equal(http.StatusForbidden))
		Expect(call(ctx, url, fresh, "{}").Status).To(Equal(http.StatusAccepted))
		By("the card counts the refused call with the old secret (the receiver reports about once a minute)")
		Eventually(func() string { return hookrunPlugin(ctx, "show", "github-issues").stdout }).
			WithTimeout(2 * time.Minute).WithPolling(5 * time.Second).Should(MatchRegexp(`\nRefused:\s+forbidden \d+ in the last one to two hours`))

		By("an owner who may not read Secrets rotates, and is told why the new secret is not shown")
		Eventually(func() error {
			return person(member).Create(ctx, &agentsv1alpha1.WebhookEndpoint{
				ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: "members-hook"},
				Spec: agentsv1alpha1.WebhookEndpointSpec{
					AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
					ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				},
			})
		}).Should(Succeed())
		Eventually(func() string { return pluginEndpoint(ctx, "members-hook").Status.SecretHash }).ShouldNot(BeEmpty())
		before := pluginEndpoint(ctx, "members-hook").Status.SecretHash
		r = hookrunPluginAs(ctx, member, "rotate", "members-hook")
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("error: rotated: endpoint plugin/members-hook has a new secret"))
		Expect(r.stderr).To(ContainSubstring("you may not read Secret plugin/members-hook-webhook-secret"))
		Expect(pluginEndpoint(ctx, "members-hook").Status.SecretHash).NotTo(Equal(before))
		r = hookrunPluginAs(ctx, member, "test", "members-hook")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("sending a call needs the endpoint's secret: you may not read Secret plugin/members-hook-webhook-secret"))
		Expect(developer().Delete(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: "members-hook"}})).
			NotTo(Succeed(), "only its owner deletes it")
		Expect(person(member).Delete(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: "members-hook"}})).To(Succeed())

		r = hookrunPlugin(ctx, "rotate", "github-issues", "--no-wait")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(BeEmpty(), "nothing secret without waiting")

		r = hookrunPlugin(ctx, "rotate", "stripe-billing")
		Expect(r.code).To(Equal(1))
		matchesGolden("rotate-secretref", r.stderr)

		By("an endpoint open to anyone is given a secret by its owner, and refuses calls without it from then on")
		Expect(developer().Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: "open-door"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun, AllowUnauthenticated: true,
			},
		})).To(Succeed())
		Eventually(func() string { return pluginEndpoint(ctx, "open-door").Status.URL }).ShouldNot(BeEmpty())
		url = pluginEndpoint(ctx, "open-door").Status.URL
		Eventually(func() int { return call(ctx, url, "", "{}").Status }).Should(Equal(http.StatusAccepted))
		r = hookrunPlugin(ctx, "rotate", "open-door")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("kubectl hookrun add-secret gives it one"))
		r = hookrunPluginAs(ctx, member, "add-secret", "open-door")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("you may not add a secret to endpoint plugin/open-door"))
		Expect(pluginEndpoint(ctx, "open-door").Spec.AllowUnauthenticated).To(BeTrue())
		r = hookrunPlugin(ctx, "add-secret", "open-door")
		Expect(r.code).To(Equal(0), r.stderr)
		added := strings.TrimSpace(r.stdout)
		Expect(added).To(Equal(generatedSecret(ctx, "open-door")))
		Expect(pluginEndpoint(ctx, "open-door").Status.SecretHash).To(Equal("sha256:" + sha256Hex(added)))
		Expect(r.stderr).To(ContainSubstring("Calls without it are now refused (401)"))
		Expect(r.stderr).To(ContainSubstring("Save this secret now"))
		Eventually(func() int { return call(ctx, url, "", "{}").Status }).Should(Equal(http.StatusUnauthorized))
		Expect(call(ctx, url, added, "{}").Status).To(Equal(http.StatusAccepted))
		r = hookrunPlugin(ctx, "add-secret", "open-door")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("already refuses calls without its secret"))
	})

	It("pauses and resumes, and a member takes over an endpoint whose owner left", func(ctx SpecContext) {
		r := hookrunPluginAs(ctx, viewer, "pause", "alertmanager")
		Expect(r.code).To(Equal(1))
		matchesGolden("pause-viewer", r.stderr)

		r = hookrunPlugin(ctx, "pause", "alertmanager")
		Expect(r.code).To(Equal(0), r.stderr)
		matchesGolden("pause", r.stdout)
		Expect(pluginEndpoint(ctx, "alertmanager").Status.Phase).To(Equal(agentsv1alpha1.EndpointPaused))
		r = hookrunPlugin(ctx, "test", "alertmanager")
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(ContainSubstring("422 Unprocessable Entity"))
		matchesGolden("test-paused", r.stderr)

		r = hookrunPlugin(ctx, "resume", "alertmanager")
		Expect(r.code).To(Equal(0), r.stderr)
		matchesGolden("resume", r.stdout)

		By("an endpoint whose owner is no longer a member")
		binding := bindRole(ctx, leaver, "hookrun-agent-user")
		Eventually(func() error {
			return person(leaver).Create(ctx, &agentsv1alpha1.WebhookEndpoint{
				ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: "left-behind"},
				Spec: agentsv1alpha1.WebhookEndpointSpec{
					AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
					ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				},
			})
		}).Should(Succeed())
		Eventually(func() string { return pluginEndpoint(ctx, "left-behind").Status.SecretHash }).ShouldNot(BeEmpty())
		Expect(cluster.AdminClient.Delete(ctx, binding)).To(Succeed())
		url := pluginEndpoint(ctx, "left-behind").Status.URL
		secret := generatedSecret(ctx, "left-behind")
		Eventually(func() string { return call(ctx, url, secret, "{}").Code }).Should(Equal("owner_not_member"))
		Eventually(func() agentsv1alpha1.PauseReason { return pluginEndpoint(ctx, "left-behind").Status.PauseReason }).
			Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))

		r = hookrunPlugin(ctx, "resume", "left-behind")
		Expect(r.code).To(Equal(1))
		matchesGolden("resume-owner-left", r.stderr)
		r = hookrunPlugin(ctx, "resume", "--take-ownership", "github-issues")
		Expect(r.code).To(Equal(1), "not paused for OwnerNotMember")
		r = hookrunPluginAs(ctx, viewer, "resume", "--take-ownership", "left-behind")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("you may not take ownership of endpoint plugin/left-behind"))

		r = hookrunPlugin(ctx, "resume", "--take-ownership", "left-behind")
		Expect(r.code).To(Equal(0), r.stderr)
		matchesGolden("resume-take-ownership", r.stdout)
		ep := pluginEndpoint(ctx, "left-behind")
		Expect(ep.Spec.Owner.User).To(Equal(devcluster.Developer))
		Expect(ep.Status.Phase).To(Equal(agentsv1alpha1.EndpointActive))
		Eventually(func() int { return call(ctx, url, secret, "{}").Status }).Should(Equal(http.StatusAccepted))
	})

	It("sends a test call as each sender would and follows the run; redelivers a stored payload", func(ctx SpecContext) {
		r := hookrunPlugin(ctx, "test", "github-repo")
		Expect(r.code).To(Equal(0), r.stderr)
		matchesGolden("test-github", r.stdout)

		r = hookrunPlugin(ctx, "test", "github-repo", "--event", "push")
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(ContainSubstring(`200 OK {"status":"ignored"}`))
		Expect(r.stderr).To(ContainSubstring(`the endpoint ignored the call: its event "push" is not in spec.sender.events`))

		By("a run that fails ends the test with exit status 1")
		r = hookrunPlugin(ctx, "test", "deploy-events", "--data", "demo:fail", "--content-type", "text/plain")
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(MatchRegexp(`Run deploy-events-[0-9a-z]{26}: error in `))
		failed := regexp.MustCompile(`run plugin/(deploy-events-[0-9a-z]{26}) ended error`).FindStringSubmatch(r.stderr)
		Expect(failed).To(HaveLen(2), r.stderr)

		// receivedAt has second precision, and runs with delivery IDs are
		// named by a hash: the runs golden needs the next call in a later
		// second than the failed run's.
		receivedAt := pluginRun(ctx, failed[1]).Spec.ReceivedAt.Unix()
		Eventually(func() int64 { return time.Now().Unix() }).Should(BeNumerically(">", receivedAt))

		By("what a hostile sender put into the payload reaches the terminal escaped, not as control sequences")
		r = hookrunPlugin(ctx, "test", "deploy-events", "--data", "\x1b]0;owned\x07\u202eevil", "--content-type", "text/plain")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring(`First line: \u001b]0;owned\u0007\u202eevil`))
		Expect(r.stdout).NotTo(ContainSubstring("\x1b"))
		Expect(r.stdout).NotTo(ContainSubstring("\u202e"))

		By("--data @- reads the body from standard input, -o json prints the outcome")
		cmd := exec.CommandContext(ctx, pluginBinary, "--kubeconfig", cluster.DeveloperKubeconfig, "-n", pluginNS,
			"test", "gitlab-issues", "--data", "@-", "-o", "json")
		cmd.Stdin = strings.NewReader(`{"object_kind":"issue","object_attributes":{"title":"From stdin"}}`)
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), string(out))
		var outcome struct {
			HTTPStatus int                     `json:"httpStatus"`
			Run        agentsv1alpha1.AgentRun `json:"run"`
		}
		Expect(json.Unmarshal(out, &outcome)).To(Succeed())
		Expect(outcome.HTTPStatus).To(Equal(http.StatusAccepted))
		Expect(outcome.Run.Status.State).To(Equal(agentsv1alpha1.RunSuccess))
		Expect(outcome.Run.Status.Output).To(ContainSubstring("From stdin"))
		Expect(outcome.Run.Spec.Sender.Event).To(Equal("Issue Hook"))

		By("redelivering that run sends its payload again, as a new delivery")
		first := outcome.Run.Name
		r = hookrunPlugin(ctx, "redeliver", first)
		Expect(r.code).To(Equal(0), r.stderr)
		m := runIDInAnswer.FindStringSubmatch(r.stdout)
		Expect(m).To(HaveLen(2))
		again := pluginRun(ctx, m[1])
		Expect(again.Name).NotTo(Equal(first))
		Expect(again.Status.Output).To(ContainSubstring("From stdin"))
		Expect(again.Spec.Sender.Event).To(Equal("Issue Hook"))
		Expect(again.Spec.Sender.DeliveryID).NotTo(Equal(outcome.Run.Spec.Sender.DeliveryID))

		By("a viewer may not read the payload")
		r = hookrunPluginAs(ctx, viewer, "redeliver", first)
		Expect(r.code).To(Equal(1))
		matchesGolden("redeliver-viewer", r.stderr)

		By("a run without a payload, and one whose payload is gone")
		skipped := &agentsv1alpha1.AgentRunList{}
		Expect(cluster.AdminClient.List(ctx, skipped, client.InNamespace(pluginNS),
			client.MatchingLabels{agentsv1alpha1.LabelSkipReason: agentsv1alpha1.SkipReasonOwnerNotMember})).To(Succeed())
		Expect(skipped.Items).NotTo(BeEmpty(), "the takeover spec recorded a skipped run")
		r = hookrunPlugin(ctx, "redeliver", skipped.Items[0].Name)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("was skipped"))
		Expect(r.stderr).To(ContainSubstring("the receiver stored no payload for it, so there is nothing to redeliver"))

		payload := outcome.Run.Spec.Payload.SecretName
		Expect(cluster.AdminClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: pluginNS, Name: payload}})).To(Succeed())

		By("a Stripe event redelivered repeats its id: the receiver answers with the first run and starts nothing")
		stripe := &agentsv1alpha1.AgentRunList{}
		Expect(cluster.AdminClient.List(ctx, stripe, client.InNamespace(pluginNS), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "stripe-billing"})).To(Succeed())
		Expect(stripe.Items).To(HaveLen(1))
		r = hookrunPlugin(ctx, "redeliver", stripe.Items[0].Name)
		Expect(r.code).To(Equal(1))
		Expect(r.stdout).To(ContainSubstring(`202 Accepted {"runId":"` + stripe.Items[0].Name + `"`))
		Expect(r.stderr).To(ContainSubstring("the receiver took the call for a duplicate delivery"))
		Expect(cluster.AdminClient.List(ctx, stripe, client.InNamespace(pluginNS), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "stripe-billing"})).To(Succeed())
		Expect(stripe.Items).To(HaveLen(1))
		r = hookrunPlugin(ctx, "redeliver", first)
		Expect(r.code).To(Equal(1))
		matchesGolden("redeliver-gone", r.stderr)

		By("a CloudEvents endpoint: test sends in binary mode, a redelivery is a new event of the same type and source")
		var ce struct {
			Run agentsv1alpha1.AgentRun `json:"run"`
		}
		r = hookrunPlugin(ctx, "test", "cluster-events", "-o", "json")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(json.Unmarshal([]byte(r.stdout), &ce)).To(Succeed())
		Expect(ce.Run.Status.State).To(Equal(agentsv1alpha1.RunSuccess))
		sender := ce.Run.Spec.Sender
		Expect([]string{string(sender.Type), sender.Event, sender.Source}).To(Equal([]string{"CloudEvents", "com.example.order.refunded", "/kubectl-hookrun"}))
		Expect(sender.DeliveryID).To(HavePrefix("hookrun-test-"))
		r = hookrunPlugin(ctx, "redeliver", ce.Run.Name, "-o", "json")
		Expect(r.code).To(Equal(0), r.stderr)
		binaryRun := ce.Run.Name
		Expect(json.Unmarshal([]byte(r.stdout), &ce)).To(Succeed())
		Expect(ce.Run.Name).NotTo(Equal(binaryRun))
		Expect(ce.Run.Spec.Sender.DeliveryID).To(HavePrefix("hookrun-redeliver-"))

		By("a structured CloudEvent is sent as it is, and its redelivery repeats its id: the first run, nothing new")
		envelope := `{"specversion":"1.0","id":"plugin-ce-1","source":"/shop/orders","type":"com.example.order.refunded","data":{"order":"A-1"}}`
		r = hookrunPlugin(ctx, "test", "cluster-events", "--data", envelope, "--content-type", "application/cloudevents+json", "-o", "json")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(json.Unmarshal([]byte(r.stdout), &ce)).To(Succeed())
		Expect(ce.Run.Spec.Sender.Source).To(Equal("/shop/orders"))
		Expect(ce.Run.Spec.Sender.DeliveryID).To(Equal("plugin-ce-1"))
		events := &agentsv1alpha1.AgentRunList{}
		Expect(cluster.AdminClient.List(ctx, events, client.InNamespace(pluginNS), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "cluster-events"})).To(Succeed())
		before := len(events.Items)
		// Within a second of the first run the plugin cannot tell it is a
		// duplicate by its receivedAt; the answer's runId and the runs can.
		r = hookrunPlugin(ctx, "redeliver", ce.Run.Name)
		Expect(r.stdout).To(ContainSubstring(`202 Accepted {"runId":"` + ce.Run.Name + `"`))
		Expect(cluster.AdminClient.List(ctx, events, client.InNamespace(pluginNS), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "cluster-events"})).To(Succeed())
		Expect(events.Items).To(HaveLen(before))
	})

	It("lists recent invocations newest first, filters them and watches them", func(ctx SpecContext) {
		r := hookrunPlugin(ctx, "runs", "deploy-events")
		Expect(r.code).To(Equal(0), r.stderr)
		matchesGolden("runs-deploy-events", r.stdout)

		r = hookrunPlugin(ctx, "runs", "--state", "error")
		Expect(r.code).To(Equal(0))
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		Expect(lines).To(HaveLen(2), "the header and the one failed run")
		Expect(lines[1]).To(ContainSubstring("deploy-events  error"))

		r = hookrunPlugin(ctx, "runs", "--since", "1h", "-o", "json")
		Expect(r.code).To(Equal(0))
		list := &agentsv1alpha1.AgentRunList{}
		Expect(json.Unmarshal([]byte(r.stdout), list)).To(Succeed())
		Expect(len(list.Items)).To(BeNumerically(">=", 10))
		for i := 1; i < len(list.Items); i++ {
			Expect(list.Items[i-1].Spec.ReceivedAt.Time).NotTo(BeTemporally("<", list.Items[i].Spec.ReceivedAt.Time), "newest first")
		}

		r = hookrunPlugin(ctx, "runs", "--since", "1ms")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(Equal("No runs in namespace plugin.\n"))
		r = runPlugin(ctx, "--kubeconfig", cluster.Kubeconfig("admin"), "runs", "-A", "--limit", "3")
		Expect(r.code).To(Equal(0))
		lines = strings.Split(strings.TrimSpace(r.stdout), "\n")
		Expect(lines).To(HaveLen(4), "the header and three runs")
		Expect(lines[0]).To(HavePrefix("NAMESPACE  RUN  "))

		r = hookrunPlugin(ctx, "runs", "--state", "finished")
		Expect(r.code).To(Equal(2))
		matchesGolden("runs-bad-state", r.stderr)
		r = hookrunPlugin(ctx, "runs", "no-such-endpoint")
		Expect(r.code).To(Equal(1))

		By("--watch prints a run that arrives after it started")
		watchCtx, stop := context.WithCancel(ctx)
		defer stop()
		stdout := gbytes.NewBuffer()
		watcher := exec.CommandContext(watchCtx, pluginBinary, "--kubeconfig", cluster.DeveloperKubeconfig, "-n", pluginNS, "runs", "alertmanager", "--watch")
		watcher.Stdout = stdout
		Expect(watcher.Start()).To(Succeed())
		Eventually(func() string { return string(stdout.Contents()) }).Should(HavePrefix("RUN"))
		r = hookrunPlugin(ctx, "test", "alertmanager", "--no-follow")
		Expect(r.code).To(Equal(0))
		id := runIDInAnswer.FindStringSubmatch(r.stdout)[1]
		Eventually(func() string { return string(stdout.Contents()) }).Should(MatchRegexp(id + `\s+success`))
		stop()
		_ = watcher.Wait()
	})

	It("gives AgentRuns the Completed, Thread and Message columns with -o wide, completes names, and refuses bad usage with exit status 2", func(ctx SpecContext) {
		out, err := kubectlAs(ctx, cluster.DeveloperKubeconfig, "get", "agentruns", "-n", pluginNS, "-o", "wide")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(Equal([]string{"NAME", "ENDPOINT", "STATE", "STARTED", "DURATION", "AGE", "COMPLETED", "THREAD", "MESSAGE"}))
		Expect(out).To(MatchRegexp(`deploy-events-[0-9a-z]{26}\s+deploy-events\s+error .*The agent failed the task`))
		out, err = kubectlAs(ctx, cluster.DeveloperKubeconfig, "get", "agentruns", "-n", pluginNS)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(Equal([]string{"NAME", "ENDPOINT", "STATE", "STARTED", "DURATION", "AGE"}))

		r := hookrunPlugin(ctx, "__complete", "show", "github-")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(Equal("github-issues\ngithub-repo\n:4\n"))
		r = hookrunPlugin(ctx, "__complete", "runs", "--state", "")
		Expect(r.stdout).To(HavePrefix("queued\nrunning\nsuccess\nerror\nskipped\n"))
		r = runPlugin(ctx, "--kubeconfig", cluster.Kubeconfig("admin"), "__complete", "endpoints", "-n", "plu")
		Expect(r.stdout).To(Equal("plugin\n:4\n"))
		r = hookrunPlugin(ctx, "__complete", "endpoints", "--context", "")
		Expect(r.code).To(Equal(0))
		kubeconfig, err := clientcmd.LoadFromFile(cluster.DeveloperKubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(kubeconfig.Contexts).To(HaveLen(1))
		Expect(r.stdout).To(Equal(kubeconfig.CurrentContext + "\n:4\n"))
		r = runPlugin(ctx, "completion", "bash")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(ContainSubstring("complete -o default -F __start_kubectl-hookrun kubectl-hookrun"))

		r = hookrunPlugin(ctx, "show")
		Expect(r.code).To(Equal(2))
		matchesGolden("usage-show", r.stderr)
		r = hookrunPlugin(ctx, "endpoints", "-o", "xml")
		Expect(r.code).To(Equal(2))
		r = hookrunPlugin(ctx, "endpoints", "--no-such-flag")
		Expect(r.code).To(Equal(2))
		r = hookrunPlugin(ctx, "no-such-command")
		Expect(r.code).To(Equal(2))
	})
})
