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
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// How a run ends: pure functions the execution reconciler calls, with table
// tests in outcome_test.go.

// MaxOutputBytes bounds status.output; longer output is cut and the cut noted.
const MaxOutputBytes = 16 << 10

const outputCutNote = "\n[output cut at 16 KiB; the full answer is in the run's thread]"

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

// Finish records a final state on run's status: how every path that
// ends a run ends it.
func Finish(st *agentsv1alpha1.AgentRunStatus, state agentsv1alpha1.RunState, message, output string, now time.Time) {
	st.State = state
	st.Retry = nil // a finished run waits for nothing
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

// runEnded reports a run that has just reached its final state: metrics, and
// a Warning event when it ended in error.
func runEnded(recorder events.EventRecorder, run *agentsv1alpha1.AgentRun) {
	observeRunEnded(run)
	if run.Status.State == agentsv1alpha1.RunError && recorder != nil {
		recorder.Eventf(run, nil, corev1.EventTypeWarning, agentsv1alpha1.EventRunFailed, "Run", "%s", run.Status.Message)
	}
}
