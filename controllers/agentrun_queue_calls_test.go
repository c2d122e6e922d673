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
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// tarpit is an agent that answers nothing: it holds every request open
// until its caller gives up or the spec ends, and counts what it holds.
type tarpit struct {
	srv *httptest.Server

	mu                 sync.Mutex
	open, peak, gaveUp int
	bodies             []string
}

func newTarpit() *tarpit {
	t := &tarpit{}
	done := make(chan struct{})
	t.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		t.mu.Lock()
		t.open++
		t.peak = max(t.peak, t.open)
		t.bodies = append(t.bodies, string(body))
		t.mu.Unlock()
		select {
		case <-r.Context().Done():
			t.mu.Lock()
			t.gaveUp++
			t.mu.Unlock()
		case <-done:
		}
		t.mu.Lock()
		t.open--
		t.mu.Unlock()
	}))
	DeferCleanup(func() {
		close(done)
		t.srv.Close()
	})
	return t
}

// held tells how many requests are open now, and the most there were at once.
func (t *tarpit) held() (open, peak int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open, t.peak
}

// callersGaveUp counts the requests whose caller hung up.
func (t *tarpit) callersGaveUp() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gaveUp
}

// requestsFor counts the requests that carried the run's UID (its messageId).
func (t *tarpit) requestsFor(uid types.UID) func() int {
	return func() int {
		t.mu.Lock()
		defer t.mu.Unlock()
		n := 0
		for _, b := range t.bodies {
			if strings.Contains(b, string(uid)) {
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
func expectNeighbourServed(ctx SpecContext, pit *tarpit, share int) {
	GinkgoHelper()
	good := newTestAgent()
	neighbour := newNamespace(ctx)
	createAgent(ctx, neighbour, "triage", good.srv.URL, 4)
	run := queueTestRun(ctx, neighbour, "neighbour", "{}", nil)
	Eventually(good.received).Should(HaveLen(1), "the neighbour's run reached its agent")
	open, peak := pit.held()
	Expect(open).To(Equal(share), "while the tarpit still holds its share")
	Expect(peak).To(Equal(share), "never more than its share")
	Expect(pit.callersGaveUp()).To(BeZero(), "before any of the tarpit's calls timed out")
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
		share := AgentShare(opts.DispatchWorkers)
		Expect(share).To(Equal(2))

		pit := newTarpit()
		hostile := newNamespace(ctx)
		createAgent(ctx, hostile, "tarpit", pit.srv.URL, 20)
		for i := range 20 {
			queueTestRun(ctx, hostile, fmt.Sprintf("held-%02d", i), "{}", func(r *agentsv1alpha1.AgentRun) {
				r.Labels[agentsv1alpha1.LabelAgent] = "tarpit"
				r.Spec.AgentRef.Name = "tarpit"
			})
		}
		Eventually(func() int {
			open, _ := pit.held()
			return open
		}).Should(Equal(share), "the tarpit holds its share")

		expectNeighbourServed(ctx, pit, share)
		for i := range 20 {
			// Admission may still be writing the last of the 20 under load:
			// started (running) is what counts, not how soon.
			held := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: hostile, Name: fmt.Sprintf("held-%02d", i)}}
			Eventually(func() agentsv1alpha1.RunState { return get(ctx, held).Status.State }).Should(Equal(agentsv1alpha1.RunRunning), "the tarpit's runs wait, started, for their turn")
		}
		open, _ := pit.held()
		Expect(open).To(Equal(share), "and the tarpit still holds only its share")
	})

	It("gives four tarpit Agents of one namespace at most half the dispatch workers together: another namespace's run reaches its agent meanwhile", func(ctx SpecContext) {
		opts := *testOptions
		opts.A2ACallTimeout = DefaultA2ACallTimeout
		restartOperator(&opts)
		share := NamespaceShare(opts.DispatchWorkers)
		Expect(share).To(Equal(4))
		Expect(4*AgentShare(opts.DispatchWorkers)).To(Equal(opts.DispatchWorkers), "four Agents' shares are all the workers")

		pit := newTarpit()
		hostile := newNamespace(ctx)
		for a := range 4 {
			agent := fmt.Sprintf("tarpit-%d", a)
			createAgent(ctx, hostile, agent, pit.srv.URL, 5)
			for i := range 5 {
				queueTestRun(ctx, hostile, fmt.Sprintf("%s-held-%d", agent, i), "{}", func(r *agentsv1alpha1.AgentRun) {
					r.Labels[agentsv1alpha1.LabelAgent] = agent
					r.Spec.AgentRef.Name = agent
				})
			}
		}
		Eventually(func() int {
			open, _ := pit.held()
			return open
		}).Should(Equal(share), "the tarpits hold their namespace's share")

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
		createAgent(ctx, ns, "triage", pit.srv.URL, 1)
		run := queueTestRun(ctx, ns, "held", "{}", nil)

		// The send is cut off (the agent sees its caller hang up) and sent
		// again, with the same messageId; the run keeps running meanwhile.
		Eventually(pit.callersGaveUp).Should(BeNumerically(">=", 1))
		Eventually(pit.requestsFor(run.UID)).Should(BeNumerically(">=", 2))
		st := get(ctx, run).Status
		Expect(st.State).To(Equal(agentsv1alpha1.RunRunning))
		Expect(st.TaskID).To(BeEmpty())

		fakeClock.Step(2 * time.Minute) // past the Agent's runTimeout
		Eventually(stateOf(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(Equal("The run exceeded its timeout of 1m0s before the agent accepted the message"))
	})
})

// The call queue: at most the share of calls per Agent, other Agents
// unaffected, waiting runs served first come first served, and a run that
// stops waiting never holds up the ones behind it.
func TestCallQueue(t *testing.T) {
	ctx := context.Background()
	q := newCallQueue(8) // a share of 2
	run := func(agent, name string) *agentsv1alpha1.AgentRun {
		r := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
		r.Spec.AgentRef.Name = agent
		return r
	}
	key := func(r *agentsv1alpha1.AgentRun) types.NamespacedName {
		return types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	}
	// reconcile is one reconcile of r that asks for a call, as execution's.
	reconcile := func(r *agentsv1alpha1.AgentRun) bool {
		defer q.settle(ctx, key(r))
		return q.take(r)
	}
	woken := func() []string {
		var names []string
		for {
			select {
			case e := <-q.wake:
				names = append(names, e.Object.Name)
			default:
				return names
			}
		}
	}
	expect := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", what, got, want)
		}
	}

	a1, a2, a3, a4, a5 := run("tarpit", "a1"), run("tarpit", "a2"), run("tarpit", "a3"), run("tarpit", "a4"), run("tarpit", "a5")
	expect("first two calls", []bool{reconcile(a1), reconcile(a2)}, []bool{true, true})
	expect("past the share", []bool{reconcile(a3), reconcile(a4), reconcile(a5)}, []bool{false, false, false})
	expect("another Agent", reconcile(run("triage", "b1")), true)
	expect("another namespace's Agent of the same name", q.take(&agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "c1"}, Spec: a1.Spec}), true)
	expect("nobody woken yet", woken(), []string(nil))

	q.release(ctx, a1)
	expect("a call ends: the first waiting run's turn", woken(), []string{"a3"})
	expect("a later one asking again waits", reconcile(a5), false)
	expect("nobody else woken", woken(), []string(nil))
	expect("the woken run takes the call", reconcile(a3), true)

	q.release(ctx, a2)
	expect("the next turn", woken(), []string{"a4"})
	// a4 is woken, but its run has ended meanwhile: its reconcile asks for
	// nothing, and the turn passes on.
	q.settle(ctx, key(a4))
	expect("a run that stopped waiting passes its turn on", woken(), []string{"a5"})
	expect("a newcomer queues behind a5", reconcile(run("tarpit", "a6")), false)
	expect("a5 takes the call", reconcile(a5), true)
	expect("the tarpit is at its share again", reconcile(run("tarpit", "a7")), false)

	q.release(ctx, a3)
	q.release(ctx, a5)
	expect("both calls end: the two waiting runs, in order", woken(), []string{"a6", "a7"})
	for _, r := range []*agentsv1alpha1.AgentRun{run("tarpit", "a6"), run("tarpit", "a7")} {
		expect("woken "+r.Name+" takes the call", reconcile(r), true)
		q.release(ctx, r)
	}
	expect("nothing left to wake", woken(), []string(nil))
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := q.namespaces["team-a"]; (n != nil && n.agents["tarpit"] != nil) || len(q.waiting) != 0 {
		t.Errorf("an idle Agent is remembered: %+v, waiting %v", n, q.waiting)
	}
}

// The namespace's share: four Agents of one namespace, each within its own
// share, hold at most half the workers together; another namespace's run
// takes a call meanwhile; a call of the namespace that ends wakes a waiting
// run of another of its Agents.
func TestCallQueueNamespaceShare(t *testing.T) {
	ctx := context.Background()
	q := newCallQueue(8) // an Agent's share 2, a namespace's 4
	run := func(ns, agent, name string) *agentsv1alpha1.AgentRun {
		r := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		r.Spec.AgentRef.Name = agent
		return r
	}
	woken := func() []string {
		var names []string
		for {
			select {
			case e := <-q.wake:
				names = append(names, e.Object.Name)
			default:
				return names
			}
		}
	}
	var took []*agentsv1alpha1.AgentRun
	var refused []string
	for _, agent := range []string{"pit-1", "pit-2", "pit-3", "pit-4"} {
		for i := range 2 {
			r := run("hostile", agent, fmt.Sprintf("%s-%d", agent, i))
			if q.take(r) {
				took = append(took, r)
			} else {
				refused = append(refused, r.Name)
			}
		}
	}
	if len(took) != NamespaceShare(8) {
		t.Fatalf("four Agents of one namespace hold %d calls, want %d (half the workers); refused %v", len(took), NamespaceShare(8), refused)
	}
	if !q.take(run("neighbour", "triage", "n1")) || !q.take(run("neighbour", "triage", "n2")) {
		t.Fatal("another namespace's runs wait while the hostile one holds its share")
	}
	if got := woken(); got != nil {
		t.Errorf("woken before any call ended: %v", got)
	}
	q.release(ctx, took[0])
	got := woken()
	if len(got) != 1 || !strings.HasPrefix(got[0], "pit-3") && !strings.HasPrefix(got[0], "pit-4") {
		t.Fatalf("a call of the namespace ends: woken %v, want one waiting run of pit-3 or pit-4", got)
	}
	if !q.take(run("hostile", strings.SplitN(got[0], "-", 3)[0]+"-"+strings.SplitN(got[0], "-", 3)[1], got[0])) {
		t.Errorf("the woken run %s does not take the call", got[0])
	}
	if q.take(run("hostile", "pit-1", "pit-1-late")) {
		t.Error("the namespace holds more than its share")
	}
}
