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

package limits

import (
	"context"
	"runtime"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

const (
	// EndpointTurns is how many evaluations of one endpoint's CEL (its
	// spec.filter, spec.fields, spec.sender.oidc.claims) run at a time on a
	// replica: an evaluation may take up to filter.EvalTimeout of a core,
	// and one endpoint's calls must not take all of them.
	EndpointTurns = 2
	// filterWait is how long a call waits for an evaluation turn before
	// it is answered 503.
	filterWait = time.Second
)

// Turns hands out evaluation turns: at most its limit (GOMAXPROCS)
// evaluations run at a time on the replica, so each has a core and the
// evaluation's clock (filter.EvalTimeout) measures its own work, not
// another tenant's; at most filterSlots of one endpoint; and the calls of
// one namespace at most half of the limit while a call of another
// namespace waits. A turn that frees goes to the waiting call that fits
// whose namespace holds the fewest turns, the earliest first: with two
// namespaces holding half each, a third is served at the next turn that
// ends. Entries exist only while a call evaluates or waits: nothing is kept
// of an endpoint or a namespace between its calls. The zero value is ready,
// with GOMAXPROCS turns.
type Turns struct {
	mu sync.Mutex
	// limit is the replica's turns; 0 until first used.
	limit   int
	running int
	// byNamespace and byEndpoint are the turns held.
	byNamespace map[string]int
	byEndpoint  map[types.UID]int
	// waiting are the calls waiting for a turn, in arrival order, and
	// waitingIn counts them by namespace.
	waiting   []*turnWaiter
	waitingIn map[string]int
}

// turnWaiter is a call waiting for a turn; granted is closed when it gets
// one.
type turnWaiter struct {
	namespace string
	uid       types.UID
	granted   chan struct{}
	// got is set, under filterGate.mu, when the turn is granted.
	got bool
}

func (g *Turns) initLocked() {
	if g.limit == 0 {
		g.limit = max(runtime.GOMAXPROCS(0), 1)
	}
	if g.byNamespace == nil {
		g.byNamespace, g.byEndpoint, g.waitingIn = map[string]int{}, map[types.UID]int{}, map[string]int{}
	}
}

// Enter waits up to filterWait, or until ctx ends, for an evaluation turn
// of endpoint uid in namespace; false when none came. A call that entered
// must leave.
func (g *Turns) Enter(ctx context.Context, namespace string, uid types.UID) bool {
	g.mu.Lock()
	g.initLocked()
	if g.fitsLocked(namespace, uid) {
		g.takeLocked(namespace, uid)
		g.mu.Unlock()
		return true
	}
	w := &turnWaiter{namespace: namespace, uid: uid, granted: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	g.waitingIn[namespace]++
	g.mu.Unlock()

	wait := time.NewTimer(filterWait)
	defer wait.Stop()
	select {
	case <-w.granted:
		return true
	case <-wait.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.got {
		return true // granted as the wait ended
	}
	g.dropWaiterLocked(w)
	// Its namespace no longer waits: a namespace held to half may take more.
	g.grantLocked()
	return false
}

// Leave gives back the turn a call took with enter.
func (g *Turns) Leave(namespace string, uid types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	if g.byNamespace[namespace]--; g.byNamespace[namespace] <= 0 {
		delete(g.byNamespace, namespace)
	}
	if g.byEndpoint[uid]--; g.byEndpoint[uid] <= 0 {
		delete(g.byEndpoint, uid)
	}
	g.grantLocked()
}

// fitsLocked tells whether a call of uid in namespace may take a turn now.
func (g *Turns) fitsLocked(namespace string, uid types.UID) bool {
	if g.running >= g.limit || g.byEndpoint[uid] >= EndpointTurns {
		return false
	}
	if g.byNamespace[namespace] < max(g.limit/2, 1) {
		return true
	}
	// Over half: only while no call of another namespace waits.
	others := len(g.waitingIn)
	if g.waitingIn[namespace] > 0 {
		others--
	}
	return others == 0
}

func (g *Turns) takeLocked(namespace string, uid types.UID) {
	g.running++
	g.byNamespace[namespace]++
	g.byEndpoint[uid]++
}

// grantLocked gives free turns to the waiting calls that fit, the one
// whose namespace holds the fewest turns first, then the earliest.
func (g *Turns) grantLocked() {
	for g.running < g.limit {
		best := -1
		for i, w := range g.waiting {
			if g.fitsLocked(w.namespace, w.uid) && (best < 0 || g.byNamespace[w.namespace] < g.byNamespace[g.waiting[best].namespace]) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		w := g.waiting[best]
		g.dropWaiterLocked(w)
		g.takeLocked(w.namespace, w.uid)
		w.got = true
		close(w.granted)
	}
}

func (g *Turns) dropWaiterLocked(w *turnWaiter) {
	for i, x := range g.waiting {
		if x == w {
			g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
			break
		}
	}
	if g.waitingIn[w.namespace]--; g.waitingIn[w.namespace] <= 0 {
		delete(g.waitingIn, w.namespace)
	}
}

// InUse is the number of endpoints holding a turn and of calls waiting.
func (g *Turns) InUse() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.byEndpoint) + len(g.waiting)
}

// SetLimit sets the replica's turns (GOMAXPROCS until set) and returns
// what they were.
func (g *Turns) SetLimit(n int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.limit
	g.limit = n
	return old
}
