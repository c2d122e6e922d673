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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// backlogEndpoint is an endpoint of Agent agent whose status counts queued
// runs received up to countsTo.
func backlogEndpoint(uid, agent string, queued int64, countsTo time.Time) *agentsv1alpha1.WebhookEndpoint {
	ep := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid)},
		Spec:       agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent}},
	}
	ep.Status.Runs.Queued = queued
	if !countsTo.IsZero() {
		ep.Status.Runs.LastRunTime = &metav1.Time{Time: countsTo}
	}
	return ep
}

func TestBacklogCapsEndpointAndAgent(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	b := NewBacklog(3, 5)
	b.Observe(backlogEndpoint("a", "agent", 1, now.Add(-time.Minute)))
	b.Observe(backlogEndpoint("b", "agent", 0, time.Time{}))

	// a: 1 counted + 2 stored here = 3, its cap.
	for i := range 2 {
		if v := b.Reserve("a", now.Add(time.Duration(i)*time.Millisecond)); !v.Allowed {
			t.Fatalf("call %d of a refused with %d queued, want admitted", i, i+1)
		}
	}
	v := b.Reserve("a", now)
	if v.Allowed || !v.First || v.Scope != BacklogScopeEndpoint {
		t.Fatalf("a at its cap: %+v, want the first refusal of the endpoint cap", v)
	}
	if v := b.Reserve("a", now); v.Allowed || v.First {
		t.Fatalf("a again: %+v, want a refusal that is not the first", v)
	}
	if !b.Full("a", now) {
		t.Error("full(a) = false at the cap")
	}

	// b: the Agent has 3 of 5, so b may add two.
	for range 2 {
		if v := b.Reserve("b", now); !v.Allowed {
			t.Fatal("b refused below the Agent's cap")
		}
	}
	if v := b.Reserve("b", now); v.Allowed || v.Scope != BacklogScopeAgent {
		t.Fatalf("b at the Agent's cap: %+v, want the Agent cap", v)
	}

	// A call that stored nothing gives its place back.
	held := b.Reserve("c-unknown", now)
	if !held.Allowed {
		t.Fatal("an endpoint not observed yet is refused")
	}
	b.Release("b", BacklogVerdict{Allowed: true, reservation: now})
	if v := b.Reserve("b", now); !v.Allowed {
		t.Fatal("b refused after a release")
	}

	// The operator counts a's runs: the ones received up to the counted
	// second are now in status (1 still queued, the others started).
	b.Observe(backlogEndpoint("a", "agent", 1, now.Add(-time.Second)))
	if got := b.endpoints["a"].queued(); got != 3 {
		t.Errorf("a queues %d after a count of older runs, want 1 + its 2 stored since", got)
	}
	b.Observe(backlogEndpoint("a", "agent", 0, now))
	if got := b.endpoints["a"].queued(); got != 0 {
		t.Errorf("a queues %d after status counted past its runs, want 0", got)
	}
	if got := b.agents[types.NamespacedName{Namespace: "ns", Name: "agent"}]; got != 2 {
		t.Errorf("Agent queues %d, want b's 2", got)
	}

	// A deleted endpoint takes its share with it.
	b.Forget("b")
	if len(b.agents) != 0 || len(b.endpoints) != 1 {
		t.Errorf("after forget: agents %v, %d endpoints; want none and 1", b.agents, len(b.endpoints))
	}
}

// An endpoint moved to another Agent moves its share.
func TestBacklogFollowsTheAgentRef(t *testing.T) {
	now := time.Now()
	b := NewBacklog(10, 2)
	b.Observe(backlogEndpoint("a", "first", 2, now))
	b.Observe(backlogEndpoint("a", "second", 2, now))
	if _, ok := b.agents[types.NamespacedName{Namespace: "ns", Name: "first"}]; ok {
		t.Errorf("the first Agent still counts a's runs: %v", b.agents)
	}
	b.Observe(backlogEndpoint("x", "second", 0, now))
	if v := b.Reserve("x", now); v.Allowed {
		t.Error("x admitted although its Agent has 2 of 2 queued")
	}
}

// Run with -race: many calls at once never get past the cap.
func TestBacklogConcurrent(t *testing.T) {
	b := NewBacklog(40, 1000)
	b.Observe(backlogEndpoint("a", "agent", 0, time.Time{}))
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				if b.Reserve("a", time.Now()).Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 40 {
		t.Errorf("%d admitted, want the cap of 40", admitted.Load())
	}
}

// A run this replica stored that the operator never counts (deleted at
// once, by retention or by hand) does not hold the cap for good: the
// replica counts its own runs for backlogSelfCount at most.
func TestBacklogForgetsItsOwnRunsAfterALag(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	b := NewBacklog(2, 1000)
	b.Observe(backlogEndpoint("a", "agent", 0, now.Add(-time.Hour)))
	for range 2 {
		b.Reserve("a", now)
	}
	if !b.Full("a", now.Add(backlogSelfCount)) {
		t.Fatal("the cap let go of runs stored a moment ago")
	}
	later := now.Add(backlogSelfCount + time.Second)
	if b.Full("a", later) {
		t.Fatal("the cap still full after the lag, with status counting nothing")
	}
	if v := b.Reserve("a", later); !v.Allowed {
		t.Fatal("a call refused after the lag")
	}
	if got := b.agents[types.NamespacedName{Namespace: "ns", Name: "agent"}]; got != 1 {
		t.Errorf("Agent queues %d, want the one run stored after the lag", got)
	}
}
