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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// checkSummary fails t unless got has the progress and Ready reason, Ready
// is True exactly when got is current, and the message contains msg.
func checkSummary(t *testing.T, got summary, wantProgress progress, wantReason, msg string) {
	t.Helper()
	wantStatus := metav1.ConditionFalse
	if wantProgress == progressCurrent {
		wantStatus = metav1.ConditionTrue
	}
	if got.progress != wantProgress {
		t.Errorf("progress %s, want %s (Ready %s reason %s: %q)", progressName(got.progress), progressName(wantProgress),
			got.ready.Status, got.ready.Reason, got.ready.Message)
	}
	checkCondition(t, got.ready, agentsv1alpha1.ConditionReady, wantStatus, wantReason, msg)
}

func progressName(p progress) string {
	return [...]string{"current", "reconciling", "stalled"}[p]
}

// checkSetSummary fails t unless conds hold s as setSummary writes it at
// generation gen, with Reconciling and Stalled present as wanted.
func checkSetSummary(t *testing.T, conds []metav1.Condition, s summary, gen int64, wantReconciling, wantStalled bool) {
	t.Helper()
	ready := meta.FindStatusCondition(conds, agentsv1alpha1.ConditionReady)
	if ready == nil || ready.Status != s.ready.Status || ready.Reason != s.ready.Reason || ready.ObservedGeneration != gen {
		t.Fatalf("Ready = %+v, want %s %s at generation %d", ready, s.ready.Status, s.ready.Reason, gen)
	}
	for ct, want := range map[string]bool{agentsv1alpha1.ConditionReconciling: wantReconciling, agentsv1alpha1.ConditionStalled: wantStalled} {
		c := meta.FindStatusCondition(conds, ct)
		switch {
		case !want && c != nil:
			t.Errorf("%s = %+v, want it absent", ct, c)
		case want && (c == nil || c.Status != metav1.ConditionTrue || c.Reason != s.ready.Reason ||
			!strings.Contains(c.Message, s.ready.Message) || c.ObservedGeneration != gen):
			t.Errorf("%s = %+v, want True with Ready's reason %s and message at generation %d", ct, c, s.ready.Reason, gen)
		}
	}
}
