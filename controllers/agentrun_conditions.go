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
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// A run's conditions follow from its state (agentsv1alpha1.SetRunConditions,
// which the receiver calls too); the operator adds only the mark below.

// setWaitingForPayload marks a queued run whose payload is missing past its
// grace: Ready (and Reconciling) get reason WaitingForPayload and Ready's
// lastTransitionTime is now, from which the second grace counts.
func setWaitingForPayload(run *agentsv1alpha1.AgentRun, msg string, now time.Time) {
	meta.RemoveStatusCondition(&run.Status.Conditions, agentsv1alpha1.ConditionReady)
	s := reconciling(agentsv1alpha1.ReasonWaitingForPayload, msg)
	s.ready.LastTransitionTime = metav1.NewTime(now)
	setSummary(&run.Status.Conditions, s, run.Generation)
}
