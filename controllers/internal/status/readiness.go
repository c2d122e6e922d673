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

package status

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Every kind states its health the way kstatus reads it
// (agentsv1alpha1.SetReadiness). Each kind's pure function decides a
// summary; SetSummary writes Ready, Reconciling and Stalled from it.

// Summary is an object's Ready condition and how kstatus is to read it.
type Summary struct {
	Ready    metav1.Condition
	Progress agentsv1alpha1.Progress
}

// Current is the summary of an object reconciled as asked: usable, or
// paused or archived on purpose (reason says which).
func Current(reason, msg string) Summary {
	return Summary{Ready: agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, true, reason, msg), Progress: agentsv1alpha1.ProgressCurrent}
}

// Reconciling is the summary of an object the operator is still working on.
func Reconciling(reason, msg string) Summary {
	return Summary{Ready: agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, false, reason, msg), Progress: agentsv1alpha1.ProgressReconciling}
}

// Stalled is the summary of an object that needs a change from outside.
func Stalled(reason, msg string) Summary {
	return Summary{Ready: agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, false, reason, msg), Progress: agentsv1alpha1.ProgressStalled}
}

// ReconcileFailed is the summary of a reconcile that failed with a transient
// error: the operator retries.
func ReconcileFailed(err error) Summary {
	return Reconciling(agentsv1alpha1.ReasonReconcileFailed, fmt.Sprintf("Reconciling failed and will be retried: %v", err))
}

// SetSummary sets Ready from s and Reconciling and Stalled as kstatus reads
// them, every condition at generation.
func SetSummary(conds *[]metav1.Condition, s Summary, generation int64) {
	agentsv1alpha1.SetReadiness(conds, s.Ready, s.Progress, generation)
}
