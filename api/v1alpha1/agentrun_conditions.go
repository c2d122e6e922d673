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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A run's conditions follow from its status alone, so whoever writes the
// status (the receiver for a skipped run, the operator for the others)
// writes the conditions in the same write, with SetRunConditions.

// SetRunConditions brings a run's conditions and observedGeneration in line
// with its state: Ready, Reconciling or Stalled (SetReadiness), and
// Succeeded once the run has ended.
func SetRunConditions(run *AgentRun) {
	s := &run.Status
	ready, p := runReadiness(run)
	SetReadiness(&s.Conditions, ready, p, run.Generation)
	if succeeded := runSucceededCondition(run); succeeded != nil {
		succeeded.ObservedGeneration = run.Generation
		meta.SetStatusCondition(&s.Conditions, *succeeded)
	} else {
		meta.RemoveStatusCondition(&s.Conditions, ConditionSucceeded)
	}
	s.ObservedGeneration = run.Generation
}

// runReadiness is a run's Ready condition for its state, and how kstatus is
// to read it. A queued or running run is Reconciling (kstatus InProgress),
// a queued one with reason WaitingForPayload once it has a payloadDeadline,
// a running one with reason Retrying while it waits to call its agent
// again (status.retry); a run that succeeded is Ready (Current). One that ended in error or was
// skipped is done without success: Stalled (kstatus Failed, as for a failed
// Job), so that a tool waiting for the run to finish stops waiting.
func runReadiness(run *AgentRun) (metav1.Condition, Progress) {
	switch run.EffectiveState() {
	case RunSuccess:
		return NewCondition(ConditionReady, true, ReasonSucceeded, "The agent finished the task"), ProgressCurrent
	case RunError:
		return NewCondition(ConditionReady, false, failedReason(run), endedMessage(run, "The run failed")), ProgressStalled
	case RunSkipped:
		return NewCondition(ConditionReady, false, ReasonSkipped, endedMessage(run, "The call was recorded without running")), ProgressStalled
	case RunRunning:
		if r := run.Status.Retry; r != nil {
			return NewCondition(ConditionReady, false, ReasonRetrying, retryingMessage(r)), ProgressReconciling
		}
		return NewCondition(ConditionReady, false, ReasonRunning, "Sent to the agent; waiting for its task to end"), ProgressReconciling
	default: // queued
		if run.Status.PayloadDeadline != nil {
			return NewCondition(ConditionReady, false, ReasonWaitingForPayload, waitingForPayloadMessage(run)), ProgressReconciling
		}
		return NewCondition(ConditionReady, false, ReasonQueued,
			"Waiting to be sent: the Agent's concurrent runs, the thread's earlier run or the payload"), ProgressReconciling
	}
}

// waitingForPayloadMessage is the message of a queued run whose payload
// Secret was found missing past its grace.
func waitingForPayloadMessage(run *AgentRun) string {
	name := ""
	if run.Spec.Payload != nil {
		name = run.Spec.Payload.SecretName
	}
	return fmt.Sprintf("The payload Secret %s does not exist; the run fails if it does not appear within %s", name, PayloadGrace)
}

// retryingMessage is the Ready message of a run that waits to call its
// agent again.
func retryingMessage(r *RunRetry) string {
	if r.Message != "" {
		return r.Message
	}
	return fmt.Sprintf("The agent turned %d calls in a row away; calling again at %s", r.Attempts, r.NotBefore.UTC().Format(time.RFC3339))
}

// failedReason is the reason of a run that ended in error: status.reason,
// or Failed.
func failedReason(run *AgentRun) string {
	if run.Status.Reason != "" {
		return run.Status.Reason
	}
	return ReasonFailed
}

// endedMessage is the message of a run that ended without success: its
// status message, or fallback when it has none.
func endedMessage(run *AgentRun, fallback string) string {
	if run.Status.Message != "" {
		return run.Status.Message
	}
	return fallback
}

// runSucceededCondition says how a finished run ended; nil while it has not.
func runSucceededCondition(run *AgentRun) *metav1.Condition {
	var c metav1.Condition
	switch run.EffectiveState() {
	case RunSuccess:
		c = NewCondition(ConditionSucceeded, true, ReasonSucceeded, "The agent finished the task")
	case RunError:
		c = NewCondition(ConditionSucceeded, false, failedReason(run), run.Status.Message)
	case RunSkipped:
		c = NewCondition(ConditionSucceeded, false, ReasonSkipped, run.Status.Message)
	default:
		return nil
	}
	return &c
}

// NewCondition is a condition of type t, True when ok: what every kind's
// pure condition functions return.
func NewCondition(t string, ok bool, reason, msg string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg}
}
