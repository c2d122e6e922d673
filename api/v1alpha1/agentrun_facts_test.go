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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// opsRun is a run appended to thread ops, received at second.
func opsRun(name string, state RunState, second int) AgentRun {
	return AgentRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec: AgentRunSpec{
			ThreadStrategy:  ContinueExisting,
			TargetThreadRef: &LocalObjectReference{Name: "ops"},
			ReceivedAt:      metav1.NewTime(time.Unix(int64(second), 0)),
		},
		Status: AgentRunStatus{State: state},
	}
}

func TestAppendedAfter(t *testing.T) {
	// started makes a run of thread ops received at second 1 (by name
	// within it) and started at the given time, or not at all.
	started := func(name string, at *time.Time) *AgentRun {
		r := opsRun(name, RunSuccess, 1)
		if at != nil {
			r.Status.StartedAt = &metav1.Time{Time: *at}
		}
		return &r
	}
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := t0.Add(d); return &t }
	cases := []struct {
		name string
		a, b *AgentRun
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
			if got := AppendedAfter(tc.a, tc.b); got != tc.want {
				t.Errorf("AppendedAfter(%s, %s) = %v, want %v", tc.a.Name, tc.b.Name, got, tc.want)
			}
		})
	}
}

func TestThreadFromRuns(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	appended := func(name string, state RunState, startedAt time.Duration, contextID string) AgentRun {
		r := opsRun(name, state, 1)
		s := metav1.NewTime(t0.Add(startedAt))
		r.Status.StartedAt = &s
		r.Status.Thread = &RunThread{Name: "ops", ContextID: contextID}
		return r
	}
	failedBeforeStart := opsRun("never", RunError, 9)
	cases := []struct {
		name            string
		runs            []AgentRun
		context, latest string
	}{
		{"no runs", nil, "", ""},
		{"one finished run", []AgentRun{appended("a", RunSuccess, 0, "c1")}, "c1", "a"},
		{"the later start wins, whatever the list order", []AgentRun{
			appended("b", RunSuccess, 2*time.Second, "c2"), appended("a", RunSuccess, 0, "c1"),
		}, "c2", "b"},
		{"a running run gives the context, not the latest finished run", []AgentRun{
			appended("a", RunSuccess, 0, "c1"), appended("b", RunRunning, time.Second, "c2"),
		}, "c2", "a"},
		{"a run never appended counts for nothing", []AgentRun{
			appended("a", RunError, 0, "c1"), failedBeforeStart,
		}, "c1", "a"},
		{"a run without a context keeps the one before", []AgentRun{
			appended("a", RunSuccess, 0, "c1"), appended("b", RunError, time.Second, ""),
		}, "c1", "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			contextID, latest := ThreadFromRuns(tc.runs)
			if contextID != tc.context || latest != tc.latest {
				t.Errorf("ThreadFromRuns = %q, %q; want %q, %q", contextID, latest, tc.context, tc.latest)
			}
		})
	}
}
