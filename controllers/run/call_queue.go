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
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The shares of the dispatch workers one namespace's and one Agent's calls
// may hold, and the deadline of each call. Every tenant's runs are executed
// by the same --dispatch-workers; an agent that holds each request open (a
// tarpit) would otherwise hold all of them, and every other Agent's runs
// would wait. An Agent's share alone is not enough: four tarpit Agents of
// one namespace would hold every worker, so a namespace has a share too.

// AgentShare is how many A2A calls of one Agent are in flight at most with
// workers dispatch workers: a quarter, at least one.
func AgentShare(workers int) int { return max(workers/4, 1) }

// NamespaceShare is how many A2A calls of all the Agents of one namespace
// are in flight at most with workers dispatch workers: a half, at least
// one.
func NamespaceShare(workers int) int { return max(workers/2, 1) }

// Reserve is how many dispatch workers a namespace that already has a call
// in flight leaves free: a quarter, at least one. A namespace's share is a
// cap, not a reserve: two namespaces (one team's dev and prod tarpits)
// would hold every worker at their shares. The reserve goes only to
// namespaces with nothing in flight, one call each, so a third namespace
// is still served.
func Reserve(workers int) int { return max(workers/4, 1) }

// callQueue lets each Agent's runs make at most share A2A calls at once,
// and all the Agents of one namespace at most namespaceShare. A run whose
// Agent or namespace is at its share does not wait in its worker: its
// reconcile returns, and the run queues behind the Agent's other waiting
// runs, first come first served; when a call of the namespace ends, the runs
// whose turn has come are woken (an event on wake). controller-runtime
// never reconciles one run twice at once, which the bookkeeping relies on.
type callQueue struct {
	share, namespaceShare int
	// workers and reserve: a namespace with a call in flight takes another
	// only while more than reserve of the workers stay free.
	workers, reserve int
	wake             chan event.TypedGenericEvent[reconcile.Request]

	mu sync.Mutex
	// total is the calls in flight of every namespace.
	total      int
	namespaces map[string]*namespaceCalls
	// waiting maps each run in a queue to its Agent.
	waiting map[types.NamespacedName]types.NamespacedName
}

// namespaceCalls is the calls in flight of all the Agents of one namespace,
// and those Agents' calls and queues by Agent name.
type namespaceCalls struct {
	inFlight int
	agents   map[string]*agentCalls
}

// agentCalls is one Agent's calls in flight and the runs waiting for one.
type agentCalls struct {
	inFlight int
	queue    []*waiter
}

// waiter is a run waiting for its Agent's share.
type waiter struct {
	run types.NamespacedName
	// asked is set while the run's current reconcile waits; a reconcile
	// of the run that ends without asking leaves the queue (settle).
	asked bool
	// woken is set once its turn came and it was woken.
	woken bool
}

func newCallQueue(workers int) *callQueue {
	return &callQueue{
		share:          AgentShare(workers),
		namespaceShare: NamespaceShare(workers),
		workers:        max(workers, 1),
		reserve:        Reserve(workers),
		wake:           make(chan event.TypedGenericEvent[reconcile.Request], 1024),
		namespaces:     map[string]*namespaceCalls{},
		waiting:        map[types.NamespacedName]types.NamespacedName{},
	}
}

// agentOf is the Agent a run's calls count against.
func agentOf(run *agentsv1alpha1.AgentRun) types.NamespacedName {
	return types.NamespacedName{Namespace: run.Namespace, Name: run.Spec.AgentRef.Name}
}

// agentLocked is the bookkeeping of agent, made when missing.
func (q *callQueue) agentLocked(agent types.NamespacedName) (*namespaceCalls, *agentCalls) {
	n := q.namespaces[agent.Namespace]
	if n == nil {
		n = &namespaceCalls{agents: map[string]*agentCalls{}}
		q.namespaces[agent.Namespace] = n
	}
	a := n.agents[agent.Name]
	if a == nil {
		a = &agentCalls{}
		n.agents[agent.Name] = a
	}
	return n, a
}

// take gives the run one of its Agent's calls, or, when the Agent or its
// namespace is at its share, the namespace has a call in flight and only
// the reserve of the workers is free, or runs of the Agent that asked
// earlier are still waiting, queues the run and returns false (a run held
// back by the reserve is woken when a call of its namespace ends). A call taken is given
// back with release.
func (q *callQueue) take(run *agentsv1alpha1.AgentRun) bool {
	key, agent := types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, agentOf(run)
	q.mu.Lock()
	defer q.mu.Unlock()
	n, a := q.agentLocked(agent)
	at := slices.IndexFunc(a.queue, func(w *waiter) bool { return w.run == key })
	if at < 0 {
		at = len(a.queue)
	}
	if a.inFlight+at < q.share && n.inFlight < q.namespaceShare && (n.inFlight == 0 || q.total < q.workers-q.reserve) {
		if at < len(a.queue) {
			a.queue = slices.Delete(a.queue, at, at+1)
			delete(q.waiting, key)
		}
		a.inFlight++
		n.inFlight++
		q.total++
		return true
	}
	if at == len(a.queue) {
		a.queue = append(a.queue, &waiter{run: key})
		q.waiting[key] = agent
	}
	a.queue[at].asked, a.queue[at].woken = true, false
	return false
}

// release gives back a call of the run's Agent and wakes the runs of its
// namespace whose turn has come.
func (q *callQueue) release(ctx context.Context, run *agentsv1alpha1.AgentRun) {
	agent := agentOf(run)
	q.mu.Lock()
	n := q.namespaces[agent.Namespace]
	n.agents[agent.Name].inFlight--
	n.inFlight--
	q.total--
	woken := q.turnsLocked(agent.Namespace, n)
	q.mu.Unlock()
	q.send(ctx, woken)
}

// settle ends a reconcile of run: a run in a queue that did not ask for a
// call in this reconcile no longer waits (it ended, went away, or took
// another path), and leaves the queue, so it never holds up the runs
// behind it. It is called at the end of every reconcile.
func (q *callQueue) settle(ctx context.Context, run types.NamespacedName) {
	q.mu.Lock()
	agent, ok := q.waiting[run]
	if !ok {
		q.mu.Unlock()
		return
	}
	n := q.namespaces[agent.Namespace]
	a := n.agents[agent.Name]
	at := slices.IndexFunc(a.queue, func(w *waiter) bool { return w.run == run })
	if a.queue[at].asked {
		a.queue[at].asked = false
		q.mu.Unlock()
		return
	}
	a.queue = slices.Delete(a.queue, at, at+1)
	delete(q.waiting, run)
	woken := q.turnsLocked(agent.Namespace, n)
	q.mu.Unlock()
	q.send(ctx, woken)
}

// turnsLocked marks woken the waiting runs of the namespace whose turn has
// come and returns them: the first runs of each Agent's queue, as many as
// the Agent's share leaves, while the runs already woken and not yet
// started fit in what the namespace's share leaves. Which Agent of the
// namespace gets a call first is not fixed (the namespace's own runs
// compete; the other namespaces never wait for them). Agents, and a
// namespace, with nothing in flight or waiting are forgotten.
func (q *callQueue) turnsLocked(namespace string, n *namespaceCalls) []types.NamespacedName {
	var woken []types.NamespacedName
	room := q.namespaceShare - n.inFlight
	for name, a := range n.agents {
		for _, w := range a.queue[:min(len(a.queue), max(q.share-a.inFlight, 0))] {
			if room <= 0 {
				break
			}
			room--
			if !w.woken {
				w.woken = true
				woken = append(woken, w.run)
			}
		}
		if a.inFlight == 0 && len(a.queue) == 0 {
			delete(n.agents, name)
		}
	}
	if n.inFlight == 0 && len(n.agents) == 0 {
		delete(q.namespaces, namespace)
	}
	return woken
}

// send wakes runs; it gives up only when ctx ends (the manager stops, and
// the next one starts with every running run).
func (q *callQueue) send(ctx context.Context, runs []types.NamespacedName) {
	for _, run := range runs {
		select {
		case q.wake <- event.TypedGenericEvent[reconcile.Request]{Object: reconcile.Request{NamespacedName: run}}:
		case <-ctx.Done():
			return
		}
	}
}

// source is what execution watches to be woken.
func (q *callQueue) source() source.TypedSource[reconcile.Request] {
	return source.TypedChannel(q.wake, handler.TypedEnqueueRequestsFromMapFunc(
		func(_ context.Context, r reconcile.Request) []reconcile.Request { return []reconcile.Request{r} }))
}
