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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// entered runs enter in a goroutine and reports its result.
func entered(g *Turns, ctx context.Context, ns string, uid types.UID) <-chan bool {
	ch := make(chan bool, 1)
	go func() { ch <- g.Enter(ctx, ns, uid) }()
	return ch
}

// waitingCalls is how many calls wait for a turn.
func waitingCalls(g *Turns) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// untilWaiting waits until n calls wait.
func untilWaiting(t *testing.T, g *Turns, n int) {
	t.Helper()
	deadline := time.Now().Add(filterWait / 2)
	for waitingCalls(g) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls waiting, want %d", waitingCalls(g), n)
		}
		runtime.Gosched()
	}
}

// TestTurnsOfAReplica: at most the limit of evaluations run; one
// endpoint's at most filterSlots; a namespace takes more than half only
// while no other namespace waits; a freed turn goes to the namespace that
// holds the fewest, so a third namespace is served while two hold half
// each; a call that got no turn within filterWait gives up, and nothing is
// kept once every call left.
func TestTurnsOfAReplica(t *testing.T) {
	ctx := t.Context()
	g := &Turns{limit: 4}

	// One endpoint: two turns, then waits.
	for range EndpointTurns {
		if !g.Enter(ctx, "a", "a1") {
			t.Fatal("a1 got no turn with the replica free")
		}
	}
	third := entered(g, ctx, "a", "a1")
	untilWaiting(t, g, 1)

	// Its namespace takes the rest while nobody else waits: 4 of 4.
	for range 2 {
		if !g.Enter(ctx, "a", "a2") {
			t.Fatal("a2 got no turn with turns free and no other namespace waiting")
		}
	}
	// Namespaces b and c wait; a (holding all) does not get the next turn.
	b := entered(g, ctx, "b", "b1")
	untilWaiting(t, g, 2)
	c := entered(g, ctx, "c", "c1")
	untilWaiting(t, g, 3)
	a := entered(g, ctx, "a", "a3")
	untilWaiting(t, g, 4)

	g.Leave("a", "a2") // b and c wait: the turn goes to one of them, not to a
	g.Leave("a", "a2")
	if !<-b || !<-c {
		t.Fatal("b and c got no turn when a's turns ended")
	}
	select {
	case <-a:
		t.Fatal("a got a turn over its half while others waited")
	case <-third:
		t.Fatal("a1 got a third turn")
	default:
	}
	g.Leave("a", "a1") // a holds 1 of 4 now, b 1, c 1: under half, a's earliest call fits
	if !<-third {
		t.Fatal("a's earliest waiting call got no turn under half")
	}
	g.Leave("b", "b1")
	if !<-a {
		t.Fatal("a's waiting call got no free turn with nobody else waiting")
	}

	// Over half, a namespace leaves a free turn to the others while one
	// of theirs waits, even one that cannot take it yet (its endpoint's
	// turns are taken): a third namespace's call gets it.
	g3 := &Turns{limit: 6}
	for _, c := range []struct {
		ns  string
		uid types.UID
	}{{"a", "a1"}, {"a", "a1"}, {"a", "a2"}, {"b", "b1"}, {"b", "b1"}} {
		if !g3.Enter(ctx, c.ns, c.uid) {
			t.Fatalf("%s got no turn", c.uid)
		}
	}
	bWaits := entered(g3, ctx, "b", "b1")
	untilWaiting(t, g3, 1)
	aOver := entered(g3, ctx, "a", "a3")
	untilWaiting(t, g3, 2)
	if !g3.Enter(ctx, "c", "c1") {
		t.Fatal("c got no turn: a namespace over half took the free one")
	}
	g3.Leave("b", "b1")
	if !<-bWaits {
		t.Fatal("b's waiting call got no turn from its own endpoint's")
	}
	g3.Leave("c", "c1")
	if !<-aOver {
		t.Fatal("a got no free turn once nobody else waited")
	}

	// A call that waits longer than filterWait gives up and leaves no trace.
	g2 := &Turns{limit: 1}
	if !g2.Enter(ctx, "x", "x1") {
		t.Fatal("x1 got no turn")
	}
	start := time.Now()
	if g2.Enter(ctx, "y", "y1") {
		t.Fatal("y1 got a turn from a full replica")
	}
	if time.Since(start) < filterWait {
		t.Fatalf("gave up after %v, before filterWait", time.Since(start))
	}
	g2.Leave("x", "x1")
	if n := g2.InUse(); n != 0 {
		t.Fatalf("%d entries kept with no call", n)
	}
}

// TestTurnsEndWithTheCall: a waiting call whose caller hung up gives up at
// once, and a namespace it held back may then take more.
func TestTurnsEndWithTheCall(t *testing.T) {
	g := &Turns{limit: 2}
	for _, uid := range []types.UID{"a1", "a2"} {
		if !g.Enter(t.Context(), "a", uid) {
			t.Fatal("no turn")
		}
	}
	ctx, hangUp := context.WithCancel(t.Context())
	b := entered(g, ctx, "b", "b1")
	untilWaiting(t, g, 1)
	a := entered(g, t.Context(), "a", "a3")
	untilWaiting(t, g, 2)
	hangUp()
	if <-b {
		t.Fatal("a call whose caller hung up got a turn")
	}
	g.Leave("a", "a1")
	if !<-a {
		t.Fatal("a got no turn once b stopped waiting")
	}
	g.Leave("a", "a2")
	g.Leave("a", "a3")
	if n := g.InUse(); n != 0 {
		t.Fatalf("%d entries kept with no call", n)
	}
}
