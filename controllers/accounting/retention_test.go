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

package accounting

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestPlanRetention(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	run := func(name string, state agentsv1alpha1.RunState, finishedAgo time.Duration, payload bool) agentsv1alpha1.AgentRun {
		r := agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Name: name}}
		r.Spec.AgentRef.Name = "triage"
		r.Spec.ReceivedAt = metav1.NewTime(now.Add(-finishedAgo - time.Second))
		r.Status.State = state
		if state == agentsv1alpha1.RunSuccess || state == agentsv1alpha1.RunError {
			r.Status.CompletedAt = &metav1.Time{Time: now.Add(-finishedAgo)}
		}
		if payload {
			r.Spec.Payload = &agentsv1alpha1.PayloadReference{SecretName: name}
		}
		return r
	}
	names := func(runs []*agentsv1alpha1.AgentRun) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.Name)
		}
		return out
	}
	policy := retentionPolicy{historyLimit: 2, runTTL: time.Hour, payloadTTL: 10 * time.Minute}
	cases := []struct {
		name        string
		runs        []agentsv1alpha1.AgentRun
		policy      retentionPolicy
		wantDelete  []string
		wantPayload []string
		wantTotal   int64
		wantRunning int64
		wantQueued  int64
		wantNext    time.Duration
	}{
		{
			name: "history limit keeps the newest finished runs",
			runs: []agentsv1alpha1.AgentRun{
				run("a", agentsv1alpha1.RunSuccess, 3*time.Minute, false), run("b", agentsv1alpha1.RunSuccess, 1*time.Minute, false),
				run("c", agentsv1alpha1.RunError, 2*time.Minute, false), run("q", agentsv1alpha1.RunQueued, 0, false),
			},
			policy: policy, wantDelete: []string{"a"}, wantTotal: 3, wantRunning: 1, wantQueued: 1, wantNext: 58 * time.Minute,
		},
		{
			name: "skipped runs finish at receipt and count towards the limit",
			runs: []agentsv1alpha1.AgentRun{
				run("s", agentsv1alpha1.RunSkipped, 90*time.Minute, false), run("r", agentsv1alpha1.RunRunning, 0, true),
			},
			policy: policy, wantDelete: []string{"s"}, wantTotal: 1, wantRunning: 1,
		},
		{
			name: "payloads expire before their runs",
			runs: []agentsv1alpha1.AgentRun{
				run("old", agentsv1alpha1.RunSuccess, 11*time.Minute, true), run("new", agentsv1alpha1.RunSuccess, 4*time.Minute, true),
			},
			policy: policy, wantPayload: []string{"old"}, wantTotal: 2, wantNext: 6 * time.Minute,
		},
		{
			name: "zero means no limit",
			runs: []agentsv1alpha1.AgentRun{
				run("a", agentsv1alpha1.RunSuccess, 1000*time.Hour, true), run("b", agentsv1alpha1.RunSuccess, 2000*time.Hour, true),
				run("c", agentsv1alpha1.RunSuccess, 3000*time.Hour, true),
			},
			policy: retentionPolicy{}, wantTotal: 3,
		},
		{
			name: "runs queued for the Agent the endpoint named before are not this Agent's backlog",
			runs: []agentsv1alpha1.AgentRun{run("q", agentsv1alpha1.RunQueued, 0, true), func() agentsv1alpha1.AgentRun {
				r := run("before", agentsv1alpha1.RunQueued, 0, true)
				r.Spec.AgentRef.Name = "old-agent"
				return r
			}()},
			policy: policy, wantTotal: 2, wantRunning: 2, wantQueued: 1,
		},
		{
			name:   "unfinished runs are never pruned however old",
			runs:   []agentsv1alpha1.AgentRun{run("q", agentsv1alpha1.RunQueued, 1000*time.Hour, true), run("r", agentsv1alpha1.RunRunning, 1000*time.Hour, true)},
			policy: retentionPolicy{historyLimit: 1, runTTL: time.Minute, payloadTTL: time.Minute}, wantTotal: 2, wantRunning: 2, wantQueued: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := planRetention(tc.runs, "triage", now, tc.policy)
			if got := names(plan.deleteRuns); strings.Join(got, ",") != strings.Join(tc.wantDelete, ",") {
				t.Errorf("delete runs %v, want %v", got, tc.wantDelete)
			}
			if got := names(plan.expirePayloads); strings.Join(got, ",") != strings.Join(tc.wantPayload, ",") {
				t.Errorf("expire payloads %v, want %v", got, tc.wantPayload)
			}
			if plan.counts.Queued != tc.wantQueued {
				t.Errorf("queued %d, want %d", plan.counts.Queued, tc.wantQueued)
			}
			if plan.counts.Total != tc.wantTotal || plan.counts.Running != tc.wantRunning {
				t.Errorf("counts %d/%d, want %d/%d", plan.counts.Total, plan.counts.Running, tc.wantTotal, tc.wantRunning)
			}
			if plan.nextExpiry != tc.wantNext {
				t.Errorf("next expiry %s, want %s", plan.nextExpiry, tc.wantNext)
			}
		})
	}
}
