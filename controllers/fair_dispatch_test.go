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

package controllers

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	agentrun "github.com/hookrun/hookrun/controllers/run"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// newTarpit starts an agent that answers nothing: it holds every request
// open until its caller gives up or the spec ends (a2apeers.Tarpit).
func newTarpit() *a2apeers.Peer {
	pit := a2apeers.V03(a2apeers.Tarpit())
	DeferCleanup(pit.Close)
	return pit
}

// heldOpen tells how many requests pit holds open now.
func heldOpen(pit *a2apeers.Peer) int {
	open, _, _ := pit.Held()
	return open
}

// callersGaveUp counts the requests to pit whose caller hung up.
func callersGaveUp(pit *a2apeers.Peer) func() int {
	return func() int {
		_, _, gaveUp := pit.Held()
		return gaveUp
	}
}

// requestsFor counts the requests to peer that carried the run's UID (its
// messageId).
func requestsFor(peer *a2apeers.Peer, uid types.UID) func() int {
	return func() int {
		n := 0
		for _, r := range peer.Requests() {
			if strings.Contains(string(r.Body), string(uid)) {
				n++
			}
		}
		return n
	}
}

// createAgent creates an A2A 0.3 Agent at url with slots concurrent runs.
func createAgent(ctx SpecContext, ns, name, url string, slots int32) {
	GinkgoHelper()
	a := newAgent(ns, name)
	a.Spec.A2A.URL = url
	a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
	a.Spec.RunTimeout = &metav1.Duration{Duration: time.Minute}
	a.Spec.MaxConcurrentRuns = slots
	create(ctx, a)
}

// stateOf polls run's state.
func stateOf(ctx SpecContext, run *agentsv1alpha1.AgentRun) func() agentsv1alpha1.RunState {
	return func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }
}

// expectNeighbourServed sends a run of an Agent of a new namespace while
// the tarpit pit holds share calls: it reaches its agent and succeeds while
// the tarpit holds its share still, never more, and none of its calls has
// timed out yet.
func expectNeighbourServed(ctx SpecContext, pit *a2apeers.Peer, share int) {
	GinkgoHelper()
	good := startPeer()
	neighbour := newNamespace(ctx)
	createAgent(ctx, neighbour, "triage", good.URL, 4)
	run := queueTestRun(ctx, neighbour, "neighbour", "{}", nil)
	Eventually(good.Messages).Should(HaveLen(1), "the neighbour's run reached its agent")
	open, peak, gaveUp := pit.Held()
	Expect(open).To(Equal(share), "while the tarpit still holds its share")
	Expect(peak).To(Equal(share), "never more than its share")
	Expect(gaveUp).To(BeZero(), "before any of the tarpit's calls timed out")
	Eventually(stateOf(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
}

var _ = Describe("Fair dispatch", func() {
	// restartOperator runs the suite's operator with opts until the spec ends.
	restartOperator := func(opts *OperatorOptions) {
		stopManager()
		stopManager = startManagerWith(opts)
		DeferCleanup(func() {
			stopManager()
			stopManager = startManager()
		})
	}

	It("gives a tarpit agent at most its share of the dispatch workers: another Agent's run reaches its agent meanwhile", func(ctx SpecContext) {
		// The default deadline: each call to the tarpit holds its worker 30 s.
		opts := *testOptions
		opts.A2ACallTimeout = DefaultA2ACallTimeout
		restartOperator(&opts)
		share := agentrun.AgentShare(opts.DispatchWorkers)
		Expect(share).To(Equal(2))

		pit := newTarpit()
		hostile := newNamespace(ctx)
		createAgent(ctx, hostile, "tarpit", pit.URL, 20)
		for i := range 20 {
			queueTestRun(ctx, hostile, fmt.Sprintf("held-%02d", i), "{}", func(r *agentsv1alpha1.AgentRun) {
				r.Labels[agentsv1alpha1.LabelAgent] = "tarpit"
				r.Spec.AgentRef.Name = "tarpit"
			})
		}
		Eventually(heldOpen).WithArguments(pit).Should(Equal(share), "the tarpit holds its share")

		expectNeighbourServed(ctx, pit, share)
		for i := range 20 {
			// Admission may still be writing the last of the 20 under load:
			// started (running) is what counts, not how soon.
			held := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: hostile, Name: fmt.Sprintf("held-%02d", i)}}
			Eventually(func() agentsv1alpha1.RunState { return get(ctx, held).Status.State }).Should(Equal(agentsv1alpha1.RunRunning), "the tarpit's runs wait, started, for their turn")
		}
		Expect(heldOpen(pit)).To(Equal(share), "and the tarpit still holds only its share")
	})

	It("gives four tarpit Agents of one namespace at most half the dispatch workers together: another namespace's run reaches its agent meanwhile", func(ctx SpecContext) {
		opts := *testOptions
		opts.A2ACallTimeout = DefaultA2ACallTimeout
		restartOperator(&opts)
		share := agentrun.NamespaceShare(opts.DispatchWorkers)
		Expect(share).To(Equal(4))
		Expect(4*agentrun.AgentShare(opts.DispatchWorkers)).To(Equal(opts.DispatchWorkers), "four Agents' shares are all the workers")

		pit := newTarpit()
		hostile := newNamespace(ctx)
		for a := range 4 {
			agent := fmt.Sprintf("tarpit-%d", a)
			createAgent(ctx, hostile, agent, pit.URL, 5)
			for i := range 5 {
				queueTestRun(ctx, hostile, fmt.Sprintf("%s-held-%d", agent, i), "{}", func(r *agentsv1alpha1.AgentRun) {
					r.Labels[agentsv1alpha1.LabelAgent] = agent
					r.Spec.AgentRef.Name = agent
				})
			}
		}
		Eventually(heldOpen).WithArguments(pit).Should(Equal(share), "the tarpits hold their namespace's share")

		expectNeighbourServed(ctx, pit, share)
	})

	It("cuts a hanging call off at --a2a-call-timeout and retries it like a failed connection until the run times out", func(ctx SpecContext) {
		opts := *testOptions
		opts.A2ACallTimeout = DefaultA2ACallTimeout // 30 s, unless the flag says otherwise
		fs := pflag.NewFlagSet("operator", pflag.ContinueOnError)
		opts.BindFlags(fs)
		Expect(fs.Parse([]string{"--a2a-call-timeout=1s"})).To(Succeed())
		restartOperator(&opts)
		pit := newTarpit()
		ns := newNamespace(ctx)
		createAgent(ctx, ns, "triage", pit.URL, 1)
		run := queueTestRun(ctx, ns, "held", "{}", nil)

		// The send is cut off (the agent sees its caller hang up) and sent
		// again, with the same messageId; the run keeps running meanwhile.
		Eventually(callersGaveUp(pit)).Should(BeNumerically(">=", 1))
		Eventually(func() *agentsv1alpha1.RunRetry { return get(ctx, run).Status.Retry }).ShouldNot(BeNil())
		fakeClock.Step(time.Second) // past the first backoff
		poke(ctx, run)
		Eventually(requestsFor(pit, run.UID)).Should(BeNumerically(">=", 2))
		st := get(ctx, run).Status
		Expect(st.State).To(Equal(agentsv1alpha1.RunRunning))
		Expect(st.TaskID).To(BeEmpty())

		fakeClock.Step(2 * time.Minute) // past the Agent's runTimeout
		Eventually(stateOf(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(MatchRegexp(`^The run exceeded its timeout of 1m0s before the agent accepted the message \(calls turned away in a row: [12]\)$`))
	})
})
