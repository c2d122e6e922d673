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
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/loadgen"
)

// The load of the disruption specs: GitHub-signed deliveries a second, over
// enough endpoints that none meets its rate limit (60 a minute) even when
// one replica takes all of them, of three Agents (all the demo agent's Pod),
// so that the runs waiting while the operator is replaced stay under an
// Agent's backlog cap (1000) on a slow machine too.
const (
	loadRate      = 20
	loadEndpoints = 30
	loadAgentsN   = 3
	operatorLease = "hookrun-operator.agents.hookrun.dev"
)

var _ = Describe("the release on a real node", Ordered, func() {
	It("is verified with cosign: its images and its chart", func(ctx SpecContext) {
		images, err := os.ReadFile(filepath.Join(node.dist, "images.txt"))
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(string(images))).To(HaveLen(2), "hookrun and the demo agent")
		for _, ref := range strings.Fields(string(images)) {
			command(ctx, node.cosign, "verify", "--key", node.key, "--insecure-ignore-tlog", "--allow-http-registry", ref)
		}
		chart, err := os.ReadFile(filepath.Join(node.dist, "chart.txt"))
		Expect(err).NotTo(HaveOccurred())
		command(ctx, node.cosign, "verify", "--key", node.key, "--insecure-ignore-tlog", "--allow-http-registry", strings.TrimSpace(string(chart)))
	})

	It("is installed by the getting-started guide, followed as written from its install step on", func(ctx SpecContext) {
		followGuide(ctx)
	}, NodeTimeout(15*time.Minute))

	It("runs every Pod Ready under the chart's security context, probes and limits; the operator holds its Lease; metrics are scraped through their Services", func(ctx SpecContext) {
		for _, component := range []string{"operator", "receiver"} {
			pods := podsOf(ctx, component)
			Expect(pods).NotTo(BeEmpty())
			for _, p := range pods {
				Expect(ready(p)).To(BeTrue(), "pod %s", p.Name)
				Expect(p.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()), "pod %s", p.Name)
				for _, c := range p.Spec.Containers {
					Expect(c.ReadinessProbe).NotTo(BeNil(), "%s/%s", p.Name, c.Name)
					Expect(c.LivenessProbe).NotTo(BeNil(), "%s/%s", p.Name, c.Name)
					Expect(c.Resources.Limits).To(HaveKey(corev1.ResourceMemory), "%s/%s", p.Name, c.Name)
					Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), "%s/%s", p.Name, c.Name)
				}
				for _, s := range p.Status.ContainerStatuses {
					Expect(s.RestartCount).To(BeZero(), "%s/%s restarted", p.Name, s.Name)
				}
			}
		}
		Expect(podsOf(ctx, "receiver")).To(HaveLen(2), "the chart's default: two receivers")

		By("the operator holds its Lease")
		operator := podsOf(ctx, "operator")[0].Name
		Eventually(func(g Gomega) {
			lease := &coordinationv1.Lease{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: operatorLease}, lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).To(HaveValue(HavePrefix(operator)))
		}).Should(Succeed())

		By("metrics through their Services")
		for _, svc := range []string{"hookrun-operator-metrics", "hookrun-receiver-metrics"} {
			s := &corev1.Service{}
			Expect(admin.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: svc}, s)).To(Succeed())
			resp, err := http.Get("http://" + net.JoinHostPort(s.Spec.ClusterIP, "8080") + "/metrics")
			Expect(err).NotTo(HaveOccurred())
			b, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(string(b)).To(ContainSubstring("controller_runtime_"), svc)
		}
	})

	It("takes a GitHub-signed delivery through the receiver's Service to the demo agent's Pod, found by its card at its Service's DNS name", func(ctx SpecContext) {
		ns := namespace(ctx, "team-node")
		eps := githubEndpoints(ctx, ns, []string{demoAgent(ctx, ns)}, 1)
		a := deliver(ctx, sender(10*time.Second), eps[0], "first")
		Expect(a.err).NotTo(HaveOccurred())
		Expect(a.status).To(Equal(http.StatusAccepted))
		run := &agentsv1alpha1.AgentRun{}
		Eventually(func(g Gomega) agentsv1alpha1.RunState {
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.runID}, run)).To(Succeed())
			return run.Status.State
		}).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(run.Status.Output).To(ContainSubstring("Delivery first"))
	})

	It("lets through the Service what two receivers allow of one endpoint's limit", func(ctx SpecContext) {
		ns := namespace(ctx, "team-limit")
		statuses := deliverMany(ctx, ns, "limit", 200)
		figure("limit: one endpoint (rateLimit 60/min), 200 deliveries in %s through the Service to 2 receivers: %s", "under a minute", describe(statuses))
		Expect(statuses["202"]).To(BeNumerically(">=", 60))
		Expect(statuses["202"]).To(BeNumerically("<=", 120), "each replica counts alone: at most twice the limit")
		Expect(statuses["202"] + statuses["HTTP 429 rate_limited"]).To(Equal(200))
	})

	It("lets through the Service exactly one endpoint's limit when the two receivers share a Redis (receiver.rateLimit.store)", func(ctx SpecContext) {
		storeAt := sharedStore(ctx)
		ns := namespace(ctx, "team-store")
		statuses := deliverMany(ctx, ns, "store", 200)
		figure("limit with receiver.rateLimit.store (redis-server on the node at %s): one endpoint, 200 deliveries through the Service to 2 receivers: %s", storeAt, describe(statuses))
		Expect(statuses).To(Equal(map[string]int{"202": 60, "HTTP 429 rate_limited": 140}))
		runs := &agentsv1alpha1.AgentRunList{}
		Expect(admin.List(ctx, runs, client.InNamespace(ns))).To(Succeed())
		skipped := 0
		for _, r := range runs.Items {
			if r.Status.State == agentsv1alpha1.RunSkipped {
				skipped++
			}
		}
		Expect(skipped).To(Equal(1), "one skipped run for the window, of either replica")
	}, NodeTimeout(10*time.Minute))

	It("accepts GitHub deliveries through the Service (throughput, beside make bench's process harness)", func(ctx SpecContext) {
		ns := namespace(ctx, "team-throughput")
		eps := githubEndpoints(ctx, ns, loadAgents(ctx, ns), loadEndpoints)
		// As make bench measures accepted GitHub calls: 16 closed-loop
		// workers, 5 s, keep-alive, a new delivery ID each call; the
		// receiver's host resolved through CoreDNS.
		const workers = 16
		c := loadgen.Client(workers)
		transport, ok := c.Transport.(*http.Transport)
		Expect(ok).To(BeTrue())
		transport.DialContext = coreDNSDialer().DialContext
		r := loadgen.Run(ctx, c, workers, 5*time.Second, func(ctx context.Context, w, i int) (*http.Request, error) {
			return githubRequest(ctx, eps[(w*7919+i)%len(eps)], fmt.Sprintf("throughput-%d-%d", w, i))
		})
		figure("throughput: GitHub calls accepted through the receiver's Service (2 replicas, their rate limits in the node's redis-server), 16 workers, 5 s, keep-alive: %s", r)
		Expect(r.Statuses).To(HaveKey(http.StatusAccepted))
	})

	It("loses no delivery when a receiver Pod is deleted under load", func(ctx SpecContext) {
		ns := namespace(ctx, "team-delete")
		eps := githubEndpoints(ctx, ns, loadAgents(ctx, ns), loadEndpoints)
		victim := podsOf(ctx, "receiver")[0]
		f := steadyLoad(ctx, eps, loadRate, 30*time.Second, 10*time.Second, func(steady <-chan struct{}) {
			Eventually(steady).WithTimeout(time.Minute).Should(BeClosed())
			Expect(admin.Delete(ctx, &victim)).To(Succeed())
			Eventually(func() bool {
				for _, p := range podsOf(ctx, "receiver") {
					if p.Name == victim.Name {
						return false
					}
				}
				return true
			}).Should(BeTrue())
			command(ctx, node.kubectl, "-n", releaseNamespace, "rollout", "status", "deployment/hookrun-receiver", "--timeout=3m")
		})
		report(ctx, "delete a receiver Pod", ns, f)
	})

	It("loses no delivery when the operator's container is killed (kill -9) under load", func(ctx SpecContext) {
		ns := namespace(ctx, "team-kill")
		eps := githubEndpoints(ctx, ns, loadAgents(ctx, ns), loadEndpoints)
		operator := podsOf(ctx, "operator")[0]
		restarts := operator.Status.ContainerStatuses[0].RestartCount
		f := steadyLoad(ctx, eps, loadRate, 30*time.Second, 10*time.Second, func(steady <-chan struct{}) {
			Eventually(steady).WithTimeout(time.Minute).Should(BeClosed())
			pid := processOf(operator, "operator")
			Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
			Eventually(func(g Gomega) {
				p := &corev1.Pod{}
				g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(&operator), p)).To(Succeed())
				g.Expect(p.Status.ContainerStatuses[0].RestartCount).To(BeNumerically(">", restarts))
				g.Expect(ready(*p)).To(BeTrue())
			}).Should(Succeed())
		})
		report(ctx, "kill -9 the operator's container", ns, f)
	})

	It("loses no delivery in a rolling upgrade to another version under load", func(ctx SpecContext) {
		ns := namespace(ctx, "team-upgrade")
		eps := githubEndpoints(ctx, ns, loadAgents(ctx, ns), loadEndpoints)
		old := podsOf(ctx, "operator")[0].Name
		var gap time.Duration
		f := steadyLoad(ctx, eps, loadRate, 30*time.Second, 10*time.Second, func(steady <-chan struct{}) {
			Eventually(steady).WithTimeout(time.Minute).Should(BeClosed())
			leases := watchLease(ctx, old)
			command(ctx, node.helm, "upgrade", releaseName, "oci://"+node.registry+"/hookrun/charts/hookrun",
				"--version", node.next, "--plain-http", "-n", releaseNamespace, "--reuse-values")
			for _, d := range []string{"hookrun-operator", "hookrun-receiver"} {
				command(ctx, node.kubectl, "-n", releaseNamespace, "rollout", "status", "deployment/"+d, "--timeout=5m")
			}
			gap = <-leases
		})
		for _, component := range []string{"operator", "receiver"} {
			for _, p := range podsOf(ctx, component) {
				Expect(p.Spec.Containers[0].Image).To(HaveSuffix(":"+node.next), "pod %s runs the new version", p.Name)
			}
		}
		figure("upgrade: the operator's Lease passed from the old Pod to the new one in %s", gap.Round(10*time.Millisecond))
		report(ctx, "rolling upgrade (helm upgrade)", ns, f)
	}, NodeTimeout(20*time.Minute))
})

// report records a disruption's figures and holds them to the goal: no
// delivery the sender saw fail, no accepted run lost, every run a success.
func report(ctx context.Context, what, ns string, f loadFigures) {
	GinkgoHelper()
	lost, notSuccess := outcome(ctx, ns, f.runIDs)
	figure("%s: %d deliveries at %d/s, %d failed as the sender saw them (%s), %d accepted runs lost, %d runs not success (%s)",
		what, f.sent, loadRate, sum(f.failed), describe(f.failed), lost, sum(notSuccess), describe(notSuccess))
	Expect(f.failed).To(BeEmpty(), "deliveries the sender saw fail")
	Expect(lost).To(BeZero(), "accepted runs lost")
	Expect(notSuccess).To(BeEmpty(), "runs not success")
}

// loadAgents applies the demo agent in ns and returns its Agent and
// loadAgentsN-1 more Agents at the same URL, once Ready.
func loadAgents(ctx context.Context, ns string) []string {
	GinkgoHelper()
	first := demoAgent(ctx, ns)
	names := []string{first}
	for i := 2; i <= loadAgentsN; i++ {
		a := &agentsv1alpha1.Agent{}
		Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: first}, a)).To(Succeed())
		name := fmt.Sprintf("%s-%d", first, i)
		Expect(admin.Create(ctx, &agentsv1alpha1.Agent{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: a.Spec,
		})).To(Succeed())
		names = append(names, name)
	}
	for _, name := range names {
		agentReady(ctx, ns, name)
	}
	return names
}

// namespace creates a namespace for one spec.
func namespace(ctx context.Context, name string) string {
	GinkgoHelper()
	Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// demoAgentURL is the base URL of the demo agent demo-agent.yaml serves in
// ns: its Service, by its cluster DNS name.
func demoAgentURL(ns string) string {
	return "http://demo-agent." + ns + ".svc.cluster.local/"
}

// demoNamespace is the namespace demo-agent.yaml names, as the file's
// header replaces it (sed -E 's/hookrun-demo([.]|$)/NS\1/'): not the image
// hookrun-demo-agent.
var demoNamespace = regexp.MustCompile(`(?m)hookrun-demo([.]|$)`)

// demoAgent applies the release's demo-agent.yaml in ns (its namespace
// hookrun-demo replaced) and returns the
// name of its Agent once the operator has read its card.
func demoAgent(ctx context.Context, ns string) string {
	GinkgoHelper()
	// The file's namespace is hookrun-demo; its header says to replace it
	// to run the agent elsewhere.
	manifest, err := os.ReadFile(filepath.Join(node.dist, "demo-agent.yaml"))
	Expect(err).NotTo(HaveOccurred())
	apply := exec.CommandContext(ctx, node.kubectl, "apply", "-f", "-")
	apply.Env = append(os.Environ(), "KUBECONFIG="+node.kubeconfig)
	apply.Stdin = strings.NewReader(demoNamespace.ReplaceAllString(string(manifest), ns+"$1"))
	out, err := apply.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "applying demo-agent.yaml in %s: %s", ns, out)
	command(ctx, node.kubectl, "-n", ns, "wait", "--for=condition=Available", "deployment", "--all", "--timeout=3m")
	agents := &agentsv1alpha1.AgentList{}
	Expect(admin.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
	Expect(agents.Items).To(HaveLen(1))
	name := agents.Items[0].Name
	agentReady(ctx, ns, name)
	return name
}

// agentReady waits until the operator has made Agent ns/name Ready (its
// card read).
func agentReady(ctx context.Context, ns, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		a := &agentsv1alpha1.Agent{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, a)).To(Succeed())
		g.Expect(a.Status.Conditions).To(ContainElement(And(
			HaveField("Type", "Ready"), HaveField("Status", metav1.ConditionTrue))))
	}).Should(Succeed())
}

// processOf finds the PID of the process of pod's container that runs
// hookrun ROLE: on this node, the process whose cgroup names the pod's UID.
func processOf(pod corev1.Pod, role string) int {
	GinkgoHelper()
	uid := strings.ReplaceAll(string(pod.UID), "-", "_")
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), "\x00"+role+"\x00") {
			continue
		}
		cgroup, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err == nil && (strings.Contains(string(cgroup), string(pod.UID)) || strings.Contains(string(cgroup), uid)) {
			return pid
		}
	}
	Fail(fmt.Sprintf("no process of pod %s runs hookrun %s", pod.Name, role))
	return 0
}

// watchLease polls the operator's Lease until a holder other than old holds
// it, and sends how long it went without a live holder: from the last time
// old held it to the first time another did.
func watchLease(ctx context.Context, old string) <-chan time.Duration {
	gap := make(chan time.Duration, 1)
	go func() {
		defer GinkgoRecover()
		last := time.Now()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for ; ctx.Err() == nil; <-tick.C {
			lease := &coordinationv1.Lease{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: operatorLease}, lease); err == nil {
				holder := ""
				if lease.Spec.HolderIdentity != nil {
					holder = *lease.Spec.HolderIdentity
				}
				switch {
				case strings.HasPrefix(holder, old):
					last = time.Now()
				case holder != "":
					gap <- time.Since(last)
					return
				}
			}
		}
	}()
	return gap
}
