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
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// Table tests of the dispatcher's pure decisions.

// qrun is a run for mayStart: name (also its UID), state, thread ("" for a
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

func TestMayStart(t *testing.T) {
	const (
		queued  = agentsv1alpha1.RunQueued
		running = agentsv1alpha1.RunRunning
		done    = agentsv1alpha1.RunSuccess
	)
	cases := []struct {
		name   string
		runs   []agentsv1alpha1.AgentRun
		max    int
		ask    string
		want   startVerdict
		reason string
	}{
		{"the only queued run starts", []agentsv1alpha1.AgentRun{qrun("a", queued, "", 1)}, 1, "a", startNow, ""},
		{"finished runs take no slot", []agentsv1alpha1.AgentRun{qrun("old", done, "", 0), qrun("a", queued, "", 1)}, 1, "a", startNow, ""},
		{"all slots running", []agentsv1alpha1.AgentRun{qrun("r", running, "", 0), qrun("a", queued, "", 1)}, 1, "a", startWait, "1 of 1 runs"},
		{"an older run goes first", []agentsv1alpha1.AgentRun{qrun("b", queued, "", 2), qrun("a", queued, "", 1)}, 1, "b", startWait, "older runs"},
		{"the oldest takes the slot", []agentsv1alpha1.AgentRun{qrun("b", queued, "", 2), qrun("a", queued, "", 1)}, 1, "a", startNow, ""},
		{"two slots: the second oldest starts too", []agentsv1alpha1.AgentRun{qrun("c", queued, "", 3), qrun("b", queued, "", 2), qrun("a", queued, "", 1)}, 2, "b", startNow, ""},
		{"two slots: the third waits", []agentsv1alpha1.AgentRun{qrun("c", queued, "", 3), qrun("b", queued, "", 2), qrun("a", queued, "", 1)}, 2, "c", startWait, "older runs"},
		{"same receipt time: by name", []agentsv1alpha1.AgentRun{qrun("b", queued, "", 1), qrun("a", queued, "", 1)}, 1, "b", startWait, "older runs"},
		{"busy thread", []agentsv1alpha1.AgentRun{qrun("r", running, "ops", 0), qrun("a", queued, "ops", 1)}, 4, "a", startWait, "another run is running in thread ops"},
		{"an older run of the thread goes first", []agentsv1alpha1.AgentRun{qrun("a", queued, "ops", 1), qrun("b", queued, "ops", 2)}, 4, "b", startWait, "older run of thread ops"},
		{"a run waiting for its thread takes no slot", []agentsv1alpha1.AgentRun{
			qrun("r", running, "ops", 0), qrun("a", queued, "ops", 1), qrun("b", queued, "", 2),
		}, 2, "b", startNow, ""},
		{"another thread is not held up", []agentsv1alpha1.AgentRun{qrun("r", running, "ops", 0), qrun("a", queued, "dev", 1)}, 2, "a", startNow, ""},
		{"not listed yet", []agentsv1alpha1.AgentRun{qrun("b", queued, "", 2)}, 4, "a", startNotListed, "not among"},
		{"same second, other endpoints: by ULID, not by endpoint name", []agentsv1alpha1.AgentRun{
			qrun("alpha-01m8114gv2mdj5yknfcdv1tk6y", queued, "", 1), qrun("zeta-01m8114gv2mdj5yknfcdv1tk6x", queued, "", 1),
		}, 1, "alpha-01m8114gv2mdj5yknfcdv1tk6y", startWait, "older runs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ask := qrun(tc.ask, queued, "", 0)
			for _, r := range tc.runs {
				if r.Name == tc.ask {
					ask = r
				}
			}
			got, why := mayStart(&ask, tc.runs, tc.max)
			if got != tc.want || !strings.Contains(why, tc.reason) {
				t.Errorf("mayStart(%s) = %d %q, want %d with %q", tc.ask, got, why, tc.want, tc.reason)
			}
		})
	}
}

func TestAppendedAfter(t *testing.T) {
	// started makes a run of thread ops received at second 1 (by name
	// within it) and started at the given time, or not at all.
	started := func(name string, at *time.Time) *agentsv1alpha1.AgentRun {
		r := qrun(name, agentsv1alpha1.RunSuccess, "ops", 1)
		if at != nil {
			r.Status.StartedAt = &metav1.Time{Time: *at}
		}
		return &r
	}
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := t0.Add(d); return &t }
	cases := []struct {
		name string
		a, b *agentsv1alpha1.AgentRun
		want bool
	}{
		{"started a second later", started("a", at(time.Second)), started("b", at(0)), true},
		{"started a second earlier", started("b", at(0)), started("a", at(time.Second)), false},
		// In memory a start has nanoseconds; read back it has whole seconds.
		{"same second, later in the queue, unstored start", started("b", at(200*time.Millisecond)), started("a", at(0)), true},
		{"same second, earlier in the queue, unstored start", started("a", at(900*time.Millisecond)), started("b", at(0)), false},
		{"the other never started", started("a", at(0)), started("b", nil), true},
		{"this one never started", started("b", nil), started("a", at(0)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := appendedAfter(tc.a, tc.b); got != tc.want {
				t.Errorf("appendedAfter(%s, %s) = %v, want %v", tc.a.Name, tc.b.Name, got, tc.want)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	cases := []struct {
		task  a2a.Task
		state agentsv1alpha1.RunState
		msg   string
	}{
		{a2a.Task{State: a2a.StateCompleted}, agentsv1alpha1.RunSuccess, ""},
		{a2a.Task{State: a2a.StateFailed, StatusText: "boom"}, agentsv1alpha1.RunError, "The agent failed the task: boom"},
		{a2a.Task{State: a2a.StateFailed}, agentsv1alpha1.RunError, "The agent failed the task"},
		{a2a.Task{State: a2a.StateRejected}, agentsv1alpha1.RunError, "The agent rejected the task"},
		{a2a.Task{State: a2a.StateCanceled}, agentsv1alpha1.RunError, "The agent canceled the task"},
		{a2a.Task{State: a2a.StateInputRequired, StatusText: "which repo?"}, agentsv1alpha1.RunError, "The agent asked for input on the task: which repo? (webhook runs cannot answer)"},
		{a2a.Task{State: a2a.StateAuthRequired}, agentsv1alpha1.RunError, "The agent asked for authentication on the task (webhook runs cannot answer)"},
		{a2a.Task{State: "mystery"}, agentsv1alpha1.RunError, `The agent left the task in state "mystery"`},
		// The agent's text is one short line, whatever it sent.
		{a2a.Task{State: a2a.StateFailed, StatusText: "line one\n\x1b[2Jline two\r\n"}, agentsv1alpha1.RunError, "The agent failed the task: line one [2Jline two"},
		{a2a.Task{State: a2a.StateRejected, StatusText: " \n\t"}, agentsv1alpha1.RunError, "The agent rejected the task"},
		{a2a.Task{State: a2a.StateFailed, StatusText: strings.Repeat("x", 100<<10)}, agentsv1alpha1.RunError,
			"The agent failed the task: " + strings.Repeat("x", a2a.MaxTextBytes-len(a2a.TruncatedMark)) + a2a.TruncatedMark},
	}
	for _, tc := range cases {
		t.Run(string(tc.task.State), func(t *testing.T) {
			state, msg := outcome(&tc.task)
			if state != tc.state || msg != tc.msg {
				t.Errorf("outcome(%s) = %s %q, want %s %q", tc.task.State, state, msg, tc.state, tc.msg)
			}
		})
	}
}

func TestCutOutputAndMessage(t *testing.T) {
	euro := "€" // three bytes
	cases := []struct {
		name  string
		cut   func(string) string
		in    string
		limit int    // bytes kept at most before the note
		note  string // "" when the text fits and must come back unchanged
	}{
		{"short output", cutOutput, "fine", MaxOutputBytes, ""},
		{"output at the limit", cutOutput, strings.Repeat("a", MaxOutputBytes), MaxOutputBytes, ""},
		{"ascii output over", cutOutput, strings.Repeat("a", MaxOutputBytes+1), MaxOutputBytes - len(outputCutNote), outputCutNote},
		{"multibyte output over", cutOutput, strings.Repeat(euro, MaxOutputBytes), MaxOutputBytes - len(outputCutNote), outputCutNote},
		{"short message", cutMessage, "fine", maxMessageBytes, ""},
		{"multibyte message over", cutMessage, "xx" + strings.Repeat(euro, maxMessageBytes), maxMessageBytes, "…"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.cut(tc.in)
			if tc.note == "" {
				if got != tc.in {
					t.Error("a text within the limit changed")
				}
				return
			}
			kept, noted := strings.CutSuffix(got, tc.note)
			switch {
			case !noted:
				t.Errorf("the cut is not noted: ...%q", got[len(got)-40:])
			case !strings.HasPrefix(tc.in, kept):
				t.Error("the kept text is not the start of the input")
			case len(kept) > tc.limit || len(kept) < tc.limit-utf8.UTFMax+1:
				t.Errorf("kept %d bytes, want the most up to %d that end on a rune", len(kept), tc.limit)
			case !utf8.ValidString(got):
				t.Error("a UTF-8 sequence was split")
			}
		})
	}
}

func TestPollInterval(t *testing.T) {
	for _, tc := range []struct{ elapsed, want time.Duration }{
		{0, 200 * time.Millisecond},
		{time.Second, 200 * time.Millisecond},
		{3 * time.Second, 300 * time.Millisecond},
		{20 * time.Second, 2 * time.Second},
		{time.Minute, 5 * time.Second},
		{time.Hour, 5 * time.Second},
	} {
		if got := pollInterval(tc.elapsed); got != tc.want {
			t.Errorf("pollInterval(%s) = %s, want %s", tc.elapsed, got, tc.want)
		}
	}
}

// A run decided to start counts as running until the cache shows it so,
// even when the cache does not list it yet; the cache catching up clears it.
func TestWithStarted(t *testing.T) {
	const ns = "team"
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	withNS := func(r agentsv1alpha1.AgentRun) agentsv1alpha1.AgentRun {
		r.Namespace = ns
		r.Spec.AgentRef.Name = "triage"
		return r
	}
	started := map[types.NamespacedName]startedRun{
		key("d"):        {agent: "triage"},                // started; the cache still shows it queued
		key("e"):        {agent: "triage", thread: "ops"}, // started; the cache has it finished (no longer active)
		key("other"):    {agent: "someone-else"},
		key("caughtup"): {agent: "triage"},
	}
	cached := []agentsv1alpha1.AgentRun{
		withNS(qrun("c", agentsv1alpha1.RunQueued, "", 1)),
		withNS(qrun("d", agentsv1alpha1.RunQueued, "", 2)),
		withNS(qrun("caughtup", agentsv1alpha1.RunRunning, "", 0)),
	}
	runs := withStarted(cached, ns, "triage", started)
	if _, ok := started[key("caughtup")]; ok {
		t.Error("a run the cache shows running is still remembered")
	}
	if _, ok := started[key("e")]; ok {
		t.Error("a started run the cache no longer lists as active is still remembered")
	}
	if _, ok := started[key("other")]; !ok {
		t.Error("another Agent's started run was dropped")
	}
	c := cached[0]
	if got, _ := mayStart(&c, runs, 2); got != startWait {
		t.Errorf("with d and caughtup running, c got %d; want to wait for a slot", got)
	}
	if got, _ := mayStart(&c, runs, 3); got != startNow {
		t.Errorf("with a third slot c got %d; want to start", got)
	}
	inOps := withNS(qrun("f", agentsv1alpha1.RunQueued, "ops", 3))
	if got, why := mayStart(&inOps, append(runs, inOps), 10); got != startNow {
		t.Errorf("a run of thread ops after e finished: %d %q; want to start", got, why)
	}
	d := withNS(qrun("d", agentsv1alpha1.RunQueued, "ops", 2))
	started[key("d")] = startedRun{agent: "triage", thread: "ops"}
	runs = withStarted([]agentsv1alpha1.AgentRun{d, inOps}, ns, "triage", started)
	if got, why := mayStart(&inOps, runs, 10); got != startWait || !strings.Contains(why, "thread ops") {
		t.Errorf("a run of thread ops while d (started, cached as queued) holds it: %d %q", got, why)
	}
}

// BenchmarkStartDecision is one queued run's start decision among an Agent's
// 4,000 queued runs (a backlog), as the dispatcher makes it: the cached runs
// with the ones it started counted as running, then mayStart; and, as the
// baseline in the same run, the same decision by sorting the queue.
func BenchmarkStartDecision(b *testing.B) {
	const ns, queued = "team", 4000
	cached := make([]agentsv1alpha1.AgentRun, 0, queued+4)
	for i := range queued {
		thread := ""
		if i%10 == 0 {
			thread = fmt.Sprintf("t%d", i%7)
		}
		r := qrun(fmt.Sprintf("run-%05d", i), agentsv1alpha1.RunQueued, thread, queued-i)
		r.Namespace, r.Spec.AgentRef.Name = ns, "triage"
		cached = append(cached, r)
	}
	started := map[types.NamespacedName]startedRun{}
	for i := range 3 {
		started[types.NamespacedName{Namespace: ns, Name: cached[i].Name}] = startedRun{agent: "triage"}
	}
	ask := cached[queued/2]
	list := make([]agentsv1alpha1.AgentRun, len(cached))
	for _, bc := range []struct {
		name   string
		decide func(*agentsv1alpha1.AgentRun, []agentsv1alpha1.AgentRun, int) startVerdict
	}{
		{"sorting the queue", mayStartBySorting},
		{"mayStart", func(r *agentsv1alpha1.AgentRun, runs []agentsv1alpha1.AgentRun, max int) startVerdict {
			v, _ := mayStart(r, runs, max)
			return v
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				copy(list, cached) // the list the cache hands out
				if got := bc.decide(&ask, withStarted(list, ns, "triage", started), 4); got != startWait {
					b.Fatalf("a run in the middle of the queue got %d", got)
				}
			}
		})
	}
}

// mayStartBySorting is the plain statement of mayStart's rule: sort the
// queue, walk it, hand out the free slots.
func mayStartBySorting(run *agentsv1alpha1.AgentRun, agentRuns []agentsv1alpha1.AgentRun, maxConcurrent int) startVerdict {
	running, busyThreads, queued := activeRuns(agentRuns)
	if running >= maxConcurrent || (threadKey(run) != "" && busyThreads[threadKey(run)]) {
		return startWait
	}
	queueOrder(queued)
	listed := false
	for _, q := range queued {
		listed = listed || q.UID == run.UID
	}
	if !listed {
		return startNotListed
	}
	for _, q := range slotTakers(queued, busyThreads, maxConcurrent-running) {
		if q.UID == run.UID {
			return startNow
		}
	}
	return startWait
}

func TestMayStartAgreesWithSortingTheQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	states := []agentsv1alpha1.RunState{agentsv1alpha1.RunQueued, agentsv1alpha1.RunQueued, agentsv1alpha1.RunRunning, ""}
	threads := []string{"", "", "ops", "alerts"}
	for c := range 500 {
		var runs []agentsv1alpha1.AgentRun
		for i := range 1 + rng.IntN(12) {
			runs = append(runs, qrun(fmt.Sprintf("r%02d", i), states[rng.IntN(len(states))], threads[rng.IntN(len(threads))], rng.IntN(4)))
		}
		maxConcurrent := 1 + rng.IntN(4)
		for i := range runs {
			ask := runs[i]
			if ask.EffectiveState() != agentsv1alpha1.RunQueued {
				continue
			}
			got, why := mayStart(&ask, runs, maxConcurrent)
			if want := mayStartBySorting(&ask, runs, maxConcurrent); got != want {
				t.Fatalf("case %d: mayStart(%s) = %d (%s), sorting the queue says %d; max %d, runs %+v", c, ask.Name, got, why, want, maxConcurrent, runs)
			}
		}
	}
}
