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
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/senders"
)

// The checks of serve up to the body: steps 1 to 6 of the design
// contract's check order, and the sender's credential (a secret, a
// signature over the body, or an OIDC token and its claims). Each answers
// the call and returns its status, or returns notAnswered.

// checkRoute answers anything but POST /api/webhooks/{endpointId}/receive,
// but for the OPTIONS handshake of a CloudEvents endpoint.
// Endpoint IDs are base64url and never need escaping: a path sent with
// escapes (%2F and the like) is not the route.
func (h *Handler) checkRoute(c *callState) int {
	id, ok := endpointIDFromPath(c.r.URL.Path)
	if !ok || c.r.URL.RawPath != "" {
		return c.reject(answer.NoRoute, answer.ReasonNoRoute)
	}
	if c.r.Method != http.MethodPost {
		if c.r.Method == http.MethodOptions {
			if code := h.answerWebhookValidation(c, id); code != notAnswered { // CloudEvents abuse protection: 200
				return code
			}
		}
		c.w.Header()["Allow"] = allowPost
		return c.reject(answer.Method, answer.ReasonMethod)
	}
	c.id = id
	return notAnswered
}

// answerWebhookValidation answers the abuse-protection handshake of the
// CloudEvents HTTP webhook spec: OPTIONS with WebHook-Request-Origin to a
// CloudEvents endpoint is answered 200 with WebHook-Allowed-Origin (that
// origin), Allow: POST and WebHook-Allowed-Rate (the invocation rate limit,
// calls per minute). No credential is needed (the validation request of the
// spec carries none), nothing is read or stored: it costs one lookup in
// memory. Anything else returns notAnswered, and the caller answers 405.
func (h *Handler) answerWebhookValidation(c *callState, id string) int {
	origin := c.r.Header[senders.HeaderWebHookRequestOrigin]
	if len(origin) != 1 || origin[0] == "" {
		return notAnswered
	}
	e := h.table.Lookup(id)
	if e == nil || e.Sender.Kind != agentsv1alpha1.SenderCloudEvents {
		return notAnswered
	}
	hdr := c.w.Header()
	hdr[senders.HeaderWebHookAllowedOrigin] = origin
	hdr["Allow"] = allowPost
	hdr[senders.HeaderWebHookAllowedRate] = []string{strconv.Itoa(h.invocationLimit)}
	hdr["Cache-Control"] = answer.NoStore
	c.w.WriteHeader(http.StatusOK)
	return http.StatusOK
}

// checkTriggering is step 1: triggering disabled for the deployment.
func (h *Handler) checkTriggering(c *callState) int {
	if h.triggering.disabled() {
		return c.reject(answer.Disabled, answer.ReasonDisabled)
	}
	return notAnswered
}

// lookUpEndpoint is step 2: the endpoint, from memory.
func (h *Handler) lookUpEndpoint(c *callState) int {
	e := h.table.Lookup(c.id)
	if e == nil {
		if senders.HasAnyCredential(c.r.Header) {
			return c.reject(answer.NotFound, answer.ReasonUnknownID)
		}
		return c.reject(answer.Unauthorized, answer.ReasonUnknownID) // the same bytes as a real endpoint's missing credential
	}
	c.e, c.ep, c.snd = e, e.Obj, e.Sender
	c.now = h.clock.Now()
	return notAnswered
}

// checkPreParseLimit is step 3 for an unauthenticated endpoint: the
// pre-parse rate limit, before the body is read.
func (h *Handler) checkPreParseLimit(c *callState) int {
	if !c.ep.Spec.AllowUnauthenticated {
		return notAnswered
	}
	if v := h.preParse.Take(c.r.Context(), c.id, c.now); !v.Allowed {
		return h.rateLimited(c, nil, v, limitUnauthenticated, h.unauthenticatedLimit)
	}
	return notAnswered
}

// checkCredential is step 4 for an authenticated endpoint: a secret
// compared by its SHA-256 digest, or a signature of the body (read first,
// within the size limit).
func (h *Handler) checkCredential(c *callState, held *limits.BodyHold) int {
	if c.ep.Spec.AllowUnauthenticated {
		return notAnswered
	}
	values := c.snd.CredentialValues(c.r.Header)
	if len(values) == 0 {
		return c.reject(answer.Unauthorized, answer.ReasonMissingCredential)
	}
	if len(values) != 1 {
		return c.reject(answer.Forbidden, answer.ReasonRepeatedCredential)
	}
	if c.snd.OIDC != nil {
		return h.checkToken(c, values[0])
	}
	if !c.snd.Kind.Signed() {
		secret, ok := c.snd.SecretOf(values[0])
		switch {
		case !ok:
			return c.reject(answer.Forbidden, answer.ReasonNotBearer)
		case !senders.MatchesDigest(secret, c.e.Digests(c.now)...):
			if !c.e.HasDigest {
				return c.reject(answer.Forbidden, answer.ReasonNoSecretYet)
			}
			return c.reject(answer.Forbidden, answer.ReasonWrongSecret)
		}
		return notAnswered
	}
	// What the headers alone refute is refused before the body is read: a
	// malformed signature header, a timestamp outside the tolerance.
	if reason := c.snd.RefuteUnread(c.r.Header, values[0], c.now); reason != "" {
		return c.reject(answer.BadSignature, reason)
	}
	return h.checkSignature(c, values[0], held)
}

// checkSignature reads the body of a signed sender's call and verifies
// signature over it.
func (h *Handler) checkSignature(c *callState, signature string, held *limits.BodyHold) int {
	body, code := h.readBody(c, held)
	if code != 0 {
		return code
	}
	c.body, c.bodyRead = body, true
	if !c.snd.Verify(c.r.Header, signature, c.body, h.table.KeysFor(c.e, c.now), h.clock.Now()) {
		// The log line tells a missing key or a stale timestamp apart
		// (signatureFailure), only when it is on.
		return c.reject(answer.BadSignature, answer.ReasonBadSignature)
	}
	return notAnswered
}

// OIDC senders (spec.sender.oidc): the bearer token is a JWT verified with
// its issuer's keys, kept in memory (package oidc); no secret.

// checkToken verifies an OIDC sender's bearer token: its issuer's
// signature, iss, aud, exp and nbf; a cluster token's namespace, which must
// be the endpoint's; then spec.sender.oidc.claims. Every
// refusal is 403 forbidden, as a wrong secret's; an issuer whose keys
// cannot be read answers 503 with Retry-After (the sender may try again).
func (h *Handler) checkToken(c *callState, value string) int {
	raw, ok := c.snd.SecretOf(value)
	if !ok {
		return c.reject(answer.Forbidden, answer.ReasonNotBearer)
	}
	spec := c.snd.OIDC
	tok, err := h.oidc.Verify(c.r.Context(), spec.Issuer, spec.Audience, raw)
	switch {
	case errors.Is(err, oidc.ErrKeysUnavailable):
		// Logged once per failed read (Setup), not per call.
		return c.unavailable(answer.ReasonOIDCKeysUnavailable)
	case err != nil:
		return c.reject(answer.Forbidden, tokenRefusal(err))
	case tok.Cluster && tok.Namespace != c.ep.Namespace:
		// Any account of the cluster may ask for a token of any audience:
		// only the endpoint's namespace's accounts call it.
		return c.reject(answer.Forbidden, answer.ReasonOIDCNamespace)
	case !senders.CEString(tok.Subject):
		// sub reaches the agent's metadata outside the payload wrapper.
		return c.reject(answer.Forbidden, answer.ReasonOIDCSubject)
	}
	if spec.Claims != "" {
		if code := h.checkClaims(c, tok.Payload); code != notAnswered {
			return code
		}
	}
	c.tokenSubject = senders.Recordable(tok.Subject, senders.MaxDeliveryIDBytes)
	return notAnswered
}

// checkClaims evaluates spec.sender.oidc.claims on a verified token's
// payload, within the endpoint's evaluation slots (filterGate): anyone
// who can get a token of a listed issuer for the audience (any GitHub
// user, for GitHub's) makes it evaluate.
func (h *Handler) checkClaims(c *callState, payload []byte) int {
	// Compiled within the turn too, as filters and fields are: compiling
	// 4096 characters costs about what an evaluation does.
	if !h.filterGate.Enter(c.r.Context(), c.ep.Namespace, c.ep.UID) {
		c.w.Header()["Retry-After"] = answer.BusyRetryAfter
		return c.reject(answer.FilterBusy, answer.ReasonFilterBusy)
	}
	defer h.filterGate.Leave(c.ep.Namespace, c.ep.UID)
	claims := h.table.ClaimsOf(c.e)
	if claims.Err != nil {
		return c.reject(answer.Forbidden, answer.ReasonOIDCClaimsInvalid)
	}
	allowed, err := claims.Program.Allow(c.r.Context(), payload)
	if errors.Is(err, filter.ErrTimeout) {
		return h.evaluationTimedOut(c)
	}
	if err != nil || !allowed {
		return c.reject(answer.Forbidden, answer.ReasonOIDCClaimsRefused)
	}
	return notAnswered
}

// tokenRefusal is the reason of a refused token, for the log line.
func tokenRefusal(err error) string {
	switch {
	case errors.Is(err, oidc.ErrIssuerNotAllowed):
		return answer.ReasonOIDCIssuerNotAllowed
	case errors.Is(err, oidc.ErrAPIAudience):
		return answer.ReasonOIDCAPIAudience
	case errors.Is(err, oidc.ErrUnknownKey):
		return answer.ReasonOIDCUnknownKey
	case errors.Is(err, oidc.ErrSignature):
		return answer.ReasonOIDCSignature
	case errors.Is(err, oidc.ErrClaims):
		return answer.ReasonOIDCClaims
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return answer.ReasonOIDCGone
	}
	return answer.ReasonOIDCMalformed
}

// answerHandshake answers the handshake of a verified sender: no run.
func (h *Handler) answerHandshake(c *callState) int {
	if !c.bodyRead {
		return notAnswered
	}
	if c.d = c.snd.Describe(c.r.Header, c.body); c.d.Handshake != nil {
		return answer.Status(c.w, http.StatusOK, c.d.Handshake)
	}
	return notAnswered
}

// checkAvailable is step 5: paused, agent, thread.
func (h *Handler) checkAvailable(c *callState) int {
	if a, reason, ok := h.table.Available(c.e); !ok {
		return c.reject(a, reason)
	}
	return notAnswered
}

// readBodyOnce is step 6 for a call whose body is not read yet: its size,
// Content-Length at once, chunked bodies while reading.
func (h *Handler) readBodyOnce(c *callState, held *limits.BodyHold) int {
	if c.bodyRead {
		return notAnswered
	}
	body, code := h.readBody(c, held)
	if code != 0 {
		return code
	}
	c.body = body
	c.d = c.snd.Describe(c.r.Header, c.body)
	if c.ep.Spec.AllowUnauthenticated {
		// Anyone may call: an ID anyone can choose must not claim the
		// real sender's delivery.
		c.d.DeliveryID = ""
	}
	return notAnswered
}

// readBody reads the body within MaxBodyBytes, the endpoint's and its
// namespace's shares of the replica's body budget and the budget itself,
// adding what it took to held as the body arrives, and within
// bodyReadTimeout; a non-zero code means the call was answered (413; 503
// once a share or the budget is spent; 400 for a body that could not be
// read, or not in time).
func (h *Handler) readBody(c *callState, held *limits.BodyHold) ([]byte, int) {
	r := c.r
	if r.ContentLength > MaxBodyBytes {
		return nil, c.reject(answer.TooLarge, answer.ReasonTooLarge)
	}
	// The server's ReadTimeout counts from the first byte of the request;
	// the body gets bodyReadTimeout from here, and no deadline once it is
	// read (a deadline that passes while the run is stored would cancel
	// the call's context). net/http's ResponseWriter sets the deadline
	// itself (what http.ResponseController calls, without allocating one);
	// another one (tests) reads without. The deadline is the wall clock's,
	// not h.clock's: the kernel compares a socket deadline with real time,
	// and a test's fake clock would set it hours off.
	dl, _ := c.w.(readDeadliner)
	if dl != nil {
		_ = dl.SetReadDeadline(time.Now().Add(h.bodyReadTimeout))
	}
	body, verdict, err := limits.ReadBody(r.Body, r.ContentLength, limits.BodyTaker{Budget: h.bodies, Endpoint: c.ep}, held)
	if dl != nil {
		_ = dl.SetReadDeadline(time.Time{})
	}
	switch verdict {
	case limits.BudgetEndpointFull:
		return nil, h.bodyBudgetFull(c, budgetEndpoint, answer.EndpointBusy, answer.ReasonEndpointBodyBudget)
	case limits.BudgetNamespaceFull:
		return nil, h.bodyBudgetFull(c, budgetNamespace, answer.NamespaceBusy, answer.ReasonNamespaceBodyBudget)
	case limits.BudgetReplicaFull:
		return nil, h.bodyBudgetFull(c, budgetReplica, answer.Busy, answer.ReasonBodyBudget)
	}
	if errors.Is(err, limits.ErrTooLarge) {
		return nil, c.reject(answer.TooLarge, answer.ReasonTooLarge)
	}
	if err != nil {
		// A malformed chunked body, or a client too slow to send it. If it
		// is still there it gets a JSON answer like every other.
		return nil, c.reject(answer.BadBody, answer.ReasonBadBody)
	}
	return body, 0
}

// bodyBudgetFull answers 503 with Retry-After for a spent budget.
func (h *Handler) bodyBudgetFull(c *callState, budget string, a answer.Answer, reason string) int {
	h.metrics.bodyBudgetFull.WithLabelValues(budget).Inc()
	c.w.Header()["Retry-After"] = answer.BusyRetryAfter
	return c.reject(a, reason)
}

// readDeadliner is the ResponseWriter of net/http's server.
type readDeadliner interface {
	SetReadDeadline(deadline time.Time) error
}
