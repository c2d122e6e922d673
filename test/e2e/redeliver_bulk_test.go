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
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// bulkNS holds the endpoints of the bulk redelivery and fields specs.
const bulkNS = "bulk"

// The plugin against the whole system: an endpoint's failed runs sent again
// in bulk after an outage, and what an endpoint with spec.fields sends.
var _ = Describe("kubectl hookrun redeliver --endpoint, and fields", Ordered, func() {
	plugin := func(ctx context.Context, args ...string) pluginResult {
		GinkgoHelper()
		return runPlugin(ctx, append([]string{"--kubeconfig", cluster.DeveloperKubeconfig, "-n", bulkNS}, args...)...)
	}
	runsOf := func(ctx context.Context, endpoint string) []agentsv1alpha1.AgentRun {
		GinkgoHelper()
		list := &agentsv1alpha1.AgentRunList{}
		Expect(cluster.AdminClient.List(ctx, list, client.InNamespace(bulkNS), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: endpoint})).To(Succeed())
		return list.Items
	}
	inState := func(runs []agentsv1alpha1.AgentRun, state agentsv1alpha1.RunState) int {
		n := 0
		for i := range runs {
			if runs[i].EffectiveState() == state {
				n++
			}
		}
		return n
	}

	BeforeAll(func(ctx SpecContext) {
		pluginBinary = thePlugin(ctx)
		By("a namespace where the developer is an editor, with the Agent, the Header endpoint and the fields sample")
		Expect(cluster.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bulkNS}})).To(Succeed())
		bindRoleIn(ctx, bulkNS, devcluster.Developer, "edit")
		samplesIn(ctx, bulkNS, []string{"github-issues", "github-issue-fields"}, "agent.yaml", "webhookendpoint_github.yaml", "fields")
	})

	It("shows an endpoint's fields on its card, and what the agent got of a test call", func(ctx SpecContext) {
		r := plugin(ctx, "show", "github-issue-fields")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`Payload:\s+the fields as one JSON object, in place of the body`))
		Expect(r.stdout).To(ContainSubstring("labels = body.issue.labels.map(l, l.name)"))

		r = plugin(ctx, "test", "github-issue-fields")
		Expect(r.code).To(Equal(0), r.stderr)
		// The plugin's sample issue has no labels and no text.
		fields := `{"labels":null,"number":7,"text":"","title":"Login fails"}`
		Expect(r.stdout).To(ContainSubstring("The agent gets these fields in place of the body (and in the message's metadata):"))
		Expect(r.stdout).To(ContainSubstring(`"title": "Login fails"`))
		Expect(r.stdout).To(ContainSubstring("Fields that failed (null above): labels"))
		Expect(r.stdout).To(ContainSubstring(fmt.Sprintf("Demo agent received %d bytes (text). First line: %s", len(fields), fields)),
			"the demo agent got the fields, not the body")
	})

	It("lists an endpoint's failed runs, sends each again with its new runId, starts no second run for one sent before, and stops at the first 429", func(ctx SpecContext) {
		ep, err := cluster.EndpointFor(ctx, bulkNS, "github-issues")
		Expect(err).NotTo(HaveOccurred())
		By("three calls the agent fails: an outage")
		for range 3 {
			a := call(ctx, ep.URL, ep.Secret, "demo:fail")
			Expect(a.Status).To(Equal(http.StatusAccepted), a.Body)
		}
		Eventually(func() int { return inState(runsOf(ctx, "github-issues"), agentsv1alpha1.RunError) }).Should(Equal(3))

		By("without --yes: a list, nothing sent")
		r := plugin(ctx, "redeliver", "--endpoint", "github-issues", "--since", "1h")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("3 runs of endpoint bulk/github-issues in state error, received within 1h0m0s would be sent again, oldest first:"))
		Expect(r.stdout).To(ContainSubstring("Nothing was sent: add --yes to send them."))
		Expect(runsOf(ctx, "github-issues")).To(HaveLen(3))

		By("with --yes: each sent, with its new runId")
		r = plugin(ctx, "redeliver", "--endpoint", "github-issues", "--yes")
		Expect(r.code).To(Equal(0), r.stderr)
		sent := regexp.MustCompile(`\[\d/3\] github-issues-[0-9a-z]{26}: 202, run (github-issues-[0-9a-z]{26})`).FindAllStringSubmatch(r.stdout, -1)
		Expect(sent).To(HaveLen(3), r.stdout)
		Expect(r.stdout).To(ContainSubstring("Done: 3 sent, 0 sent before, 0 not sent."))
		Eventually(func() int { return inState(runsOf(ctx, "github-issues"), agentsv1alpha1.RunError) }).Should(Equal(6), "the agent is still down")
		for _, s := range sent {
			run := get(ctx, &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: bulkNS, Name: s[1]}})
			Expect(run.Spec.Sender.DeliveryID).To(HavePrefix("hookrun-redeliver-github-issues-"))
		}

		By("again: the runs sent before are skipped, and only the resends that failed too are sent")
		r = plugin(ctx, "redeliver", "--endpoint", "github-issues", "--yes")
		Expect(r.code).To(Equal(0), r.stderr)
		for _, s := range sent {
			Expect(r.stdout).To(ContainSubstring(": sent again before, as run " + s[1]))
		}
		Expect(r.stdout).To(ContainSubstring("Done: 3 sent, 3 sent before, 0 not sent."))
		Expect(runsOf(ctx, "github-issues")).To(HaveLen(9), "three new runs, not six")
		Eventually(func() int { return inState(runsOf(ctx, "github-issues"), agentsv1alpha1.RunError) }).Should(Equal(9))

		By("the window full (9 calls so far): the next bulk stops at the first 429, saying how many are left and when to try again")
		for range rateLimit - 9 {
			Expect(call(ctx, ep.URL, ep.Secret, "{}").Status).To(Equal(http.StatusAccepted))
		}
		r = plugin(ctx, "redeliver", "--endpoint", "github-issues", "--yes")
		Expect(r.code).To(Equal(1))
		// Oldest first, by receivedAt (whole seconds): the three resends
		// not sent again may come between the others of their second.
		before := strings.Count(r.stdout, ": sent again before, as run ")
		Expect(before).To(BeNumerically("<=", 6))
		Expect(r.stdout).To(MatchRegexp(`\[%d/9\] github-issues-[0-9a-z]{26}: 429 Too Many Requests[^\n]*\n$`, before+1), "the first run not sent before gets the 429, and nothing is sent after it")
		Expect(r.stderr).To(MatchRegexp(`stopped at the first 429: 0 sent, %d left; try again in \d+ s`, 9-before))
	})

	It("refuses --state of runs that have not ended, a run with --endpoint, and --yes without it", func(ctx SpecContext) {
		r := plugin(ctx, "redeliver", "--endpoint", "github-issues", "--state", "running")
		Expect(r.code).To(Equal(2))
		Expect(r.stderr).To(ContainSubstring("a queued or running run would reach the agent twice"))
		r = plugin(ctx, "redeliver", "--endpoint", "github-issues", "github-issues-x")
		Expect(r.code).To(Equal(2))
		Expect(r.stderr).To(ContainSubstring("name either a run or --endpoint, not both"))
		r = plugin(ctx, "redeliver", "github-issues-x", "--yes")
		Expect(r.code).To(Equal(2))
		Expect(r.stderr).To(ContainSubstring("--state, --since and --yes go with --endpoint"))
	})
})
