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
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// Table tests of how a run ends.

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
