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
	"container/heap"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The admission plan: which of an Agent's queued runs start, and which wait
// for their payload. Pure functions, with table tests in
// admission_plan_test.go; the admission reconciler (admission.go) calls them.
// What a thread's runs say of it is api/v1alpha1's (agentrun_facts.go), shared with
// the thread controller.

// payloadGrace is how long a queued run may wait for its payload Secret
// (the receiver writes it right after the run) before it fails.
const payloadGrace = agentsv1alpha1.PayloadGrace

// queueOrder sorts runs oldest first (see queuedBefore).
func queueOrder(runs []*agentsv1alpha1.AgentRun) {
	sort.SliceStable(runs, func(i, j int) bool { return agentsv1alpha1.QueuedBefore(runs[i], runs[j]) })
}

// activeRuns counts an Agent's running runs and their threads, and returns
// its queued runs (in no particular order).
func activeRuns(agentRuns []agentsv1alpha1.AgentRun) (running int, busyThreads map[string]bool, queued []*agentsv1alpha1.AgentRun) {
	busyThreads = map[string]bool{}
	queued = make([]*agentsv1alpha1.AgentRun, 0, len(agentRuns))
	for i := range agentRuns {
		r := &agentRuns[i]
		if !r.DeletionTimestamp.IsZero() && r.EffectiveState() == agentsv1alpha1.RunQueued {
			continue // going away: never started
		}
		switch r.EffectiveState() {
		case agentsv1alpha1.RunRunning:
			running++
			if k := agentsv1alpha1.ThreadKey(r); k != "" {
				busyThreads[k] = true
			}
		case agentsv1alpha1.RunQueued:
			queued = append(queued, r)
		}
	}
	return running, busyThreads, queued
}

// admission is what one look at an Agent's runs decides.
type admission struct {
	// start are the queued runs whose turn has come, oldest first.
	start []*agentsv1alpha1.AgentRun
	// fail are queued runs that can never start, each with why.
	fail []refusal
	// overdue are queued runs whose payload the cache does not show past
	// their deadline (payloadDeadline): the reconciler asks the API server.
	overdue []*agentsv1alpha1.AgentRun
	// wake is how soon to look again without an event (a payload's grace
	// ends); zero when only events matter.
	wake time.Duration
}

// refusal is a queued run that ends in error before it starts.
type refusal struct {
	run     *agentsv1alpha1.AgentRun
	message string
}

// planAdmission decides, for the runs of one Agent (agent nil when it does
// not exist; agentName names it then), which queued runs start now: at most
// maxConcurrentRuns running, one running run per thread, oldest first within
// the Agent and within each thread. A run starts only once its payload
// Secret exists (hasPayload); without one it holds its thread but no slot,
// and is overdue once its payloadDeadline has passed.
func planAdmission(agent *agentsv1alpha1.Agent, agentName string, runs []agentsv1alpha1.AgentRun,
	hasPayload func(*agentsv1alpha1.AgentRun) bool, now time.Time) admission {
	running, busyThreads, queued := activeRuns(runs)
	var plan admission
	if why := agentRefusal(agent, agentName); why != "" {
		for _, q := range queued {
			plan.fail = append(plan.fail, refusal{q, why})
		}
		return plan
	}
	ready := make([]*agentsv1alpha1.AgentRun, 0, len(queued))
	oldestOfThread := map[string]*agentsv1alpha1.AgentRun{}
	for _, q := range queued {
		if t := agentsv1alpha1.ThreadKey(q); t != "" && (oldestOfThread[t] == nil || agentsv1alpha1.QueuedBefore(q, oldestOfThread[t])) {
			oldestOfThread[t] = q
		}
		switch {
		case q.Spec.Payload == nil: // a status written by hand: never sendable
			plan.fail = append(plan.fail, refusal{q, "The run has no payload to send"})
		case hasPayload(q):
			ready = append(ready, q)
		case payloadDeadline(q).After(now):
			plan.wake = minPositive(plan.wake, payloadDeadline(q).Sub(now))
		default:
			plan.overdue = append(plan.overdue, q)
		}
	}
	eligible := ready[:0] // filtered in place
	for _, q := range ready {
		if t := agentsv1alpha1.ThreadKey(q); t == "" || (!busyThreads[t] && oldestOfThread[t] == q) {
			eligible = append(eligible, q)
		}
	}
	plan.start = oldestN(eligible, int(agent.Spec.MaxConcurrentRuns)-running)
	return plan
}

// agentRefusal says why no queued run of the Agent can start, or "".
func agentRefusal(agent *agentsv1alpha1.Agent, name string) string {
	switch {
	case agent == nil:
		return fmt.Sprintf("Agent %s was deleted before the run started", name)
	case agent.Spec.Archived:
		return fmt.Sprintf("Agent %s was archived before the run started", name)
	}
	return ""
}

// payloadDeadline is when a queued run without its payload is overdue: a
// grace after the call's receipt (spec.receivedAt, by the receiver's clock)
// and, once admission has found the run overdue and the payload missing,
// status.payloadDeadline (waitForPayload, by the operator's own clock).
// Both are stored, so a restart resets neither, and a clock that runs ahead
// of the receiver's cannot fail a run in the moment between the receiver
// writing it and writing its payload.
func payloadDeadline(run *agentsv1alpha1.AgentRun) time.Time {
	if d := run.Status.PayloadDeadline; d != nil {
		return d.Time
	}
	return run.Spec.ReceivedAt.Add(payloadGrace)
}

// waitedForPayload tells whether admission has already found the run
// overdue with its payload missing once.
func waitedForPayload(run *agentsv1alpha1.AgentRun) bool {
	return run.Status.PayloadDeadline != nil
}

// waitForPayload gives a queued run found overdue with its payload missing
// a second grace, from now, and its conditions (Ready WaitingForPayload).
func waitForPayload(run *agentsv1alpha1.AgentRun, now time.Time) {
	deadline := metav1.NewTime(now.Add(payloadGrace))
	run.Status.PayloadDeadline = &deadline
	agentsv1alpha1.SetRunConditions(run)
}

// missingPayload is the message of a run whose payload never came.
func missingPayload(run *agentsv1alpha1.AgentRun) string {
	return fmt.Sprintf("The payload Secret %s does not exist", run.Spec.Payload.SecretName)
}

// minPositive is the sooner of two waits, where zero means none.
func minPositive(a, b time.Duration) time.Duration {
	switch {
	case b <= 0:
		return a
	case a <= 0 || b < a:
		return b
	}
	return a
}

// oldestN returns the n oldest of runs (queue order), oldest first, in
// O(len(runs) log n): usually one slot is free and the queue is long
// (BenchmarkAdmission).
func oldestN(runs []*agentsv1alpha1.AgentRun, n int) []*agentsv1alpha1.AgentRun {
	if n <= 0 {
		return nil
	}
	h := &newestOnTop{}
	for _, q := range runs {
		if h.Len() < n {
			heap.Push(h, q)
		} else if agentsv1alpha1.QueuedBefore(q, (*h)[0]) {
			(*h)[0] = q
			heap.Fix(h, 0)
		}
	}
	out := []*agentsv1alpha1.AgentRun(*h)
	queueOrder(out)
	return out
}

// newestOnTop is a heap of runs with the one queued last on top.
type newestOnTop []*agentsv1alpha1.AgentRun

func (h newestOnTop) Len() int           { return len(h) }
func (h newestOnTop) Less(i, j int) bool { return agentsv1alpha1.QueuedBefore(h[j], h[i]) }
func (h newestOnTop) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *newestOnTop) Push(x any)        { *h = append(*h, x.(*agentsv1alpha1.AgentRun)) } //nolint:errcheck,forcetypeassert // only runs are pushed
func (h *newestOnTop) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
