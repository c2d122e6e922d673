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

package v1alpha1

import (
	"strings"
	"time"
)

// What every reader of AgentRuns tells the same way off them, as pure
// functions of the API types: the thread a run holds, the order runs queue
// and are appended to their thread in, its A2A context, and what a thread's
// status says of its runs. The operator's admission, execution and thread
// controllers build on these.

// ThreadKey names the thread a run must hold alone, or "" for a new thread each run.
func ThreadKey(run *AgentRun) string {
	if run.Spec.ThreadStrategy == ContinueExisting && run.Spec.TargetThreadRef != nil {
		return run.Spec.TargetThreadRef.Name
	}
	return ""
}

// QueuedBefore orders queued runs oldest first: by receipt (stored to the
// second), then by the ULID the receiver ends run names with (to the
// millisecond), then by name.
func QueuedBefore(a, b *AgentRun) bool {
	ta, tb := a.Spec.ReceivedAt.Time, b.Spec.ReceivedAt.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if ka, kb := receiptKey(a.Name), receiptKey(b.Name); ka != kb {
		return ka < kb
	}
	return a.Name < b.Name
}

// AppendedAfter reports whether run a was appended to its thread after run
// b. A thread's runs start one at a time, oldest first, so the later start
// is the later append; startedAt is stored to the second, and within one
// second the queue order tells. A run with no start recorded counts as
// earlier.
func AppendedAfter(a, b *AgentRun) bool {
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
	return QueuedBefore(b, a)
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

// ContextOf is the A2A context a run's status names, or "".
func ContextOf(st *AgentRunStatus) string {
	if st.Thread == nil {
		return ""
	}
	return st.Thread.ContextID
}

// ThreadFromRuns derives what a thread's status says of its runs: the A2A
// context of the run appended last that has one (running or finished: a
// thread's runs start one at a time, each in the context of the one
// before), and the name of the run appended last among the finished.
func ThreadFromRuns(runs []AgentRun) (contextID, lastRunName string) {
	var withContext, lastFinished *AgentRun
	for i := range runs {
		r := &runs[i]
		if r.Status.StartedAt == nil || r.Status.Thread == nil {
			continue // never appended
		}
		if r.Status.Thread.ContextID != "" && (withContext == nil || AppendedAfter(r, withContext)) {
			withContext = r
		}
		if r.Status.State.IsFinished() && (lastFinished == nil || AppendedAfter(r, lastFinished)) {
			lastFinished = r
		}
	}
	if withContext != nil {
		contextID = withContext.Status.Thread.ContextID
	}
	if lastFinished != nil {
		lastRunName = lastFinished.Name
	}
	return contextID, lastRunName
}
