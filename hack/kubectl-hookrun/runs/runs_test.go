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

package runs

import (
	"net/http"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
)

func TestCountRunsAndNewestFirst(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	run := func(ns, ep, name string, at time.Duration, state agentsv1alpha1.RunState, payload bool) agentsv1alpha1.AgentRun {
		r := agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: agentsv1alpha1.AgentRunSpec{
				EndpointRef: agentsv1alpha1.LocalObjectReference{Name: ep},
				ReceivedAt:  metav1.NewTime(t0.Add(at)),
			},
			Status: agentsv1alpha1.AgentRunStatus{State: state},
		}
		if payload {
			r.Spec.Payload = &agentsv1alpha1.PayloadReference{SecretName: name}
		}
		return r
	}
	runs := []agentsv1alpha1.AgentRun{
		run("a", "hook", "hook-1", 0, agentsv1alpha1.RunSuccess, true),
		run("a", "hook", "hook-3", 2*time.Minute, "", true), // queued: no state yet
		run("a", "hook", "hook-2", time.Minute, agentsv1alpha1.RunRunning, true),
		run("a", "hook", "hook-4", 2*time.Minute, "", false), // skipped: no payload
		run("b", "hook", "hook-9", time.Hour, agentsv1alpha1.RunError, true),
	}
	counts := Count(runs)
	got := counts[client.ObjectKey{Namespace: "a", Name: "hook"}]
	if got.Total != 4 || got.Running != 2 || got.Queued != 1 || !got.LastRunTime.Equal(&metav1.Time{Time: t0.Add(2 * time.Minute)}) {
		t.Errorf("counts of a/hook = %+v", got)
	}
	if b := counts[client.ObjectKey{Namespace: "b", Name: "hook"}]; b.Total != 1 || b.Running != 0 {
		t.Errorf("counts of b/hook = %+v", b)
	}

	e := &cli.Env{Now: func() time.Time { return t0.Add(90 * time.Minute) }}
	var names []string
	for _, r := range Select(e, runs, Filter{States: []string{"queued", "running", "skipped"}}) {
		names = append(names, r.Name)
	}
	if want := []string{"hook-4", "hook-3", "hook-2"}; !slices.Equal(names, want) {
		t.Errorf("selected %v, want %v (newest first; the same time: the later name first)", names, want)
	}
	names = nil
	for _, r := range Select(e, runs, Filter{Since: 89 * time.Minute, Limit: 2}) {
		names = append(names, r.Name)
	}
	if want := []string{"hook-9", "hook-4"}; !slices.Equal(names, want) {
		t.Errorf("--since 89m --limit 2 selected %v, want %v", names, want)
	}
}

func TestShowEventsResumesFromTheLastVersion(t *testing.T) {
	e := &cli.Env{Now: time.Now}
	runAt := func(name, rv string, state agentsv1alpha1.RunState) *agentsv1alpha1.AgentRun {
		return &agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv},
			Spec:       agentsv1alpha1.AgentRunSpec{ReceivedAt: metav1.Now()},
			Status:     agentsv1alpha1.AgentRunStatus{State: state},
		}
	}
	w := watch.NewFake()
	go func() {
		w.Add(runAt("a", "11", agentsv1alpha1.RunSuccess))
		w.Modify(runAt("b", "12", agentsv1alpha1.RunError))
		w.Delete(runAt("a", "13", agentsv1alpha1.RunSuccess))
		w.Stop() // the API server ends the watch
	}()
	var shown []string
	rv, err := showEvents(t.Context(), e, w, Filter{States: []string{"success"}}, "10", func(r *agentsv1alpha1.AgentRun) error {
		shown = append(shown, r.Name)
		return nil
	})
	if err != nil || rv != "13" || !slices.Equal(shown, []string{"a"}) {
		t.Errorf("showEvents = %q, %v, shown %v; want 13 (the next watch starts there), no error, only run a", rv, err, shown)
	}

	w = watch.NewFake()
	go w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	if _, err := showEvents(t.Context(), e, w, Filter{}, "10", func(*agentsv1alpha1.AgentRun) error { return nil }); !apierrors.IsResourceExpired(err) {
		t.Errorf("an expired version gave %v, want the 410 to reach the user", err)
	}
}
