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
	"testing"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestOwnerPauseTransition(t *testing.T) {
	const (
		active, paused   = agentsv1alpha1.EndpointActive, agentsv1alpha1.EndpointPaused
		byOwner, notMemb = agentsv1alpha1.PauseReasonPaused, agentsv1alpha1.PauseReasonOwnerNotMember
		none             = agentsv1alpha1.PauseReasonNone
	)
	for _, c := range []struct {
		wasPhase  agentsv1alpha1.EndpointPhase
		wasReason agentsv1alpha1.PauseReason
		phase     agentsv1alpha1.EndpointPhase
		reason    agentsv1alpha1.PauseReason
		want      string
	}{
		{active, none, paused, byOwner, agentsv1alpha1.EventPaused},
		{paused, byOwner, active, none, agentsv1alpha1.EventResumed},
		{paused, byOwner, paused, byOwner, ""},
		{active, none, active, none, ""},
		{"", none, paused, byOwner, ""},        // created paused: never active
		{active, none, paused, notMemb, ""},    // OwnerNotMember has its own event
		{paused, notMemb, paused, byOwner, ""}, // MembershipRestored, still paused by the owner
		{paused, byOwner, paused, notMemb, ""}, // OwnerNotMember wins over the owner's pause
		{paused, notMemb, active, none, ""},    // MembershipRestored
	} {
		if got := ownerPauseTransition(c.wasPhase, c.wasReason, c.phase, c.reason); got != c.want {
			t.Errorf("%s/%s → %s/%s: %q, want %q", c.wasPhase, c.wasReason, c.phase, c.reason, got, c.want)
		}
	}
}
