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
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSetReadiness: the abnormal-true conditions follow Ready's reason and
// message, only the one that is True is present, and a change of progress
// removes the other.
func TestSetReadiness(t *testing.T) {
	cases := []struct {
		name                 string
		ready                metav1.Condition
		progress             Progress
		reconciling, stalled bool
	}{
		{"current", NewCondition(ConditionReady, true, "Available", "fine"), ProgressCurrent, false, false},
		{"reconciling", NewCondition(ConditionReady, false, ReasonReconcileFailed, "boom"), ProgressReconciling, true, false},
		{"stalled", NewCondition(ConditionReady, false, "AgentNotFound", "create it"), ProgressStalled, false, true},
	}
	for _, from := range cases {
		for _, to := range cases {
			t.Run(from.name+" then "+to.name, func(t *testing.T) {
				var conds []metav1.Condition
				other := metav1.Condition{Type: ConditionSecretReady, Status: metav1.ConditionTrue, Reason: "Kept"}
				meta.SetStatusCondition(&conds, other)
				SetReadiness(&conds, from.ready, from.progress, 1)
				SetReadiness(&conds, to.ready, to.progress, 2)
				checkReadiness(t, conds, to.ready, 2, to.reconciling, to.stalled)
				if meta.FindStatusCondition(conds, ConditionSecretReady) == nil {
					t.Error("SetReadiness removed another condition")
				}
			})
		}
	}
}

// checkReadiness fails t unless conds hold ready as SetReadiness writes it
// at generation gen, with Reconciling and Stalled present as wanted.
func checkReadiness(t *testing.T, conds []metav1.Condition, want metav1.Condition, gen int64, wantReconciling, wantStalled bool) {
	t.Helper()
	ready := meta.FindStatusCondition(conds, ConditionReady)
	if ready == nil || ready.Status != want.Status || ready.Reason != want.Reason || ready.ObservedGeneration != gen {
		t.Fatalf("Ready = %+v, want %s %s at generation %d", ready, want.Status, want.Reason, gen)
	}
	for ct, present := range map[string]bool{ConditionReconciling: wantReconciling, ConditionStalled: wantStalled} {
		c := meta.FindStatusCondition(conds, ct)
		switch {
		case !present && c != nil:
			t.Errorf("%s = %+v, want it absent", ct, c)
		case present && (c == nil || c.Status != metav1.ConditionTrue || c.Reason != want.Reason ||
			!strings.Contains(c.Message, want.Message) || c.ObservedGeneration != gen):
			t.Errorf("%s = %+v, want True with Ready's reason %s and message at generation %d", ct, c, want.Reason, gen)
		}
	}
}
