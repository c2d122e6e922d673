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

func TestRunConditions(t *testing.T) {
	payload := &agentsv1alpha1.PayloadReference{SecretName: "p"}
	cases := []struct {
		name          string
		state         agentsv1alpha1.RunState
		payload       *agentsv1alpha1.PayloadReference
		ready         metav1.ConditionStatus
		reason        string
		progress      progress
		succeeded     metav1.ConditionStatus // "": no Succeeded condition
		succeededWhy  string
		message       string
		wantInMessage string
	}{
		{name: "queued (empty state)", payload: payload, ready: metav1.ConditionFalse, reason: agentsv1alpha1.ReasonQueued,
			progress: progressReconciling},
		{name: "running", state: agentsv1alpha1.RunRunning, payload: payload, ready: metav1.ConditionFalse, reason: agentsv1alpha1.ReasonRunning,
			progress: progressReconciling},
		{name: "success", state: agentsv1alpha1.RunSuccess, payload: payload, ready: metav1.ConditionTrue, reason: agentsv1alpha1.ReasonSucceeded,
			succeeded: metav1.ConditionTrue, succeededWhy: agentsv1alpha1.ReasonSucceeded, progress: progressCurrent},
		{name: "error", state: agentsv1alpha1.RunError, payload: payload, ready: metav1.ConditionFalse, reason: agentsv1alpha1.ReasonFailed,
			succeeded: metav1.ConditionFalse, succeededWhy: agentsv1alpha1.ReasonFailed, message: "boom", wantInMessage: "boom", progress: progressStalled},
		{name: "error without a message", state: agentsv1alpha1.RunError, payload: payload, ready: metav1.ConditionFalse, reason: agentsv1alpha1.ReasonFailed,
			succeeded: metav1.ConditionFalse, succeededWhy: agentsv1alpha1.ReasonFailed, wantInMessage: "The run failed", progress: progressStalled},
		{name: "skipped by a rate limit", state: agentsv1alpha1.RunSkipped, payload: payload, ready: metav1.ConditionFalse, reason: agentsv1alpha1.ReasonSkipped,
			succeeded: metav1.ConditionFalse, succeededWhy: agentsv1alpha1.ReasonSkipped, message: "rate limited", wantInMessage: "rate limited", progress: progressStalled},
		{name: "skipped as the receiver writes it (no payload, no state)", ready: metav1.ConditionFalse, reason: agentsv1alpha1.ReasonSkipped,
			succeeded: metav1.ConditionFalse, succeededWhy: agentsv1alpha1.ReasonSkipped, progress: progressStalled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			run.Spec.Payload = tc.payload
			run.Status.State, run.Status.Message = tc.state, tc.message
			// A run that was running has a stale Succeeded and Reconciling: they go.
			run.Status.Conditions = []metav1.Condition{{Type: agentsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Stale"},
				{Type: agentsv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: "Stale"}}
			checkSummary(t, runSummary(run), tc.progress, tc.reason, tc.wantInMessage)
			setRunConditions(run)
			checkSetSummary(t, run.Status.Conditions, runSummary(run), 3, tc.progress == progressReconciling, tc.progress == progressStalled)
			ready := meta.FindStatusCondition(run.Status.Conditions, agentsv1alpha1.ConditionReady)
			if ready == nil || ready.Status != tc.ready || ready.Reason != tc.reason || ready.ObservedGeneration != 3 {
				t.Fatalf("Ready = %+v, want %s %s at generation 3", ready, tc.ready, tc.reason)
			}
			if tc.wantInMessage != "" && ready.Message != tc.wantInMessage {
				t.Errorf("Ready message %q, want %q", ready.Message, tc.wantInMessage)
			}
			succeeded := meta.FindStatusCondition(run.Status.Conditions, agentsv1alpha1.ConditionSucceeded)
			switch {
			case tc.succeeded == "" && succeeded != nil:
				t.Errorf("Succeeded = %+v on an unfinished run", succeeded)
			case tc.succeeded != "" && (succeeded == nil || succeeded.Status != tc.succeeded || succeeded.Reason != tc.succeededWhy):
				t.Errorf("Succeeded = %+v, want %s %s", succeeded, tc.succeeded, tc.succeededWhy)
			}
			if run.Status.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d, want 3", run.Status.ObservedGeneration)
			}
		})
	}
}

// TestSetWaitingForPayload: the mark moves Ready's lastTransitionTime to now
// (the second grace counts from it) and keeps the run Reconciling.
func TestSetWaitingForPayload(t *testing.T) {
	run := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	run.Spec.Payload = &agentsv1alpha1.PayloadReference{SecretName: "p"}
	setRunConditions(run)
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
