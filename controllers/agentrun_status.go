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
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// Pure decisions of the run dispatcher, with table tests in
// agentrun_status_test.go and exercised end to end by the dispatcher's specs.

// MaxOutputBytes bounds status.output; longer output is cut and the cut noted.
const MaxOutputBytes = 16 << 10

const outputCutNote = "\n[output cut at 16 KiB; the full answer is in the run's thread]"

// threadKey names the thread a run must hold alone, or "" for a new thread each run.
func threadKey(run *agentsv1alpha1.AgentRun) string {
	if run.Spec.ThreadStrategy == agentsv1alpha1.ContinueExisting && run.Spec.TargetThreadRef != nil {
		return run.Spec.TargetThreadRef.Name
	}
	return ""
}

// queueOrder sorts runs oldest first (see queuedBefore).
func queueOrder(runs []*agentsv1alpha1.AgentRun) {
	sort.SliceStable(runs, func(i, j int) bool { return queuedBefore(runs[i], runs[j]) })
}

// queuedBefore orders queued runs oldest first: by receipt (stored to the
// second), then by the ULID the receiver ends run names with (to the
// millisecond), then by name.
func queuedBefore(a, b *agentsv1alpha1.AgentRun) bool {
	ta, tb := a.Spec.ReceivedAt.Time, b.Spec.ReceivedAt.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if ka, kb := receiptKey(a.Name), receiptKey(b.Name); ka != kb {
		return ka < kb
	}
	return a.Name < b.Name
}

// appendedAfter reports whether run a was appended to its thread after run
// b. A thread's runs start one at a time, oldest first, so the later start
// is the later append; startedAt is stored to the second, and within one
// second the queue order tells. A run with no start recorded counts as
// earlier.
func appendedAfter(a, b *agentsv1alpha1.AgentRun) bool {
	if b.Status.StartedAt == nil {
		return true
	}
	if a.Status.StartedAt == nil {
		return false
	}
	ta, tb := a.Status.StartedAt.Truncate(time.Second), b.Status.StartedAt.Truncate(time.Second)
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return queuedBefore(b, a)
}

// ulidLen is the length of a ULID in Crockford base32.
const ulidLen = 26

// receiptKey is the ULID ending a run name "<endpoint>-<ULID>", or the name.
func receiptKey(name string) string {
	if i := strings.LastIndexByte(name, '-'); i >= 0 && len(name)-i-1 == ulidLen {
		return name[i+1:]
	}
	return name
}

// startVerdict is mayStart's answer.
type startVerdict int

const (
	// startNow: the run's turn has come.
	startNow startVerdict = iota
	// startWait: the run waits for a slot or for older runs; a run of the
	// agent that finishes looks at it again.
	startWait
	// startNotListed: the runs given do not include this one (a cache that
	// lags); look again shortly.
	startNotListed
)

// mayStart decides whether run may be sent now among the runs of its Agent:
// at most maxConcurrent running, one running run per thread, oldest first
// (within the Agent, and within each thread). It says why when not.
//
// The queued runs that take a slot are those without a thread and the
// oldest queued run of each thread with none running; run starts when it
// is one of them and fewer than the free slots are older. That takes two
// passes over the queue, not a sort: with thousands queued, every decision
// counts (BenchmarkStartDecision).
func mayStart(run *agentsv1alpha1.AgentRun, agentRuns []agentsv1alpha1.AgentRun, maxConcurrent int) (startVerdict, string) {
	running, busyThreads, queued := activeRuns(agentRuns)
	if running >= maxConcurrent {
		return startWait, fmt.Sprintf("%d of %d runs of the agent are running", running, maxConcurrent)
	}
	k := threadKey(run)
	if k != "" && busyThreads[k] {
		return startWait, fmt.Sprintf("another run is running in thread %s", k)
	}
	listed := false
	oldestOfThread := map[string]*agentsv1alpha1.AgentRun{}
	for _, q := range queued {
		listed = listed || q.UID == run.UID
		if t := threadKey(q); t != "" && (oldestOfThread[t] == nil || queuedBefore(q, oldestOfThread[t])) {
			oldestOfThread[t] = q
		}
	}
	if !listed {
		return startNotListed, "the run is not among the agent's queued runs yet"
	}
	takesSlot := func(q *agentsv1alpha1.AgentRun) bool {
		t := threadKey(q)
		return t == "" || (!busyThreads[t] && oldestOfThread[t].UID == q.UID)
	}
	slots, older := maxConcurrent-running, 0
	for _, q := range queued {
		if q.UID != run.UID && takesSlot(q) && queuedBefore(q, run) {
			if older++; older >= slots {
				return startWait, "older runs of the agent go first"
			}
		}
	}
	if !takesSlot(run) {
		return startWait, fmt.Sprintf("an older run of thread %s goes first", k)
	}
	return startNow, ""
}

// activeRuns counts an Agent's running runs and their threads, and returns
// its queued runs (in no particular order).
func activeRuns(agentRuns []agentsv1alpha1.AgentRun) (running int, busyThreads map[string]bool, queued []*agentsv1alpha1.AgentRun) {
	busyThreads = map[string]bool{}
	for i := range agentRuns {
		r := &agentRuns[i]
		switch r.EffectiveState() {
		case agentsv1alpha1.RunRunning:
			running++
			if k := threadKey(r); k != "" {
				busyThreads[k] = true
			}
		case agentsv1alpha1.RunQueued:
			queued = append(queued, r)
		}
	}
	return running, busyThreads, queued
}

// slotTakers walks queued (sorted oldest first) and returns the first runs
// that take a free slot, at most slots: a run whose thread has a running
// or an older queued run takes none.
func slotTakers(queued []*agentsv1alpha1.AgentRun, busyThreads map[string]bool, slots int) []*agentsv1alpha1.AgentRun {
	var takers []*agentsv1alpha1.AgentRun
	claimed := map[string]bool{}
	for _, q := range queued {
		if len(takers) >= slots {
			break
		}
		k := threadKey(q)
		if k != "" && (busyThreads[k] || claimed[k]) {
			continue
		}
		if k != "" {
			claimed[k] = true
		}
		takers = append(takers, q)
	}
	return takers
}

// outcome maps a terminal task to the run's final state and message. The
// agent's status text goes into the message only as one short line.
func outcome(task *a2a.Task) (agentsv1alpha1.RunState, string) {
	why := func(what string) string {
		if text := a2a.Sanitize(task.StatusText); text != "" {
			return fmt.Sprintf("The agent %s the task: %s", what, text)
		}
		return fmt.Sprintf("The agent %s the task", what)
	}
	switch task.State {
	case a2a.StateCompleted:
		return agentsv1alpha1.RunSuccess, ""
	case a2a.StateFailed:
		return agentsv1alpha1.RunError, why("failed")
	case a2a.StateRejected:
		return agentsv1alpha1.RunError, why("rejected")
	case a2a.StateCanceled:
		return agentsv1alpha1.RunError, why("canceled")
	case a2a.StateInputRequired:
		return agentsv1alpha1.RunError, why("asked for input on") + " (webhook runs cannot answer)"
	case a2a.StateAuthRequired:
		return agentsv1alpha1.RunError, why("asked for authentication on") + " (webhook runs cannot answer)"
	default:
		return agentsv1alpha1.RunError, fmt.Sprintf("The agent left the task in state %q", task.State)
	}
}

// cutOutput bounds output to MaxOutputBytes, on a UTF-8 boundary, noting the cut.
func cutOutput(s string) string {
	if len(s) <= MaxOutputBytes {
		return s
	}
	return s[:utf8Boundary(s, MaxOutputBytes-len(outputCutNote))] + outputCutNote
}

// pollInterval is how long to wait before the next look at a task: short at
// first, growing with the run's age, never over a few seconds.
func pollInterval(elapsed time.Duration) time.Duration {
	d := elapsed / 10
	switch {
	case d < 200*time.Millisecond:
		return 200 * time.Millisecond
	case d > 5*time.Second:
		return 5 * time.Second
	}
	return d
}

// finish records a final state on run's status.
func finish(st *agentsv1alpha1.AgentRunStatus, state agentsv1alpha1.RunState, message, output string, now time.Time) {
	st.State = state
	st.Message = cutMessage(message)
	st.Output = cutOutput(output)
	t := metav1.NewTime(now)
	st.CompletedAt = &t
	if st.StartedAt != nil {
		st.Duration = now.Sub(st.StartedAt.Time).Round(time.Millisecond).String()
	}
}

// maxMessageBytes bounds status.message.
const maxMessageBytes = 4000

// cutMessage bounds a status message, on a UTF-8 boundary.
func cutMessage(s string) string {
	if len(s) <= maxMessageBytes {
		return s
	}
	return s[:utf8Boundary(s, maxMessageBytes)] + "…"
}

// utf8Boundary is the largest n <= at that does not split a UTF-8 sequence of s.
func utf8Boundary(s string, at int) int {
	for at > 0 && at < len(s) && !utf8.RuneStart(s[at]) {
		at--
	}
	return at
}
