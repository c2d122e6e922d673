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

package run

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// An agent that turns a send away with 429 or 503 gets it again after its
// Retry-After, or after a backoff from 1s; the run says why it waits. Time
// is the suite's fake clock: nothing is sent again before it is stepped
// past status.retry.notBefore, and a poke wakes the run then (its real
// requeue would come as late as the wait).
var _ = Describe("AgentRun retries", func() {
	var (
		ns    string
		agent *a2apeers.Peer
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		agent = servePeer(ctx, ns, nil)
	})

	// waiting reads the run's retry while it waits, and its Ready condition
	// (which says why).
	waiting := func(ctx SpecContext, run *agentsv1alpha1.AgentRun) func(Gomega) *agentsv1alpha1.RunRetry {
		return func(g Gomega) *agentsv1alpha1.RunRetry {
			st := get(ctx, run).Status
			g.Expect(st.Retry).NotTo(BeNil())
			ready := meta.FindStatusCondition(st.Conditions, agentsv1alpha1.ConditionReady)
			g.Expect(ready).To(haveCondition("False", agentsv1alpha1.ReasonRetrying))
			g.Expect(ready.Message).To(Equal(st.Retry.Message))
			return st.Retry
		}
	}
	succeeds := func(ctx SpecContext, run *agentsv1alpha1.AgentRun) {
		GinkgoHelper()
		Eventually(func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(get(ctx, run).Status.Retry).To(BeNil())
		Expect(agent.Messages()).To(HaveLen(1), "the agent took the message once")
	}

	It("sends again after the agent's 429 Retry-After, not before, saying why it waits", func(ctx SpecContext) {
		agent.TurnAway(1, http.StatusTooManyRequests, "30")
		sent := fakeClock.Now()
		run := queueTestRun(ctx, ns, "run-429", "{}", nil)
		Eventually(waiting(ctx, run)).Should(And(
			HaveField("Attempts", int32(1)),
			HaveField("NotBefore.Time", BeTemporally("==", sent.Add(30*time.Second))),
			HaveField("Message", "The agent answered 429; sending again in 30s (Retry-After)")))
		Expect(callsTo(agent)()).To(Equal(1))

		fakeClock.Step(29 * time.Second)
		poke(ctx, run)
		Consistently(callsTo(agent)).Should(Equal(1), "sent again before the Retry-After ended")
		Expect(get(ctx, run).Status.Retry).NotTo(BeNil())

		fakeClock.Step(time.Second)
		poke(ctx, run)
		succeeds(ctx, run)
	})

	It("backs off from 1s, doubling, when the agent's 503 has no Retry-After", func(ctx SpecContext) {
		agent.TurnAway(2, http.StatusServiceUnavailable, "")
		start := fakeClock.Now()
		run := queueTestRun(ctx, ns, "run-503", "{}", nil)
		first := waiting(ctx, run)
		Eventually(first).Should(HaveField("Attempts", int32(1)))
		retry := get(ctx, run).Status.Retry
		// 1s, less up to a fifth of it for the jitter.
		Expect(retry.NotBefore.Sub(start)).To(And(BeNumerically(">", 800*time.Millisecond), BeNumerically("<=", time.Second)))
		Expect(retry.Message).To(MatchRegexp(`^The agent answered 503; sending again in [0-9.]+m?s \(backoff, 1 in a row\)$`))

		fakeClock.Step(time.Second)
		poke(ctx, run)
		Eventually(waiting(ctx, run)).Should(HaveField("Attempts", int32(2)))
		retry = get(ctx, run).Status.Retry
		Expect(retry.NotBefore.Sub(fakeClock.Now())).To(And(BeNumerically(">", 1600*time.Millisecond), BeNumerically("<=", 2*time.Second)))
		Expect(retry.Message).To(ContainSubstring("(backoff, 2 in a row)"))

		fakeClock.Step(2 * time.Second)
		poke(ctx, run)
		succeeds(ctx, run)
		Expect(agent.TurnAwaysLeft()).To(BeZero())
	})

	It("looks at a task again after the Retry-After of the agent's 503 to a poll", func(ctx SpecContext) {
		run := queueTestRun(ctx, ns, "run-poll", "hang on", nil)
		Eventually(func() string { return get(ctx, run).Status.TaskID }).ShouldNot(BeEmpty())
		agent.TurnAway(1, http.StatusServiceUnavailable, "20")
		at := fakeClock.Now()
		Eventually(waiting(ctx, run)).Should(And(
			HaveField("NotBefore.Time", BeTemporally("==", at.Add(20*time.Second))),
			HaveField("Message", "The agent answered 503; looking at its task again in 20s (Retry-After)")))
		calls := callsTo(agent)()
		poke(ctx, run)
		Consistently(callsTo(agent)).Should(Equal(calls), "looked again before the Retry-After ended")

		fakeClock.Step(20 * time.Second)
		poke(ctx, run)
		Eventually(func() *agentsv1alpha1.RunRetry { return get(ctx, run).Status.Retry }).Should(BeNil())
		Expect(get(ctx, run).Status.State).To(Equal(agentsv1alpha1.RunRunning))
	})

	It("ends a run whose agent keeps turning it away at its timeout, saying how often", func(ctx SpecContext) {
		agent.TurnAway(100, http.StatusTooManyRequests, "300")
		run := queueTestRun(ctx, ns, "run-timeout", "{}", nil)
		Eventually(waiting(ctx, run)).Should(HaveField("Attempts", int32(1)))
		fakeClock.Step(time.Minute) // the Agent's runTimeout, before the 5m asked for
		poke(ctx, run)
		Eventually(func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }).Should(Equal(agentsv1alpha1.RunError))
		st := get(ctx, run).Status
		Expect(st.Message).To(Equal("The run exceeded its timeout of 1m0s before the agent accepted the message (calls turned away in a row: 1)"))
		Expect(st.Retry).To(BeNil())
		Expect(callsTo(agent)()).To(Equal(1))
	})
})
