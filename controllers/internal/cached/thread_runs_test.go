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

package cached

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// opsRun is a run appended to thread ops, received at second.
func opsRun(name string, state agentsv1alpha1.RunState, second int) agentsv1alpha1.AgentRun {
	return agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec: agentsv1alpha1.AgentRunSpec{
			ThreadStrategy:  agentsv1alpha1.ContinueExisting,
			TargetThreadRef: &agentsv1alpha1.LocalObjectReference{Name: "ops"},
			ReceivedAt:      metav1.NewTime(time.Unix(int64(second), 0)),
		},
		Status: agentsv1alpha1.AgentRunStatus{State: state},
	}
}

func TestAppendedTo(t *testing.T) {
	created := time.Date(2026, 11, 23, 6, 0, 10, 0, time.UTC)
	th := &agentsv1alpha1.AgentThread{ObjectMeta: metav1.ObjectMeta{Name: "ops", UID: "uid-now", CreationTimestamp: metav1.NewTime(created)}}
	run := func(started *time.Time, uid string) *agentsv1alpha1.AgentRun {
		r := opsRun("r", agentsv1alpha1.RunSuccess, 1)
		if started != nil {
			r.Status.StartedAt = &metav1.Time{Time: *started}
			r.Status.Thread = &agentsv1alpha1.RunThread{Name: "ops", UID: uid}
		}
		return &r
	}
	at := func(d time.Duration) *time.Time { t := created.Add(d); return &t }
	for _, tc := range []struct {
		name    string
		started *time.Time
		uid     string
		want    bool
	}{
		{"never started", nil, "", false},
		{"this thread's, by UID, though the operator's clock is behind the API server's", at(-time.Minute), "uid-now", true},
		{"an earlier thread's of the same name, by UID, though started after", at(3 * time.Second), "uid-before", false},
		{"without a UID: started before the thread was created, an earlier thread's", at(-2 * time.Second), "", false},
		{"without a UID: started after (queued before or after, alike)", at(3 * time.Second), "", true},
		{"without a UID: started in the second the thread was created", at(400 * time.Millisecond), "", true},
	} {
		if got := appendedTo(run(tc.started, tc.uid), th); got != tc.want {
			t.Errorf("%s: appendedTo = %v, want %v", tc.name, got, tc.want)
		}
	}
}
