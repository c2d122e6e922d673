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
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/status"
	"github.com/hookrun/hookrun/controllers/internal/status/statustest"
)

// Table tests of the queue's pure decisions: admission and what a thread's
// runs say.

// qrun is a run for planAdmission: name (also its UID), state, thread ("" for a
// new thread each run) and receipt second.
func qrun(name string, state agentsv1alpha1.RunState, thread string, second int) agentsv1alpha1.AgentRun {
	r := agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec: agentsv1alpha1.AgentRunSpec{
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Payload:        &agentsv1alpha1.PayloadReference{SecretName: name},
			ReceivedAt:     metav1.NewTime(time.Unix(int64(second), 0)),
		},
		Status: agentsv1alpha1.AgentRunStatus{State: state},
	}
	if thread != "" {
		r.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
		r.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: thread}
	}
	return r
}

// noPayload marks runs whose payload Secret does not exist (yet).
type noPayload map[string]bool

func (n noPayload) has(run *agentsv1alpha1.AgentRun) bool { return !n[run.Name] }

func names(runs []*agentsv1alpha1.AgentRun) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}

func TestPlanAdmission(t *testing.T) {
	const (
		queued  = agentsv1alpha1.RunQueued
		running = agentsv1alpha1.RunRunning
		done    = agentsv1alpha1.RunSuccess
	)
	agent := func(max int32) *agentsv1alpha1.Agent {
		return &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "triage"}, Spec: agentsv1alpha1.AgentSpec{MaxConcurrentRuns: max}}
	}
	archived := agent(4)
	archived.Spec.Archived = true
	// waiting is a run received at second 1 that admission found without its
	// payload at second at.
	waiting := func(name string, at int64) agentsv1alpha1.AgentRun {
		r := qrun(name, queued, "", 1)
		waitForPayload(&r, time.Unix(at, 0))
		return r
	}
	noRef := qrun("noref", queued, "", 1)
	noRef.Spec.Payload = nil
	noRef.Status.State = queued
	deleting := qrun("a", queued, "", 1)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(5, 0)}
	now := time.Unix(10, 0) // runs received at seconds 0-7 are within the payload grace
	cases := []struct {
		name    string
		agent   *agentsv1alpha1.Agent
		runs    []agentsv1alpha1.AgentRun
		missing noPayload
		now     time.Time
		start   []string
		fail    []string
		reason  string // of the first failure
		overdue []string
		wake    time.Duration
	}{
		{name: "the only queued run starts", agent: agent(1), runs: []agentsv1alpha1.AgentRun{qrun("a", queued, "", 1)}, start: []string{"a"}},
		{name: "finished runs take no slot", agent: agent(1), runs: []agentsv1alpha1.AgentRun{qrun("old", done, "", 0), qrun("a", queued, "", 1)}, start: []string{"a"}},
		{name: "all slots running", agent: agent(1), runs: []agentsv1alpha1.AgentRun{qrun("r", running, "", 0), qrun("a", queued, "", 1)}},
		{name: "the oldest takes the slot", agent: agent(1), runs: []agentsv1alpha1.AgentRun{qrun("b", queued, "", 2), qrun("a", queued, "", 1)}, start: []string{"a"}},
		{name: "two slots, three queued", agent: agent(2), runs: []agentsv1alpha1.AgentRun{qrun("c", queued, "", 3), qrun("b", queued, "", 2), qrun("a", queued, "", 1)}, start: []string{"a", "b"}},
		{name: "same receipt time: by name", agent: agent(1), runs: []agentsv1alpha1.AgentRun{qrun("b", queued, "", 1), qrun("a", queued, "", 1)}, start: []string{"a"}},
		{name: "busy thread", agent: agent(4), runs: []agentsv1alpha1.AgentRun{qrun("r", running, "ops", 0), qrun("a", queued, "ops", 1)}},
		{name: "one run per thread, the oldest", agent: agent(4), runs: []agentsv1alpha1.AgentRun{qrun("b", queued, "ops", 2), qrun("a", queued, "ops", 1)}, start: []string{"a"}},
		{name: "a run waiting for its thread takes no slot", agent: agent(2), runs: []agentsv1alpha1.AgentRun{
			qrun("r", running, "ops", 0), qrun("a", queued, "ops", 1), qrun("b", queued, "", 2),
		}, start: []string{"b"}},
		{name: "another thread is not held up", agent: agent(2), runs: []agentsv1alpha1.AgentRun{qrun("r", running, "ops", 0), qrun("a", queued, "dev", 1)}, start: []string{"a"}},
		{name: "same second, other endpoints: by ULID, not by endpoint name", agent: agent(1), runs: []agentsv1alpha1.AgentRun{
			qrun("alpha-01m8114gv2mdj5yknfcdv1tk6y", queued, "", 1), qrun("zeta-01m8114gv2mdj5yknfcdv1tk6x", queued, "", 1),
		}, start: []string{"zeta-01m8114gv2mdj5yknfcdv1tk6x"}},
		{name: "a run waiting for its payload takes no slot and wakes the pass at its grace's end", agent: agent(1),
			runs: []agentsv1alpha1.AgentRun{qrun("a", queued, "", 1), qrun("b", queued, "", 2)}, missing: noPayload{"a": true},
			start: []string{"b"}, wake: 21 * time.Second},
		{name: "a run waiting for its payload holds its thread", agent: agent(4),
			runs: []agentsv1alpha1.AgentRun{qrun("a", queued, "ops", 1), qrun("b", queued, "ops", 2)}, missing: noPayload{"a": true},
			wake: 21 * time.Second},
		{name: "a payload not there past the grace is overdue", agent: agent(4), now: time.Unix(31, 0),
			runs: []agentsv1alpha1.AgentRun{qrun("a", queued, "", 1)}, missing: noPayload{"a": true}, overdue: []string{"a"}},
		{name: "a queued run without a payload reference (a status written by hand) fails", agent: agent(4),
			runs: []agentsv1alpha1.AgentRun{noRef, qrun("b", queued, "", 2)}, start: []string{"b"},
			fail: []string{"noref"}, reason: "The run has no payload to send"},
		{name: "a queued run being deleted is left alone", agent: agent(1),
			runs: []agentsv1alpha1.AgentRun{deleting, qrun("b", queued, "", 2)}, start: []string{"b"}},
		{name: "a run marked waiting for its payload gets the grace again from the mark", agent: agent(4), now: time.Unix(40, 0),
			runs: []agentsv1alpha1.AgentRun{waiting("a", 35)}, missing: noPayload{"a": true}, wake: 25 * time.Second},
		{name: "... and is overdue again when it has passed", agent: agent(4), now: time.Unix(66, 0),
			runs: []agentsv1alpha1.AgentRun{waiting("a", 35)}, missing: noPayload{"a": true}, overdue: []string{"a"}},
		{name: "a deleted Agent fails every queued run, not the running ones", agent: nil,
			runs: []agentsv1alpha1.AgentRun{qrun("r", running, "", 0), qrun("a", queued, "", 1), qrun("b", queued, "ops", 2)},
			fail: []string{"a", "b"}, reason: "Agent triage was deleted before the run started"},
		{name: "an archived Agent too", agent: archived,
			runs: []agentsv1alpha1.AgentRun{qrun("a", queued, "", 1)}, fail: []string{"a"}, reason: "Agent triage was archived before the run started"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			plan := planAdmission(tc.agent, "triage", tc.runs, tc.missing.has, at)
			var failed []string
			for _, f := range plan.fail {
				failed = append(failed, f.run.Name)
			}
			slices.Sort(failed)
			if got := names(plan.start); !slices.Equal(got, append([]string{}, tc.start...)) {
				t.Errorf("start %v, want %v", got, tc.start)
			}
			if !slices.Equal(failed, tc.fail) {
				t.Errorf("fail %v, want %v", failed, tc.fail)
			}
			if len(plan.fail) > 0 && plan.fail[0].message != tc.reason {
				t.Errorf("failure message %q, want %q", plan.fail[0].message, tc.reason)
			}
			if got := names(plan.overdue); !slices.Equal(got, append([]string{}, tc.overdue...)) {
				t.Errorf("overdue %v, want %v", got, tc.overdue)
			}
			if plan.wake != tc.wake {
				t.Errorf("wake %s, want %s", plan.wake, tc.wake)
			}
		})
	}
}

// admitBySorting is the plain statement of planAdmission's rule: sort the
// queue, walk it, hand out the free slots; a run of a thread that has a
// running or an older queued run takes none.
func admitBySorting(runs []agentsv1alpha1.AgentRun, maxConcurrent int, missing noPayload) []string {
	running, busyThreads, queued := activeRuns(runs)
	queueOrder(queued)
	claimed := map[string]bool{}
	started := []string{}
	for _, q := range queued {
		k := agentsv1alpha1.ThreadKey(q)
		blocked := k != "" && (busyThreads[k] || claimed[k])
		if k != "" {
			claimed[k] = true
		}
		if blocked || missing[q.Name] || len(started) >= maxConcurrent-running {
			continue
		}
		started = append(started, q.Name)
	}
	return started
}

func TestPlanAdmissionAgreesWithSortingTheQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	states := []agentsv1alpha1.RunState{agentsv1alpha1.RunQueued, agentsv1alpha1.RunQueued, agentsv1alpha1.RunRunning, ""}
	threads := []string{"", "", "ops", "alerts"}
	for c := range 2000 {
		var runs []agentsv1alpha1.AgentRun
		missing := noPayload{}
		for i := range 1 + rng.IntN(12) {
			name := fmt.Sprintf("r%02d", i)
			runs = append(runs, qrun(name, states[rng.IntN(len(states))], threads[rng.IntN(len(threads))], rng.IntN(4)))
			missing[name] = rng.IntN(5) == 0
		}
		maxConcurrent := 1 + rng.IntN(4)
		agent := &agentsv1alpha1.Agent{Spec: agentsv1alpha1.AgentSpec{MaxConcurrentRuns: int32(maxConcurrent)}}
		got := names(planAdmission(agent, "", runs, missing.has, time.Unix(5, 0)).start)
		if want := admitBySorting(runs, maxConcurrent, missing); !slices.Equal(got, want) {
			t.Fatalf("case %d: planAdmission starts %v, sorting the queue says %v; max %d, runs %+v", c, got, want, maxConcurrent, runs)
		}
	}
}

// BenchmarkAdmission is one admission pass over an Agent's 4,000 queued runs
// (a backlog) with one of four slots free, as the admission reconciler makes
// it; and, as the baseline in the same run, the same decision by sorting the
// queue. The pass replaces the old per-run decision (BenchmarkStartDecision
// before issue 15: about 0.65 ms for one run on this machine).
func BenchmarkAdmission(b *testing.B) {
	const queued = 4000
	runs := make([]agentsv1alpha1.AgentRun, 0, queued+3)
	for i := range queued {
		thread := ""
		if i%10 == 0 {
			thread = fmt.Sprintf("t%d", i%7)
		}
		runs = append(runs, qrun(fmt.Sprintf("run-%05d", i), agentsv1alpha1.RunQueued, thread, queued-i))
	}
	for i := range 3 {
		runs = append(runs, qrun(fmt.Sprintf("running-%d", i), agentsv1alpha1.RunRunning, "", 0))
	}
	agent := &agentsv1alpha1.Agent{Spec: agentsv1alpha1.AgentSpec{MaxConcurrentRuns: 4}}
	want := []string{"run-03999"}
	b.Run("sorting the queue", func(b *testing.B) {
		for b.Loop() {
			if got := admitBySorting(runs, 4, nil); !slices.Equal(got, want) {
				b.Fatalf("started %v", got)
			}
		}
	})
	b.Run("planAdmission", func(b *testing.B) {
		has := func(*agentsv1alpha1.AgentRun) bool { return true }
		for b.Loop() {
			if got := names(planAdmission(agent, "triage", runs, has, time.Unix(0, 0)).start); !slices.Equal(got, want) {
				b.Fatalf("started %v", got)
			}
		}
	})
}

// TestWaitForPayload: the mark is an explicit deadline a grace from now,
// which payloadDeadline reads in place of the one from receipt, and Ready
// says WaitingForPayload (the run stays Reconciling).
func TestWaitForPayload(t *testing.T) {
	run := qrun("a", "", "", 1)
	run.Generation = 3
	if waitedForPayload(&run) || !payloadDeadline(&run).Equal(time.Unix(1, 0).Add(payloadGrace)) {
		t.Fatalf("before the mark: waitedForPayload %v, deadline %s; want false, a grace after receipt", waitedForPayload(&run), payloadDeadline(&run))
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	waitForPayload(&run, now)
	if !waitedForPayload(&run) || !payloadDeadline(&run).Equal(now.Add(payloadGrace)) {
		t.Errorf("waitedForPayload %v, deadline %s; want true, %s", waitedForPayload(&run), payloadDeadline(&run), now.Add(payloadGrace))
	}
	statustest.CheckSetSummary(t, run.Status.Conditions, status.Reconciling(agentsv1alpha1.ReasonWaitingForPayload,
		"The payload Secret a does not exist; the run fails if it does not appear within 30s"), 3, true, false)
}

func TestMinPositive(t *testing.T) {
	for _, tc := range []struct{ a, b, want time.Duration }{
		{0, 0, 0}, {0, 2, 2}, {2, 0, 2}, {2, 3, 2}, {3, 2, 2},
	} {
		if got := minPositive(tc.a, tc.b); got != tc.want {
			t.Errorf("minPositive(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
