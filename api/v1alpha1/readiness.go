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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every kind states its health the way kstatus (sigs.k8s.io/cli-utils
// pkg/kstatus/status), and with it Flux, kubectl wait and Argo CD, reads it:
// Ready, plus Reconciling and Stalled, which are abnormal-true (present only
// while True). Whoever decides an object's Ready condition writes the three
// with SetReadiness.

// Progress is how kstatus is to read an object's Ready condition.
type Progress int

const (
	// ProgressCurrent: reconciled as the spec asks; Ready is True.
	ProgressCurrent Progress = iota
	// ProgressReconciling: the operator is still working on it (Reconciling).
	ProgressReconciling
	// ProgressStalled: it cannot get further without a change from outside
	// (Stalled); for a run, it ended without success.
	ProgressStalled
)

// SetReadiness sets ready (a Ready condition) and Reconciling and Stalled as
// kstatus reads them for p: the one p calls for True, with Ready's reason
// and message, the other removed. Every condition set carries generation.
func SetReadiness(conds *[]metav1.Condition, ready metav1.Condition, p Progress, generation int64) {
	set := func(c metav1.Condition) {
		c.ObservedGeneration = generation
		meta.SetStatusCondition(conds, c)
	}
	set(ready)
	for _, a := range abnormalTrue {
		if p != a.progress {
			meta.RemoveStatusCondition(conds, a.condition)
			continue
		}
		c := ready
		c.Type, c.Status = a.condition, metav1.ConditionTrue
		set(c)
	}
}

// abnormalTrue are the conditions kstatus reads only when True, with the
// progress each stands for.
var abnormalTrue = []struct {
	condition string
	progress  Progress
}{
	{ConditionReconciling, ProgressReconciling},
	{ConditionStalled, ProgressStalled},
}
