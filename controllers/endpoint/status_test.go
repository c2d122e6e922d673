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
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/status/statustest"
)

// Table tests of the pure functions behind the conditions and the phase.

func TestAgentReadyCondition(t *testing.T) {
	archived := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "triage"}, Spec: agentsv1alpha1.AgentSpec{Archived: true}}
	active := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "triage"}}
	cases := []struct {
		name   string
		agent  *agentsv1alpha1.Agent
		status metav1.ConditionStatus
		reason string
		msg    string
	}{
		{"missing", nil, metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound, `Agent "triage" does not exist`},
		{"archived", archived, metav1.ConditionFalse, agentsv1alpha1.ReasonAgentArchived, "until spec.archived is false"},
		{"available", active, metav1.ConditionTrue, agentsv1alpha1.ReasonAgentFound, "is available"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			statustest.CheckCondition(t, agentReadyCondition("triage", tc.agent), agentsv1alpha1.ConditionAgentReady, tc.status, tc.reason, tc.msg)
		})
	}
}

func TestThreadReadyCondition(t *testing.T) {
	continueSpec := agentsv1alpha1.WebhookEndpointSpec{
		AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, ThreadStrategy: agentsv1alpha1.ContinueExisting,
		TargetThreadRef: &agentsv1alpha1.LocalObjectReference{Name: "ops"},
	}
	newSpec := agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, ThreadStrategy: agentsv1alpha1.NewThreadEachRun}
	thread := func(agent string) *agentsv1alpha1.AgentThread {
		return &agentsv1alpha1.AgentThread{Spec: agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent}}}
	}
	cases := []struct {
		name   string
		spec   agentsv1alpha1.WebhookEndpointSpec
		thread *agentsv1alpha1.AgentThread
		status metav1.ConditionStatus
		reason string
		msg    string
	}{
		{"new thread each run", newSpec, nil, metav1.ConditionTrue, agentsv1alpha1.ReasonThreadNotRequired, "new thread"},
		{"missing thread", continueSpec, nil, metav1.ConditionFalse, agentsv1alpha1.ReasonThreadNotFound, `AgentThread "ops" does not exist`},
		{"thread of another agent", continueSpec, thread("other"), metav1.ConditionFalse, agentsv1alpha1.ReasonThreadOfAnotherAgent, `belongs to Agent "other", not to "triage"`},
		{"thread of this agent", continueSpec, thread("triage"), metav1.ConditionTrue, agentsv1alpha1.ReasonThreadFound, `appended to AgentThread "ops"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			statustest.CheckCondition(t, threadReadyCondition(&tc.spec, tc.thread), agentsv1alpha1.ConditionThreadReady, tc.status, tc.reason, tc.msg)
		})
	}
}

func TestSecretReadyCondition(t *testing.T) {
	cases := []struct {
		outcome secretOutcome
		status  metav1.ConditionStatus
		reason  string
		msg     string
	}{
		{secretAuthDisabled, metav1.ConditionTrue, agentsv1alpha1.ReasonAuthenticationDisabled, "need no secret"},
		{secretGenerated, metav1.ConditionTrue, agentsv1alpha1.ReasonSecretGenerated, `Secret "s", key "secret"`},
		{secretUnchanged, metav1.ConditionTrue, agentsv1alpha1.ReasonSecretGenerated, "X-Service-Webhook-Secret"},
		{secretRotated, metav1.ConditionTrue, agentsv1alpha1.ReasonSecretRotated, "old one no longer works"},
		{secretGeneratedDeleted, metav1.ConditionTrue, agentsv1alpha1.ReasonGeneratedSecretDeleted, "agents.hookrun.dev/rotate-secret"},
		{secretFromRef, metav1.ConditionTrue, agentsv1alpha1.ReasonSecretFromRef, `key "k" of Secret "s"`},
		{secretRefNotFound, metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotFound, `Secret "s" named in spec.secretRef does not exist`},
		{secretRefKeyMissing, metav1.ConditionFalse, agentsv1alpha1.ReasonSecretKeyMissing, `has no key "k"`},
		{secretRefTooShort, metav1.ConditionFalse, agentsv1alpha1.ReasonSecretTooShort, "holds 7 bytes; a secret needs at least 32"},
		{secretRefWhiteSpace, metav1.ConditionFalse, agentsv1alpha1.ReasonSecretHasWhiteSpace, "starts or ends with white space or a newline"},
		{secretRefNotReferable, metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable, "kubectl label secret s agents.hookrun.dev/allow-reference=true"},
	}
	for _, tc := range cases {
		statustest.CheckCondition(t, secretReadyCondition(tc.outcome, "s", "k", 7), agentsv1alpha1.ConditionSecretReady, tc.status, tc.reason, tc.msg)
	}
}

func TestEndpointPhase(t *testing.T) {
	const (
		active = agentsv1alpha1.EndpointActive
		paused = agentsv1alpha1.EndpointPaused
		none   = agentsv1alpha1.PauseReasonNone
		byUser = agentsv1alpha1.PauseReasonPaused
		notMbr = agentsv1alpha1.PauseReasonOwnerNotMember
	)
	cases := []struct {
		name                       string
		specPaused, ownerNotMember bool
		phase                      agentsv1alpha1.EndpointPhase
		reason                     agentsv1alpha1.PauseReason
	}{
		{"active", false, false, active, none},
		{"owner pauses", true, false, paused, byUser},
		{"owner not a member", false, true, paused, notMbr},
		{"owner-not-member wins over the owner's pause", true, true, paused, notMbr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			phase, reason := endpointPhase(tc.specPaused, tc.ownerNotMember)
			if phase != tc.phase || reason != tc.reason {
				t.Errorf("endpointPhase = %s/%q, want %s/%q", phase, reason, tc.phase, tc.reason)
			}
		})
	}
}

func TestOwnerNotMemberPause(t *testing.T) {
	const uid = types.UID("endpoint-uid")
	alice := &agentsv1alpha1.Owner{User: "alice@example.com", Groups: []string{"team-a", "team-b"}}
	bob := &agentsv1alpha1.Owner{User: "bob@example.com"}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) *metav1.Time { return &metav1.Time{Time: t0.Add(time.Duration(s) * time.Second)} }
	// skip is a run as the receiver records a call whose owner is not a member.
	skip := func(owner *agentsv1alpha1.Owner, s int, change ...func(*agentsv1alpha1.AgentRun)) agentsv1alpha1.AgentRun {
		run := agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{
				Labels:          map[string]string{agentsv1alpha1.LabelSkipReason: agentsv1alpha1.SkipReasonOwnerNotMember},
				OwnerReferences: []metav1.OwnerReference{{Kind: "WebhookEndpoint", Name: "hooks", UID: uid}},
			},
			Spec:   agentsv1alpha1.AgentRunSpec{Owner: owner.DeepCopy(), ReceivedAt: *at(s)},
			Status: agentsv1alpha1.AgentRunStatus{State: agentsv1alpha1.RunSkipped},
		}
		for _, c := range change {
			c(&run)
		}
		return run
	}
	notMember := agentsv1alpha1.PauseReasonOwnerNotMember
	cases := []struct {
		name    string
		owner   *agentsv1alpha1.Owner
		reason  agentsv1alpha1.PauseReason // status.pauseReason before
		handled *metav1.Time               // status.ownerNotMemberHandledUntil before
		runs    []agentsv1alpha1.AgentRun
		member  bool

		asked       bool // membership was checked
		paused      bool
		wantHandled *metav1.Time
	}{
		{name: "no skips: nothing to ask", owner: alice, member: false},
		{name: "a skip of the owner, who is not a member: pause", owner: alice, runs: []agentsv1alpha1.AgentRun{skip(alice, 5)},
			asked: true, paused: true},
		{name: "the same owner with its groups in another order", owner: &agentsv1alpha1.Owner{User: alice.User, Groups: []string{"team-b", "team-a"}},
			runs: []agentsv1alpha1.AgentRun{skip(alice, 5)}, asked: true, paused: true},
		{name: "a skip of the owner, a member again by now: handled", owner: alice, runs: []agentsv1alpha1.AgentRun{skip(alice, 5), skip(alice, 3)}, member: true,
			asked: true, wantHandled: at(5)},
		{name: "paused, the owner still not a member: stays", owner: alice, reason: notMember, handled: at(1),
			asked: true, paused: true, wantHandled: at(1)},
		{name: "paused, the owner a member again: lifted and its skips handled", owner: alice, reason: notMember,
			runs: []agentsv1alpha1.AgentRun{skip(alice, 5)}, member: true, asked: true, wantHandled: at(5)},
		{name: "paused, a member took ownership: lifted and the old owner's skips handled", owner: bob, reason: notMember,
			runs: []agentsv1alpha1.AgentRun{skip(alice, 5)}, member: true, asked: true, wantHandled: at(5)},
		{name: "a handled skip does not pause again", owner: alice, handled: at(5), runs: []agentsv1alpha1.AgentRun{skip(alice, 5), skip(alice, 2)},
			wantHandled: at(5)},
		{name: "a skip after the handled ones pauses", owner: alice, handled: at(5), runs: []agentsv1alpha1.AgentRun{skip(alice, 5), skip(alice, 6)},
			asked: true, paused: true, wantHandled: at(5)},
		{name: "a skip of a previous owner: not asked, handled", owner: bob, runs: []agentsv1alpha1.AgentRun{skip(alice, 5)},
			wantHandled: at(5)},
		{name: "a skip of the same user with other groups is another owner's", owner: &agentsv1alpha1.Owner{User: alice.User},
			runs: []agentsv1alpha1.AgentRun{skip(alice, 5)}, wantHandled: at(5)},
		{name: "an endpoint without an owner: its skips name none", owner: nil, runs: []agentsv1alpha1.AgentRun{skip(nil, 5)},
			asked: true, paused: true},
		{name: "a skip of an endpoint deleted before under this name", owner: alice, runs: []agentsv1alpha1.AgentRun{
			skip(alice, 5, func(r *agentsv1alpha1.AgentRun) { r.OwnerReferences[0].UID = "older-endpoint" })}},
		{name: "a run skipped for another reason", owner: alice, runs: []agentsv1alpha1.AgentRun{
			skip(alice, 5, func(r *agentsv1alpha1.AgentRun) { delete(r.Labels, agentsv1alpha1.LabelSkipReason) })}},
		{name: "a marked run that is not skipped", owner: alice, runs: []agentsv1alpha1.AgentRun{
			skip(alice, 5, func(r *agentsv1alpha1.AgentRun) {
				r.Status.State = ""
				r.Spec.Payload = &agentsv1alpha1.PayloadReference{SecretName: "p"}
			})}},
		{name: "a skip whose skipped state is not written yet (no payload)", owner: alice, runs: []agentsv1alpha1.AgentRun{
			skip(alice, 5, func(r *agentsv1alpha1.AgentRun) { r.Status.State = "" })}, asked: true, paused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := &agentsv1alpha1.WebhookEndpoint{
				ObjectMeta: metav1.ObjectMeta{UID: uid},
				Spec:       agentsv1alpha1.WebhookEndpointSpec{Owner: tc.owner},
				Status:     agentsv1alpha1.WebhookEndpointStatus{PauseReason: tc.reason, OwnerNotMemberHandledUntil: tc.handled},
			}
			asked := false
			paused, handled, err := ownerNotMemberPause(ep, tc.runs, func() (bool, error) {
				asked = true
				return tc.member, nil
			})
			if err != nil || asked != tc.asked || paused != tc.paused || !handled.Equal(tc.wantHandled) {
				t.Errorf("ownerNotMemberPause = paused %v, handled until %v, %v (membership asked: %v); want paused %v, handled until %v (asked: %v)",
					paused, handled, err, asked, tc.paused, tc.wantHandled, tc.asked)
			}
		})
	}
}

func TestOwnerNotMemberPauseDecidesNothingOnError(t *testing.T) {
	handled := &metav1.Time{Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	ep := &agentsv1alpha1.WebhookEndpoint{Status: agentsv1alpha1.WebhookEndpointStatus{
		PauseReason: agentsv1alpha1.PauseReasonOwnerNotMember, OwnerNotMemberHandledUntil: handled,
	}}
	failed := errors.New("the API server is away")
	_, got, err := ownerNotMemberPause(ep, nil, func() (bool, error) { return false, failed })
	if !errors.Is(err, failed) || !got.Equal(handled) {
		t.Errorf("ownerNotMemberPause = handled until %v, %v; want %v, %v", got, err, handled, failed)
	}
}

func TestEndpointSummary(t *testing.T) {
	ok := func(ct, reason string) metav1.Condition { return agentsv1alpha1.NewCondition(ct, true, reason, "") }
	good := []metav1.Condition{
		ok(agentsv1alpha1.ConditionAgentReady, agentsv1alpha1.ReasonAgentFound),
		ok(agentsv1alpha1.ConditionThreadReady, agentsv1alpha1.ReasonThreadNotRequired),
		ok(agentsv1alpha1.ConditionSecretReady, agentsv1alpha1.ReasonSecretGenerated),
	}
	with := func(cs ...metav1.Condition) []metav1.Condition {
		out := append([]metav1.Condition{}, good...)
		for _, c := range cs {
			for i := range out {
				if out[i].Type == c.Type {
					out[i] = c
				}
			}
		}
		return out
	}
	notOK := func(ct, reason string) metav1.Condition {
		return agentsv1alpha1.NewCondition(ct, false, reason, reason+" message")
	}
	archived := notOK(agentsv1alpha1.ConditionAgentReady, agentsv1alpha1.ReasonAgentArchived)
	missingSecret := notOK(agentsv1alpha1.ConditionSecretReady, agentsv1alpha1.ReasonSecretNotFound)
	paused := func(r agentsv1alpha1.PauseReason, conds []metav1.Condition) agentsv1alpha1.WebhookEndpointStatus {
		return agentsv1alpha1.WebhookEndpointStatus{URL: "u", Conditions: conds, PauseReason: r}
	}
	active := paused(agentsv1alpha1.PauseReasonNone, good)
	cases := []struct {
		name     string
		status   agentsv1alpha1.WebhookEndpointStatus
		conflict bool
		err      error
		progress agentsv1alpha1.Progress
		reason   string
	}{
		{"ready", active, false, nil, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonAvailable},
		{"paused by the owner: as asked", paused(agentsv1alpha1.PauseReasonPaused, good), false, nil, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonPaused},
		{"agent archived: as asked", paused("", with(archived)), false, nil, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonAgentArchived},
		{"paused and agent archived", paused(agentsv1alpha1.PauseReasonPaused, with(archived)), false, nil, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonPaused},
		{"reconcile error", active, false, errors.New("boom"), agentsv1alpha1.ProgressReconciling, agentsv1alpha1.ReasonReconcileFailed},
		{"no URL", agentsv1alpha1.WebhookEndpointStatus{Conditions: good}, false, nil, agentsv1alpha1.ProgressReconciling, agentsv1alpha1.ReasonReconcileFailed},
		{"conditions unknown", agentsv1alpha1.WebhookEndpointStatus{URL: "u"}, false, nil, agentsv1alpha1.ProgressReconciling, agentsv1alpha1.ReasonReconcileFailed},
		{"agent missing", paused("", with(notOK(agentsv1alpha1.ConditionAgentReady, agentsv1alpha1.ReasonAgentNotFound))), false, nil,
			agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonAgentNotFound},
		{"thread missing", paused("", with(notOK(agentsv1alpha1.ConditionThreadReady, agentsv1alpha1.ReasonThreadNotFound))), false, nil,
			agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonThreadNotFound},
		{"thread of other agent", paused("", with(notOK(agentsv1alpha1.ConditionThreadReady, agentsv1alpha1.ReasonThreadOfAnotherAgent))), false, nil,
			agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonThreadOfAnotherAgent},
		{"secret missing", paused("", with(missingSecret)), false, nil, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonSecretNotFound},
		{"secret not referable", paused("", with(notOK(agentsv1alpha1.ConditionSecretReady, agentsv1alpha1.ReasonSecretNotReferable))), false, nil,
			agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonSecretNotReferable},
		{"secret too short", paused("", with(notOK(agentsv1alpha1.ConditionSecretReady, agentsv1alpha1.ReasonSecretTooShort))), false, nil,
			agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonSecretTooShort},
		{"agent archived and secret missing: the misconfiguration wins", paused(agentsv1alpha1.PauseReasonPaused, with(archived, missingSecret)), false, nil,
			agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonSecretNotFound},
		{"owner not member", paused(agentsv1alpha1.PauseReasonOwnerNotMember, good), false, nil, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonOwnerNotMember},
		{"ID held by an older endpoint", active, true, nil, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonEndpointIDConflict},
		{"ID conflict before a reconcile error", active, true, errors.New("boom"), agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonEndpointIDConflict},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			statustest.CheckSummary(t, endpointSummary(&tc.status, tc.conflict, tc.err), tc.progress, tc.reason, "")
		})
	}
}

func TestRandomToken(t *testing.T) {
	got, err := randomToken(bytes.NewReader(bytes.Repeat([]byte{0xfb}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	// 0xfb repeated encodes to "-_v7" blocks in base64url without padding.
	if want := strings.Repeat("-_v7", 10) + "-_s"; got != want {
		t.Errorf("randomToken = %q, want %q", got, want)
	}
	if _, err := randomToken(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Error("randomToken succeeded on a source with only 31 bytes")
	}
}
