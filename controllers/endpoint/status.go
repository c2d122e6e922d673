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
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// Pure functions that turn what the endpoint reconciler observed into
// conditions and phase. Each has a table test in webhookendpoint_status_test.go.

// agentReadyCondition says whether the endpoint's Agent can take runs; agent
// is nil when it does not exist.
func agentReadyCondition(agentName string, agent *agentsv1alpha1.Agent) metav1.Condition {
	switch {
	case agent == nil:
		return agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionAgentReady, false, agentsv1alpha1.ReasonAgentNotFound,
			fmt.Sprintf("Agent %q does not exist in this namespace; calls answer 422 agent_unavailable until it is created", agentName))
	case agent.Spec.Archived:
		return agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionAgentReady, false, agentsv1alpha1.ReasonAgentArchived,
			fmt.Sprintf("Agent %q is archived; calls answer 422 agent_unavailable until spec.archived is false", agentName))
	default:
		return agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionAgentReady, true, agentsv1alpha1.ReasonAgentFound,
			fmt.Sprintf("Agent %q is available", agentName))
	}
}

// threadReadyCondition says whether a ContinueExisting endpoint's thread can
// take runs; thread is nil when it does not exist.
func threadReadyCondition(spec *agentsv1alpha1.WebhookEndpointSpec, thread *agentsv1alpha1.AgentThread) metav1.Condition {
	if spec.ThreadStrategy != agentsv1alpha1.ContinueExisting || spec.TargetThreadRef == nil {
		return agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionThreadReady, true, agentsv1alpha1.ReasonThreadNotRequired,
			"Every call starts a new thread")
	}
	name := spec.TargetThreadRef.Name
	switch {
	case thread == nil:
		return agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionThreadReady, false, agentsv1alpha1.ReasonThreadNotFound,
			fmt.Sprintf("AgentThread %q does not exist in this namespace; create it or change spec.targetThreadRef. Calls answer 422 thread_unavailable", name))
	case thread.Spec.AgentRef.Name != spec.AgentRef.Name:
		return agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionThreadReady, false, agentsv1alpha1.ReasonThreadOfAnotherAgent,
			fmt.Sprintf("AgentThread %q belongs to Agent %q, not to %q; name a thread of this endpoint's Agent. Calls answer 422 thread_unavailable",
				name, thread.Spec.AgentRef.Name, spec.AgentRef.Name))
	default:
		return agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionThreadReady, true, agentsv1alpha1.ReasonThreadFound,
			fmt.Sprintf("Calls are appended to AgentThread %q", name))
	}
}

// secretOutcome is what the secret phase found or did.
type secretOutcome int

const (
	secretAuthDisabled secretOutcome = iota
	secretGenerated
	secretRotated
	secretUnchanged
	secretGeneratedDeleted
	secretFromRef
	secretRefNotFound
	secretRefKeyMissing
	secretRefTooShort
	secretNotStandardWebhooks
	secretKeyLost
	secretRefWhiteSpace
	secretNameTaken
	secretRefNotReferable
	secretOIDC
)

// secretReadyCondition describes the secret phase's outcome. name is the
// Secret concerned (generated or spec.secretRef), key its key, size the
// length of a too short value.
func secretReadyCondition(outcome secretOutcome, name, key string, size int) metav1.Condition {
	const t = agentsv1alpha1.ConditionSecretReady
	switch outcome {
	case secretAuthDisabled:
		return agentsv1alpha1.NewCondition(t, true, agentsv1alpha1.ReasonAuthenticationDisabled,
			"spec.allowUnauthenticated is true: calls need no secret")
	case secretOIDC:
		return agentsv1alpha1.NewCondition(t, true, agentsv1alpha1.ReasonOIDCTokens,
			"Calls authenticate with a token of the issuer in spec.sender.oidc (Authorization: Bearer <token>); the endpoint has no secret")
	case secretGenerated, secretUnchanged:
		return agentsv1alpha1.NewCondition(t, true, agentsv1alpha1.ReasonSecretGenerated,
			fmt.Sprintf("The secret is in Secret %q, key %q; give it to the sender (type Header: in the %s header; other types: docs/senders.md)", name, agentsv1alpha1.WebhookSecretKey, agentsv1alpha1.SecretHeader))
	case secretRotated:
		return agentsv1alpha1.NewCondition(t, true, agentsv1alpha1.ReasonSecretRotated,
			fmt.Sprintf("The secret was rotated; the new one is in Secret %q, key %q, and the old one no longer works", name, agentsv1alpha1.WebhookSecretKey))
	case secretGeneratedDeleted:
		return agentsv1alpha1.NewCondition(t, true, agentsv1alpha1.ReasonGeneratedSecretDeleted,
			fmt.Sprintf("Secret %q was deleted; the endpoint still accepts the secret it had (only its hash is kept). "+
				"To get a new one, rotate: kubectl annotate webhookendpoint NAME %s=\"$(date +%%s)\" --overwrite", name, agentsv1alpha1.AnnotationRotateSecret))
	case secretFromRef:
		return agentsv1alpha1.NewCondition(t, true, agentsv1alpha1.ReasonSecretFromRef,
			fmt.Sprintf("The secret is key %q of Secret %q (spec.secretRef)", key, name))
	case secretRefNotFound:
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSecretNotFound,
			fmt.Sprintf("Secret %q named in spec.secretRef does not exist; calls answer 403 until it does", name))
	case secretRefKeyMissing:
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSecretKeyMissing,
			fmt.Sprintf("Secret %q has no key %q (spec.secretRef.key); calls answer 403 until it does", name, key))
	case secretRefNotReferable:
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSecretNotReferable,
			secretref.NotReferableMessage("spec.secretRef", name)+". Calls answer 403 until then")
	case secretNameTaken:
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSecretNameTaken,
			fmt.Sprintf("A Secret %q exists that this endpoint did not create; the operator will not overwrite it. "+
				"Delete or rename it, or name it in spec.secretRef to use it. Calls answer 403 until then", name))
	case secretNotStandardWebhooks:
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSecretNotStandardWebhooks,
			fmt.Sprintf("The secret in Secret %q is not a Standard Webhooks secret (whsec_ and base64); calls answer 403. "+
				"Rotate to generate one: kubectl annotate webhookendpoint NAME %s=\"$(date +%%s)\" --overwrite, or put one in spec.secretRef", name, agentsv1alpha1.AnnotationRotateSecret))
	case secretKeyLost:
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSigningKeyLost,
			fmt.Sprintf("The signing key is gone: key %q of Secret %q no longer holds the secret whose hash is in status, so signed calls answer 403. "+
				"Rotate: kubectl annotate webhookendpoint NAME %s=\"$(date +%%s)\" --overwrite", key, name, agentsv1alpha1.AnnotationRotateSecret))
	case secretRefWhiteSpace:
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSecretHasWhiteSpace,
			fmt.Sprintf("Key %q of Secret %q starts or ends with white space or a newline (echo without -n, a file with a final newline); "+
				"HTTP trims header values, so no call could match. Store it without, for example kubectl create secret generic %s --from-literal=%s=VALUE. Calls answer 403 until then",
				key, name, name, key))
	default: // secretRefTooShort
		return agentsv1alpha1.NewCondition(t, false, agentsv1alpha1.ReasonSecretTooShort,
			fmt.Sprintf("Key %q of Secret %q holds %d bytes; a secret needs at least %d. Calls answer 403 until it is longer",
				key, name, size, agentsv1alpha1.MinSecretBytes))
	}
}

// endpointPhase decides whether the endpoint accepts calls: an
// OwnerNotMember pause (ownerNotMemberPause) wins over the owner's own.
func endpointPhase(paused, ownerNotMember bool) (agentsv1alpha1.EndpointPhase, agentsv1alpha1.PauseReason) {
	switch {
	case ownerNotMember:
		return agentsv1alpha1.EndpointPaused, agentsv1alpha1.PauseReasonOwnerNotMember
	case paused:
		return agentsv1alpha1.EndpointPaused, agentsv1alpha1.PauseReasonPaused
	default:
		return agentsv1alpha1.EndpointActive, agentsv1alpha1.PauseReasonNone
	}
}

// ownerNotMemberPause decides whether ep is paused for OwnerNotMember, from
// its status and runs; the operator is the only writer of that pause. A
// skip is a run the receiver skipped because the owner was not a member
// (label LabelSkipReason: SkipReasonOwnerNotMember), owned by ep itself
// (not by an endpoint deleted before under its name), and unhandled: received
// after status.ownerNotMemberHandledUntil. The endpoint is paused when
//
//   - it is paused for OwnerNotMember already, or an unhandled skip names
//     the current spec.owner (same user, same set of groups), and
//   - isMember says the current owner may not trigger the Agent.
//
// isMember (a SubjectAccessReview) is called only in the first case, so an
// endpoint without unhandled skips of its owner costs no API request. When
// the endpoint is not paused, every unhandled skip is handled: handledUntil
// moves to the newest one's receivedAt. Those skips named an owner who is a
// member now, or who is no longer the owner, so they never pause the
// endpoint again, even when spec.owner changes back. When it is paused,
// handledUntil stays. On an error nothing is decided.
func ownerNotMemberPause(ep *agentsv1alpha1.WebhookEndpoint, runs []agentsv1alpha1.AgentRun,
	isMember func() (bool, error)) (paused bool, handledUntil *metav1.Time, err error) {
	handledUntil = ep.Status.OwnerNotMemberHandledUntil
	newest, ofOwner := handledUntil, false
	for i := range runs {
		run := &runs[i]
		if !isOwnerSkip(run, ep.UID) || (handledUntil != nil && !run.Spec.ReceivedAt.After(handledUntil.Time)) {
			continue
		}
		ofOwner = ofOwner || sameOwner(run.Spec.Owner, ep.Spec.Owner)
		if newest == nil || run.Spec.ReceivedAt.After(newest.Time) {
			newest = run.Spec.ReceivedAt.DeepCopy()
		}
	}
	if ep.Status.PauseReason == agentsv1alpha1.PauseReasonOwnerNotMember || ofOwner {
		member, err := isMember()
		if err != nil {
			return false, handledUntil, err
		}
		if !member {
			return true, handledUntil, nil
		}
	}
	return false, newest, nil
}

// isOwnerSkip tells whether run is a call of the endpoint with uid that the
// receiver skipped because the owner was not a member.
func isOwnerSkip(run *agentsv1alpha1.AgentRun, uid types.UID) bool {
	if run.Labels[agentsv1alpha1.LabelSkipReason] != agentsv1alpha1.SkipReasonOwnerNotMember ||
		run.EffectiveState() != agentsv1alpha1.RunSkipped {
		return false
	}
	return cached.OwnedBy(run.OwnerReferences, uid)
}

// sameOwner tells whether a and b are one owner: the same user and the same
// set of groups (what a membership check asks about).
func sameOwner(a, b *agentsv1alpha1.Owner) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.User == b.User && slices.Equal(slices.Sorted(slices.Values(a.Groups)), slices.Sorted(slices.Values(b.Groups)))
}

// endpointSummary summarises the endpoint for Ready, Reconciling and
// Stalled. It is Ready (kstatus Current) once it has a URL and its secret,
// agent and thread are ready, also when it is paused by its owner or its
// Agent is archived (the reason says so: the endpoint is as asked, and calls
// answer 422). It is Stalled while something only a change from outside can
// fix is wrong (a missing Agent, thread or Secret, an ID conflict, an owner
// who is no longer a member), and Reconciling on a transient error
// (reconcileErr, this reconcile's).
func endpointSummary(st *agentsv1alpha1.WebhookEndpointStatus, idHeldElsewhere bool, reconcileErr error) status.Summary {
	if idHeldElsewhere {
		return status.Stalled(agentsv1alpha1.ReasonEndpointIDConflict,
			"Another WebhookEndpoint has held this endpoint ID longer and receives its calls; this one is not served. "+
				"Delete this endpoint and create it again for a new ID, or give it another one")
	}
	if reconcileErr != nil {
		return status.ReconcileFailed(reconcileErr)
	}
	var archived *metav1.Condition
	for _, ct := range []string{agentsv1alpha1.ConditionAgentReady, agentsv1alpha1.ConditionThreadReady, agentsv1alpha1.ConditionSecretReady} {
		c := meta.FindStatusCondition(st.Conditions, ct)
		switch {
		case c == nil:
			return status.Reconciling(agentsv1alpha1.ReasonReconcileFailed, ct+" is not known yet")
		case c.Reason == agentsv1alpha1.ReasonAgentArchived:
			archived = c
		case c.Status != metav1.ConditionTrue:
			return status.Stalled(c.Reason, c.Message)
		}
	}
	if st.URL == "" {
		return status.Reconciling(agentsv1alpha1.ReasonReconcileFailed, "The endpoint has no URL yet")
	}
	switch {
	case st.PauseReason == agentsv1alpha1.PauseReasonOwnerNotMember:
		return status.Stalled(agentsv1alpha1.ReasonOwnerNotMember,
			"Paused: the owner may no longer trigger the Agent. Calls answer 422 until the owner is a member again or another member sets spec.owner to themselves")
	case st.PauseReason == agentsv1alpha1.PauseReasonPaused:
		return status.Current(agentsv1alpha1.ReasonPaused,
			"Paused by the owner, as spec.paused asks: calls answer 422 \"Endpoint is paused\". Set spec.paused to false to resume")
	case archived != nil:
		return status.Current(agentsv1alpha1.ReasonAgentArchived, archived.Message)
	}
	return status.Current(agentsv1alpha1.ReasonAvailable, "Accepting calls at "+st.URL)
}
