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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Every kind states its health the way kstatus reads it
// (agentsv1alpha1.SetReadiness). Each kind's pure function decides a
// summary; setSummary writes Ready, Reconciling and Stalled from it.

// progress is how kstatus is to read an object's Ready condition.
type progress = agentsv1alpha1.Progress

const (
	progressCurrent     = agentsv1alpha1.ProgressCurrent
	progressReconciling = agentsv1alpha1.ProgressReconciling
	progressStalled     = agentsv1alpha1.ProgressStalled
)

// summary is an object's Ready condition and how kstatus is to read it.
type summary struct {
	ready    metav1.Condition
	progress progress
}

// current is the summary of an object reconciled as asked: usable, or
// paused or archived on purpose (reason says which).
func current(reason, msg string) summary {
	return summary{ready: agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, true, reason, msg), progress: progressCurrent}
}

// reconciling is the summary of an object the operator is still working on.
func reconciling(reason, msg string) summary {
	return summary{ready: agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, false, reason, msg), progress: progressReconciling}
}

// stalled is the summary of an object that needs a change from outside.
func stalled(reason, msg string) summary {
	return summary{ready: agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, false, reason, msg), progress: progressStalled}
}

// reconcileFailed is the summary of a reconcile that failed with a transient
// error: the operator retries.
func reconcileFailed(err error) summary {
	return reconciling(agentsv1alpha1.ReasonReconcileFailed, fmt.Sprintf("Reconciling failed and will be retried: %v", err))
}

// setSummary sets Ready from s and Reconciling and Stalled as kstatus reads
// them, every condition at generation.
func setSummary(conds *[]metav1.Condition, s summary, generation int64) {
	agentsv1alpha1.SetReadiness(conds, s.ready, s.progress, generation)
}
