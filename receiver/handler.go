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

package receiver

import (
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/senders"
)

// ServeHTTP answers one call and records its code and latency.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// held is what the call took of the body budget, given back once
	// it is answered (also if serving panics).
	var held limits.BodyHold
	defer func() { h.bodies.Give(held) }()
	c := callState{w: w, r: r, start: start}
	code := h.serve(&c, &held)
	if code >= http.StatusBadRequest {
		h.rejected(&c, code)
	}
	h.metrics.observe(code, time.Since(start))
}

// serve runs the checks of the design contract ("Check order"), one step a
// line, in that order. A step either answers the call and returns its
// status, or returns notAnswered and lets the call through to the next.
func (h *Handler) serve(c *callState, held *limits.BodyHold) int {
	if code := h.checkRoute(c); code != notAnswered { // not the route: 404; not POST: 405
		return code
	}
	if code := h.checkTriggering(c); code != notAnswered { // 1. triggering disabled: 503
		return code
	}
	if code := h.lookUpEndpoint(c); code != notAnswered { // 2. unknown endpoint: 404 or 401
		return code
	}
	if code := h.checkPreParseLimit(c); code != notAnswered { // 3. unauthenticated endpoint: 429
		return code
	}
	if code := h.checkCredential(c, held); code != notAnswered { // 4. authenticated endpoint: 401, 403 (signed: 413 first)
		return code
	}
	if code := h.answerHandshake(c); code != notAnswered { // a verified sender's handshake: 200, no run
		return code
	}
	if code := h.checkAvailable(c); code != notAnswered { // 5. paused, agent, thread: 422
		return code
	}
	if code := h.readBodyOnce(c, held); code != notAnswered { // 6. body over 1 MiB: 413
		return code
	}
	if code := h.checkDelivery(c); code != notAnswered { // no delivery its sender type takes (CloudEvents: not one 1.0 event): 400, 415
		return code
	}
	// Reading the body may have taken a while.
	c.now = h.clock.Now()
	if code := h.answerIgnoredEvent(c); code != notAnswered { // an event not in spec.sender.events: 200
		return code
	}
	if code := h.applyFilter(c); code != notAnswered { // spec.filter: false or an error 200, not compiled 422
		return code
	}
	if code := h.reserveBacklog(c); code != notAnswered { // 7. backlog cap: 429
		return code
	}
	// The call holds its place in the backlog until its run is stored.
	defer h.releaseBacklog(c)
	if code := h.checkInvocationLimit(c); code != notAnswered { // 7. invocation rate limit: 429
		return code
	}
	if code := h.evaluateFields(c); code != notAnswered { // spec.fields not compiled: 422; no evaluation slot: 503
		return code
	}
	if code := h.answerDuplicate(c); code != notAnswered { // a delivery accepted before: 202, its runId
		return code
	}
	if code := h.checkMembership(c); code != notAnswered { // 8. owner no longer a member: 422
		return code
	}
	return h.storeRun(c) // 9. the run, then its payload: 202 (503 if either write fails)
}

// forget drops what the handler keeps of a deleted endpoint: its rate-limit
// windows, its share of the backlog, when it last recorded its owner as
// not a member, and its rejection counts.
func (h *Handler) forget(endpointID string, uid types.UID) {
	h.invocation.Forget(endpointID)
	h.preParse.Forget(endpointID)
	h.backlog.Forget(uid)
	h.pausing.Delete(uid)
	h.rejections.Forget(uid)
	h.store.Forget(uid)
	h.table.Forget(uid)
}

// What the receiver keeps of the calls it refuses: one log line each, at
// rejectionLogLevel, and a count per endpoint and error code that the
// report writer (report.go) hands to the operator.

// idPrefixLength is how much of an unknown endpoint ID a log line shows.
const idPrefixLength = 6

// rejected counts a refused call against its endpoint, if it has one, and
// logs it when rejectionLogLevel is on. With the level off nothing is
// allocated: a flood of refusals costs one map lookup each.
func (h *Handler) rejected(c *callState, status int) {
	if c.ep != nil && c.rejection.code != "" {
		h.rejections.Add(c.ep, c.rejection.slot, c.now)
	}
	if log := h.log.V(rejectionLogLevel); log.Enabled() {
		h.logRejection(log, c, status)
	}
}

// logRejection writes the line of a refused call: its endpoint (an unknown
// ID only by its first characters), status, code and reason. Never the
// credential, the signature or the body.
func (h *Handler) logRejection(log logr.Logger, c *callState, status int) {
	reason := c.rejection.reason
	if reason == answer.ReasonBadSignature {
		reason = h.signatureFailure(c)
	}
	kv := []any{"status", status, "code", c.rejection.code, "reason", reason}
	switch {
	case c.ep != nil:
		kv = append(kv, "endpoint", c.ep.Namespace+"/"+c.ep.Name, "sender", c.snd.Kind)
	case c.id != "":
		kv = append(kv, "endpointIDPrefix", cut(c.id, idPrefixLength))
	}
	log.Info("refused a call", kv...)
}

// signatureFailure tells, for a signed call that failed verification, why:
// no signing key yet, a timestamp outside the tolerance, or else a
// signature that does not match. Only the log line needs it.
func (h *Handler) signatureFailure(c *callState) string {
	if len(h.table.KeysFor(c.e, c.now)) == 0 {
		return answer.ReasonNoSigningKey
	}
	values := c.snd.CredentialValues(c.r.Header)
	if len(values) == 1 && !c.snd.InTolerance(c.r.Header, values[0], h.clock.Now()) {
		return senders.ReasonStaleTimestamp
	}
	return answer.ReasonBadSignature
}
