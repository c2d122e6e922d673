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

package endpoint

import (
	corev1 "k8s.io/api/core/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// ownerPauseTransition names the event of an endpoint moving between active
// and paused by its owner (spec.paused), from its phase and pause reason
// before and after this reconcile: EventPaused, EventResumed, or "" for no
// such move. A move into or out of the OwnerNotMember pause has events of
// its own (OwnerNotMember, MembershipRestored), and an endpoint created
// paused was never active: neither records Paused or Resumed.
func ownerPauseTransition(wasPhase agentsv1alpha1.EndpointPhase, wasReason agentsv1alpha1.PauseReason,
	phase agentsv1alpha1.EndpointPhase, reason agentsv1alpha1.PauseReason) string {
	switch {
	case wasPhase == agentsv1alpha1.EndpointActive && reason == agentsv1alpha1.PauseReasonPaused:
		return agentsv1alpha1.EventPaused
	case wasReason == agentsv1alpha1.PauseReasonPaused && phase == agentsv1alpha1.EndpointActive:
		return agentsv1alpha1.EventResumed
	}
	return ""
}

// ownerPauseEvent records Paused or Resumed once the status showing the
// move is written (so a write that fails records nothing, and the next
// reconcile, which sees the same move, records it then).
func (r *Reconciler) ownerPauseEvent(s *endpointScope, wasPhase agentsv1alpha1.EndpointPhase, wasReason agentsv1alpha1.PauseReason) {
	ep := s.ep
	switch ownerPauseTransition(wasPhase, wasReason, ep.Status.Phase, ep.Status.PauseReason) {
	case agentsv1alpha1.EventPaused:
		s.afterStatusWritten(func() {
			r.Recorder.Eventf(ep, nil, corev1.EventTypeNormal, agentsv1alpha1.EventPaused, "Pause",
				"Paused by the owner (spec.paused): calls answer 422 endpoint_paused until spec.paused is false")
		})
	case agentsv1alpha1.EventResumed:
		s.afterStatusWritten(func() {
			r.Recorder.Eventf(ep, nil, corev1.EventTypeNormal, agentsv1alpha1.EventResumed, "Resume",
				"Resumed by the owner (spec.paused is false): calls start runs again")
		})
	}
}
