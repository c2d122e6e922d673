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

package ui

import (
	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// toggle is the pause action a card offers: the one that goes with its
// badge.
type toggle struct {
	Action, Label, Path string
	// Confirm, when set, is asked before the action.
	Confirm string
}

// pauseState makes the badge and the pause action agree, from what was
// asked (spec.paused) and what hookrun did (status): a pause asked but not
// made yet is "Pausing…" with Resume, a resume asked but not made yet
// "Resuming…" with Pause. An endpoint hookrun paused because its owner may
// no longer trigger the Agent does not resume on Resume (kubectl hookrun
// resume refuses it): what a member can do is take it over, as `resume
// --take-ownership` does, and the admission policy decides whether this
// user may.
func (c *cardView) pauseState(ep *agentsv1alpha1.WebhookEndpoint, base string) {
	asked := ep.Spec.Paused
	paused := ep.Status.Phase == agentsv1alpha1.EndpointPaused
	pause := toggle{Action: "pause", Label: "Pause", Path: base + "/pause"}
	resume := toggle{Action: "resume", Label: "Resume", Path: base + "/resume"}
	switch {
	case paused && ep.Status.PauseReason == agentsv1alpha1.PauseReasonOwnerNotMember:
		c.Toggle = toggle{Action: "take-ownership", Label: "Take ownership and resume", Path: base + "/take-ownership",
			Confirm: takeOwnershipQuestion(ep.Name)}
	case asked && !paused:
		c.Phase, c.Badge, c.Active, c.Toggle = "Pausing…", "warn", false, resume
	case !asked && paused:
		c.Phase, c.Toggle = "Resuming…", pause
	case asked:
		c.Toggle = resume
	default:
		c.Toggle = pause
	}
}
