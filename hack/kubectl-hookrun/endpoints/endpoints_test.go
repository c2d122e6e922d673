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

package endpoints

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestPhaseOf(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: agentsv1alpha1.ConditionReady, Status: status, Reason: reason}}
	}
	for want, st := range map[string]agentsv1alpha1.WebhookEndpointStatus{
		"Pending":                  {ObservedGeneration: -1},
		"Active":                   {Phase: agentsv1alpha1.EndpointActive, Conditions: ready(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable)},
		"Paused (by owner)":        {Phase: agentsv1alpha1.EndpointPaused, PauseReason: agentsv1alpha1.PauseReasonPaused, Conditions: ready(metav1.ConditionTrue, agentsv1alpha1.ReasonPaused)},
		"Paused (OwnerNotMember)":  {Phase: agentsv1alpha1.EndpointPaused, PauseReason: agentsv1alpha1.PauseReasonOwnerNotMember, Conditions: ready(metav1.ConditionFalse, agentsv1alpha1.ReasonOwnerNotMember)},
		"NotReady (AgentNotFound)": {Phase: agentsv1alpha1.EndpointActive, Conditions: ready(metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound)},
		"Refusing (AgentArchived)": {Phase: agentsv1alpha1.EndpointActive, Conditions: ready(metav1.ConditionTrue, agentsv1alpha1.ReasonAgentArchived)},
	} {
		ep := &agentsv1alpha1.WebhookEndpoint{Status: st}
		if got := PhaseOf(ep); got != want {
			t.Errorf("phaseOf(%+v) = %q, want %q", st, got, want)
		}
	}
}
