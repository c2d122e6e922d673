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

package statustest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// CheckSummary fails t unless got has the progress and Ready reason, Ready
// is True exactly when got is current, and the message contains msg.
func CheckSummary(t *testing.T, got status.Summary, wantProgress agentsv1alpha1.Progress, wantReason, msg string) {
	t.Helper()
	wantStatus := metav1.ConditionFalse
	if wantProgress == agentsv1alpha1.ProgressCurrent {
		wantStatus = metav1.ConditionTrue
	}
	if got.Progress != wantProgress {
		t.Errorf("progress %s, want %s (Ready %s reason %s: %q)", progressName(got.Progress), progressName(wantProgress),
			got.Ready.Status, got.Ready.Reason, got.Ready.Message)
	}
	CheckCondition(t, got.Ready, agentsv1alpha1.ConditionReady, wantStatus, wantReason, msg)
}

func progressName(p agentsv1alpha1.Progress) string {
	return [...]string{"current", "reconciling", "stalled"}[p]
}

// CheckSetSummary fails t unless conds hold s as status.SetSummary writes it at
// generation gen, with Reconciling and Stalled present as wanted.
func CheckSetSummary(t *testing.T, conds []metav1.Condition, s status.Summary, gen int64, wantReconciling, wantStalled bool) {
	t.Helper()
	ready := meta.FindStatusCondition(conds, agentsv1alpha1.ConditionReady)
	if ready == nil || ready.Status != s.Ready.Status || ready.Reason != s.Ready.Reason || ready.ObservedGeneration != gen {
		t.Fatalf("Ready = %+v, want %s %s at generation %d", ready, s.Ready.Status, s.Ready.Reason, gen)
	}
	for ct, want := range map[string]bool{agentsv1alpha1.ConditionReconciling: wantReconciling, agentsv1alpha1.ConditionStalled: wantStalled} {
		c := meta.FindStatusCondition(conds, ct)
		switch {
		case !want && c != nil:
			t.Errorf("%s = %+v, want it absent", ct, c)
		case want && (c == nil || c.Status != metav1.ConditionTrue || c.Reason != s.Ready.Reason ||
			!strings.Contains(c.Message, s.Ready.Message) || c.ObservedGeneration != gen):
			t.Errorf("%s = %+v, want True with Ready's reason %s and message at generation %d", ct, c, s.Ready.Reason, gen)
		}
	}
}
func CheckCondition(t *testing.T, got metav1.Condition, wantType string, wantStatus metav1.ConditionStatus, wantReason, wantMsg string) {
	t.Helper()
	if got.Type != wantType || got.Status != wantStatus || got.Reason != wantReason || !strings.Contains(got.Message, wantMsg) {
		t.Errorf("got %s=%s reason %s message %q; want %s=%s reason %s message containing %q",
			got.Type, got.Status, got.Reason, got.Message, wantType, wantStatus, wantReason, wantMsg)
	}
}
