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
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// runSummary is a run's Ready, Reconciling and Stalled for its state. A
// queued or running run is Reconciling (kstatus InProgress); a run that
// succeeded is Ready (Current). One that ended in error or was skipped is
// done without success: Stalled (kstatus Failed, as for a failed Job), so
// that a tool waiting for the run to finish stops waiting.
func runSummary(run *agentsv1alpha1.AgentRun) summary {
	switch run.EffectiveState() {
	case agentsv1alpha1.RunSuccess:
		return current(agentsv1alpha1.ReasonSucceeded, "The agent finished the task")
	case agentsv1alpha1.RunError:
		return stalled(agentsv1alpha1.ReasonFailed, endedMessage(run, "The run failed"))
	case agentsv1alpha1.RunSkipped:
		return stalled(agentsv1alpha1.ReasonSkipped, endedMessage(run, "The call was recorded without running"))
	case agentsv1alpha1.RunRunning:
		return reconciling(agentsv1alpha1.ReasonRunning, "Sent to the agent; waiting for its task to end")
	default:
		return reconciling(agentsv1alpha1.ReasonQueued, "Waiting to be sent: the Agent's concurrent runs, the thread's earlier run or the payload")
	}
}

// endedMessage is the message of a run that ended without success: its
// status message, or fallback when it has none.
func endedMessage(run *agentsv1alpha1.AgentRun, fallback string) string {
	if run.Status.Message != "" {
		return run.Status.Message
	}
	return fallback
}

// setWaitingForPayload marks a queued run whose payload is missing past its
// grace: Ready (and Reconciling) get reason WaitingForPayload and Ready's
// lastTransitionTime is now, from which the second grace counts.
func setWaitingForPayload(run *agentsv1alpha1.AgentRun, msg string, now time.Time) {
	meta.RemoveStatusCondition(&run.Status.Conditions, agentsv1alpha1.ConditionReady)
	s := reconciling(agentsv1alpha1.ReasonWaitingForPayload, msg)
	s.ready.LastTransitionTime = metav1.NewTime(now)
	setSummary(&run.Status.Conditions, s, run.Generation)
}

// runSucceededCondition says how a finished run ended; nil while it has not.
func runSucceededCondition(run *agentsv1alpha1.AgentRun) *metav1.Condition {
	const t = agentsv1alpha1.ConditionSucceeded
	var c metav1.Condition
	switch run.EffectiveState() {
	case agentsv1alpha1.RunSuccess:
		c = condition(t, true, agentsv1alpha1.ReasonSucceeded, "The agent finished the task")
	case agentsv1alpha1.RunError:
		c = condition(t, false, agentsv1alpha1.ReasonFailed, run.Status.Message)
	case agentsv1alpha1.RunSkipped:
		c = condition(t, false, agentsv1alpha1.ReasonSkipped, run.Status.Message)
	default:
		return nil
	}
	return &c
}

// setRunConditions brings a run's conditions and observedGeneration in line
// with its state.
func setRunConditions(run *agentsv1alpha1.AgentRun) {
	s := &run.Status
	setSummary(&s.Conditions, runSummary(run), run.Generation)
	if succeeded := runSucceededCondition(run); succeeded != nil {
		succeeded.ObservedGeneration = run.Generation
		meta.SetStatusCondition(&s.Conditions, *succeeded)
	} else {
		meta.RemoveStatusCondition(&s.Conditions, agentsv1alpha1.ConditionSucceeded)
	}
	s.ObservedGeneration = run.Generation
}

// backfillConditions gives a finished run that has none (a skipped run the
// receiver wrote, a run that ended before conditions existed) its
// conditions; it is not looked at again after that.
func (r *AgentRunExecutionReconciler) backfillConditions(ctx context.Context, run *agentsv1alpha1.AgentRun) error {
	if !run.DeletionTimestamp.IsZero() || !needsConditions(run) {
		return nil
	}
	before := run.DeepCopy()
	setRunConditions(run)
	return client.IgnoreNotFound(patchStatusIfChanged(ctx, r.Client, before, run, &before.Status, &run.Status))
}

// needsConditions tells whether a finished run lacks its conditions.
func needsConditions(run *agentsv1alpha1.AgentRun) bool {
	return meta.FindStatusCondition(run.Status.Conditions, agentsv1alpha1.ConditionSucceeded) == nil
}
