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
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

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

// TestCallQueueKeepsAReserve: two namespaces of tarpit Agents (one team's
// dev and prod) do not hold every dispatch worker between them: a
// namespace with a call in flight leaves the reserve free, which goes to
// namespaces with nothing in flight, a call each, so a third and a fourth
// are served.
func TestCallQueueKeepsAReserve(t *testing.T) {
	const workers = 8
	q := newCallQueue(workers) // an Agent's share 2, a namespace's 4, the reserve 2
	run := func(ns, agent, name string) *agentsv1alpha1.AgentRun {
		r := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		r.Spec.AgentRef.Name = agent
		return r
	}
	holds := func(ns string) int {
		n := 0
		for _, agent := range []string{"pit-1", "pit-2", "pit-3", "pit-4"} {
			for i := range 2 {
				if q.take(run(ns, agent, fmt.Sprintf("%s-%s-%d", ns, agent, i))) {
					n++
				}
			}
		}
		return n
	}
	dev, prod := holds("dev"), holds("prod")
	if dev != NamespaceShare(workers) || dev+prod != workers-Reserve(workers) {
		t.Fatalf("dev holds %d, prod %d: want %d, and %d together (the reserve of %d left)", dev, prod, NamespaceShare(workers), workers-Reserve(workers), Reserve(workers))
	}
	if !q.take(run("third", "triage", "t1")) || !q.take(run("fourth", "triage", "f1")) {
		t.Fatal("a third or fourth namespace's run waits while two namespaces hold theirs")
	}
	if q.take(run("third", "triage", "t2")) {
		t.Fatal("a namespace with a call in flight took a second from the reserve")
	}
	if q.total > workers {
		t.Fatalf("%d calls in flight, more than the %d workers", q.total, workers)
	}
}
