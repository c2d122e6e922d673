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
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// A run that frees a slot wakes only the queued runs that may take one, not
// the whole queue: with thousands queued, waking all on every finish made
// dispatch quadratic (make chaos at 20 calls/s fell behind for good).
func TestAFreedSlotWakesOnlyTheRunsThatMayStart(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := agentsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	agent := &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "triage"},
		Spec:       agentsv1alpha1.AgentSpec{MaxConcurrentRuns: 2},
	}
	objs := []client.Object{agent}
	for _, r := range []agentsv1alpha1.AgentRun{
		qrun("running-ops", agentsv1alpha1.RunRunning, "ops", 1),
		qrun("done", agentsv1alpha1.RunSuccess, "", 2),
		qrun("q3-ops", agentsv1alpha1.RunQueued, "ops", 3), // waits for its thread, takes no slot
		qrun("q4", agentsv1alpha1.RunQueued, "", 4),
		qrun("q5", agentsv1alpha1.RunQueued, "", 5),
		qrun("q6", agentsv1alpha1.RunQueued, "", 6),
		qrun("q7", agentsv1alpha1.RunQueued, "", 7),
	} {
		r.Namespace, r.Spec.AgentRef.Name = "team", "triage"
		objs = append(objs, &r)
	}
	i := slices.IndexFunc(indexes, func(s indexSpec) bool { return s.field == indexActiveRunAgent })
	if i < 0 {
		t.Fatal("no index of active runs")
	}
	spec := indexes[i]
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithIndex(spec.obj, spec.field, spec.extract).Build()
	r := &AgentRunReconciler{Client: c}
	wake := r.queuedRunsOfAgent(func(client.Object) (string, string) { return "triage", "" })
	names := func() []string {
		var out []string
		for _, req := range wake(t.Context(), agent) {
			out = append(out, req.Name)
		}
		slices.Sort(out)
		return out
	}

	if got, want := names(), []string{"q4", "q5"}; !slices.Equal(got, want) {
		t.Errorf("woken %v, want the two oldest runs free to take a slot %v", got, want)
	}

	agent.Spec.Archived = true
	if err := c.Update(t.Context(), agent); err != nil {
		t.Fatal(err)
	}
	if got, want := names(), []string{"q3-ops", "q4", "q5", "q6", "q7"}; !slices.Equal(got, want) {
		t.Errorf("archived Agent: woken %v, want every queued run %v (each ends in error)", got, want)
	}
}
