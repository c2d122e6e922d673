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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// TestSetWaitingForPayload: the mark moves Ready's lastTransitionTime to now
// (the second grace counts from it) and keeps the run Reconciling.
func TestSetWaitingForPayload(t *testing.T) {
	run := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	run.Spec.Payload = &agentsv1alpha1.PayloadReference{SecretName: "p"}
	agentsv1alpha1.SetRunConditions(run)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	setWaitingForPayload(run, "no payload", now)
	ready := meta.FindStatusCondition(run.Status.Conditions, agentsv1alpha1.ConditionReady)
	if ready == nil || ready.Reason != agentsv1alpha1.ReasonWaitingForPayload || !ready.LastTransitionTime.Time.Equal(now) {
		t.Fatalf("Ready = %+v, want WaitingForPayload since %s", ready, now)
	}
	checkSetSummary(t, run.Status.Conditions, reconciling(agentsv1alpha1.ReasonWaitingForPayload, "no payload"), 3, true, false)
	if !waitedForPayload(run) || !payloadDeadline(run).Equal(now.Add(payloadGrace)) {
		t.Errorf("waitedForPayload %v, deadline %s; want true, %s", waitedForPayload(run), payloadDeadline(run), now.Add(payloadGrace))
	}
}
