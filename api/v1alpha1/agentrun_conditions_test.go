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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRunConditions(t *testing.T) {
	payload := &PayloadReference{SecretName: "p"}
	cases := []struct {
		name          string
		state         RunState
		payload       *PayloadReference
		deadline      bool // status.payloadDeadline set
		retry         *RunRetry
		statusReason  string
		ready         metav1.ConditionStatus
		reason        string
		progress      Progress
		succeeded     metav1.ConditionStatus // "": no Succeeded condition
		succeededWhy  string
		message       string
		wantInMessage string
	}{
		{name: "queued (empty state)", payload: payload, ready: metav1.ConditionFalse, reason: ReasonQueued,
			progress: ProgressReconciling},
		{name: "queued, its payload found missing past the grace", payload: payload, deadline: true, ready: metav1.ConditionFalse,
			reason: ReasonWaitingForPayload, progress: ProgressReconciling,
			wantInMessage: "The payload Secret p does not exist; the run fails if it does not appear within 30s"},
		{name: "running (a payload deadline left from its wait)", deadline: true, state: RunRunning, payload: payload, ready: metav1.ConditionFalse, reason: ReasonRunning,
			progress: ProgressReconciling},
		{name: "running, waiting to send again", state: RunRunning, payload: payload, ready: metav1.ConditionFalse, reason: ReasonRetrying,
			retry:    &RunRetry{Attempts: 1, Message: "The agent answered 429; sending again in 30s (Retry-After)"},
			progress: ProgressReconciling, wantInMessage: "The agent answered 429; sending again in 30s (Retry-After)"},
		{name: "running, waiting to send again, message cut by the cache", state: RunRunning, payload: payload, ready: metav1.ConditionFalse, reason: ReasonRetrying,
			retry:    &RunRetry{Attempts: 2, NotBefore: metav1.NewMicroTime(time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC))},
			progress: ProgressReconciling, wantInMessage: "The agent turned 2 calls in a row away; calling again at 2026-11-22T12:00:30Z"},
		{name: "success", state: RunSuccess, payload: payload, ready: metav1.ConditionTrue, reason: ReasonSucceeded,
			succeeded: metav1.ConditionTrue, succeededWhy: ReasonSucceeded, progress: ProgressCurrent},
		{name: "error", state: RunError, payload: payload, ready: metav1.ConditionFalse, reason: ReasonFailed,
			succeeded: metav1.ConditionFalse, succeededWhy: ReasonFailed, message: "boom", wantInMessage: "boom", progress: ProgressStalled},
		{name: "error without a message", state: RunError, payload: payload, ready: metav1.ConditionFalse, reason: ReasonFailed,
			succeeded: metav1.ConditionFalse, succeededWhy: ReasonFailed, wantInMessage: "The run failed", progress: ProgressStalled},
		{name: "error with a reason: a payload that is not the run's", state: RunError, payload: payload, statusReason: ReasonPayloadInvalid,
			ready: metav1.ConditionFalse, reason: ReasonPayloadInvalid, succeeded: metav1.ConditionFalse, succeededWhy: ReasonPayloadInvalid,
			message: "not its payload", wantInMessage: "not its payload", progress: ProgressStalled},
		{name: "skipped by a rate limit", state: RunSkipped, payload: payload, ready: metav1.ConditionFalse, reason: ReasonSkipped,
			succeeded: metav1.ConditionFalse, succeededWhy: ReasonSkipped, message: "rate limited", wantInMessage: "rate limited", progress: ProgressStalled},
		{name: "skipped as the receiver writes it (no payload)", state: RunSkipped, ready: metav1.ConditionFalse, reason: ReasonSkipped,
			succeeded: metav1.ConditionFalse, succeededWhy: ReasonSkipped, message: "Skipped: owner", wantInMessage: "Skipped: owner", progress: ProgressStalled},
		{name: "skipped without state (no payload)", ready: metav1.ConditionFalse, reason: ReasonSkipped,
			succeeded: metav1.ConditionFalse, succeededWhy: ReasonSkipped, wantInMessage: "The call was recorded without running", progress: ProgressStalled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := &AgentRun{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			run.Spec.Payload = tc.payload
			run.Status.State, run.Status.Message, run.Status.Reason = tc.state, tc.message, tc.statusReason
			run.Status.Retry = tc.retry
			if tc.deadline {
				run.Status.PayloadDeadline = &metav1.Time{Time: time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)}
			}
			// A run that was running has a stale Succeeded and Reconciling: they go.
			run.Status.Conditions = []metav1.Condition{{Type: ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Stale"},
				{Type: ConditionReconciling, Status: metav1.ConditionTrue, Reason: "Stale"}}
			want, p := runReadiness(run)
			if p != tc.progress {
				t.Errorf("progress %d, want %d", p, tc.progress)
			}
			SetRunConditions(run)
			checkReadiness(t, run.Status.Conditions, want, 3, tc.progress == ProgressReconciling, tc.progress == ProgressStalled)
			ready := meta.FindStatusCondition(run.Status.Conditions, ConditionReady)
			if ready == nil || ready.Status != tc.ready || ready.Reason != tc.reason || ready.ObservedGeneration != 3 {
				t.Fatalf("Ready = %+v, want %s %s at generation 3", ready, tc.ready, tc.reason)
			}
			if tc.wantInMessage != "" && ready.Message != tc.wantInMessage {
				t.Errorf("Ready message %q, want %q", ready.Message, tc.wantInMessage)
			}
			succeeded := meta.FindStatusCondition(run.Status.Conditions, ConditionSucceeded)
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
