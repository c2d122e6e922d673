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

package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	pathpkg "path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// cardWait spaces the looks of a run waiting for its Agent's card. Waiting
// costs no request: the Agent comes from the cache.
const cardWait = 5 * time.Second

// a2aTarget is where a run of agent is sent: JSON-RPC at spec.a2a.url when
// protocolVersion is set; otherwise the interface the agent card gave
// (status.a2a), if it was read for the spec the Agent has now.
func a2aTarget(agent *agentsv1alpha1.Agent) (a2a.Interface, bool) {
	spec := agent.Spec.A2A
	if spec.ProtocolVersion != "" {
		return a2a.Interface{URL: spec.URL, Binding: a2a.BindingJSONRPC, Version: a2a.Version(spec.ProtocolVersion)}, true
	}
	st := agent.Status.A2A
	if st == nil || agent.Status.ObservedGeneration != agent.Generation {
		return a2a.Interface{}, false
	}
	return a2a.Interface{URL: st.URL, Binding: a2a.Binding(st.ProtocolBinding), Version: a2a.Version(st.ProtocolVersion), Tenant: st.Tenant}, true
}

// waitForCard keeps a run whose Agent has no usable card yet: it is sent
// once the card is read, or ends at its timeout with the card's problem as
// its message. Meanwhile the Agent's Ready condition says why; the run's
// status is not written (the cache keeps no message to compare with, so
// each look would write it again).
func waitForCard(ctx context.Context, agent *agentsv1alpha1.Agent) ctrl.Result {
	ctrl.LoggerFrom(ctx).V(1).Info("waiting for a usable agent card", "agent", agent.Name)
	return ctrl.Result{RequeueAfter: cardWait}
}

// cardProblem is what the Agent's Ready condition says of its card.
func cardProblem(agent *agentsv1alpha1.Agent) string {
	for _, c := range agent.Status.Conditions {
		if c.Type == agentsv1alpha1.ConditionReady && c.Reason == agentsv1alpha1.ReasonAgentCardInvalid {
			return c.Message
		}
	}
	return fmt.Sprintf("the operator has not read the card of Agent %s for its current spec yet", agent.Name)
}

// sendFailed decides what a failed send does to its run: wait and send
// again (transport errors, 5xx, a call that ran out of time), or end it with
// a message that says what to change. A send that failed in a way a new
// card may mend asks for the Agent's card to be read again.
func (r *ExecutionReconciler) sendFailed(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, target a2a.Interface, err error, timedOutCall bool, now time.Time) (ctrl.Result, error) {
	discovered := agent.Spec.A2A.ProtocolVersion == ""
	status := 0
	var answer *a2a.Error
	if errors.As(err, &answer) {
		status = answer.StatusCode
	}
	// Not taken here: the version or binding refused, or JSON-RPC posted
	// where nothing takes it (a wrong path, or an agent that serves only
	// HTTP+JSON, which only its card can say).
	notTaken := a2a.IsVersionRefused(err) || status == http.StatusNotFound || status == http.StatusMethodNotAllowed
	if discovered && (notTaken || a2a.IsTransport(err)) {
		if r.Cards != nil {
			r.Cards.Request(types.NamespacedName{Namespace: agent.Namespace, Name: agent.Name})
		}
	}
	var refused *a2a.NotAllowedError
	switch {
	case discovered && notTaken:
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("The agent did not take A2A %s over %s at %s (%v), which its agent card lists. The operator reads the card again; if the card is wrong, fix it, or set spec.a2a.protocolVersion to the version the agent speaks over JSON-RPC at spec.a2a.url",
			target.Version, target.Binding, target.URL, err)}
	case a2a.IsVersionRefused(err):
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("The agent refused A2A %s over %s at %s (%v). Remove spec.a2a.protocolVersion so the operator reads the agent card and picks what the agent speaks, or set it to %q",
			target.Version, target.Binding, target.URL, err, otherVersion(target.Version))}
	case notTaken:
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("The agent answered %v. If it speaks A2A over HTTP+JSON or at another path, remove spec.a2a.protocolVersion so the operator reads the agent card and sends where it says; otherwise correct spec.a2a.url", err)}
	case a2a.TLSFailureOf(err) != a2a.TLSOK:
		return ctrl.Result{}, finalError{msg: tlsRefusedMessage(agent, target, err)}
	case a2a.IsRetryable(err) || timedOutCall:
		res := r.waitToRetry(run, agent, err, sendAgain, 0, now)
		ctrl.LoggerFrom(ctx).Info("sending the run failed; retrying", "error", err.Error(), "after", run.Status.Retry.NotBefore.Sub(now))
		return res, nil
	case errors.As(err, &refused):
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("The run was not sent: %v", err)}
	case (status == http.StatusUnauthorized || status == http.StatusForbidden) && tokenWithheld(agent, target):
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("The agent refused the message: %v. The token of spec.a2a.authSecretRef is sent only to spec.a2a.url's origin and path (or below it), and the agent card names %s: point spec.a2a.url at it, or set spec.a2a.protocolVersion", err, target.URL)}
	default:
		// The A2A client's errors carry what the agent said only as one short line.
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("The agent refused the message: %v", err)}
	}
}

// otherVersion is the A2A version that is not v.
func otherVersion(v a2a.Version) agentsv1alpha1.A2AProtocolVersion {
	if v == a2a.V03 {
		return agentsv1alpha1.A2AProtocolV10
	}
	return agentsv1alpha1.A2AProtocolV03
}

// tokenWithheld tells whether the Agent has a bearer token that is not sent
// to target: it goes only to spec.a2a.url's origin (scheme, host and port)
// and path, or below that path. A card says where runs go; it does not
// choose who receives the Agent's credentials: the card read at a shared
// gateway's origin may be another team's, and list an interface of
// another path of the same gateway.
func tokenWithheld(agent *agentsv1alpha1.Agent, target a2a.Interface) bool {
	return agent.Spec.A2A.AuthSecretRef != nil && !within(target.URL, agent.Spec.A2A.URL)
}

// within tells whether target has base's origin and its path is base's or
// below it ("/team-a" holds "/team-a" and "/team-a/rpc", not "/team-ab").
func within(target, base string) bool {
	if !sameOrigin(target, base) {
		return false
	}
	ut, errT := url.Parse(target)
	ub, errB := url.Parse(base)
	if errT != nil || errB != nil {
		return false
	}
	// Decoded and cleaned: "/team-a/../team-b" and "/team-a/%2e%2e/team-b"
	// are "/team-b" to the gateway.
	dir := strings.TrimSuffix(pathpkg.Clean("/"+ub.Path), "/") + "/"
	p := pathpkg.Clean("/" + ut.Path)
	return p+"/" == dir || strings.HasPrefix(p, dir)
}

// sameOrigin tells whether two URLs have one scheme, host and port.
func sameOrigin(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	return errA == nil && errB == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Hostname(), ub.Hostname()) && portOf(ua) == portOf(ub)
}

// portOf is u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}
