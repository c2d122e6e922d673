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
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/senders"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

// The steps of serve, in the order it runs them. Each answers the call and
// returns its status, or returns notAnswered.

// notAnswered is what a step returns when it lets the call through.
const notAnswered = 0

// callState is one call on its way through the steps of serve: what the
// steps before have found out. What the call took of the body budget
// (held) is passed apart, to the steps that read the body: inside callState
// it would escape to the heap, one allocation more per call.
type callState struct {
	w http.ResponseWriter
	r *http.Request
	// start is when the call came in.
	start time.Time

	id  string
	e   *endpoints.Endpoint
	ep  *agentsv1alpha1.WebhookEndpoint
	snd *senders.Sender
	now time.Time

	body     []byte
	bodyRead bool
	d        senders.Delivery
	// deliveryRun names the run of the call's delivery, once known
	// (runOfDelivery).
	deliveryRun string

	// bv is the call's place in the backlog, given back unless stored.
	bv     limits.BacklogVerdict
	stored bool

	// rejection is what refused the call, if anything did (reject).
	rejection rejection

	// fields and fieldErrors are the call's spec.fields (evaluateFields):
	// the JSON object, and the names of those that failed as a JSON array;
	// nil without. send is the spec.payload read with them.
	fields, fieldErrors []byte
	send                agentsv1alpha1.PayloadMode
	// data is the payload Secret's data, once made (payloadData).
	data map[string][]byte

	// tokenSubject is the sub of an OIDC sender's verified token.
	tokenSubject string
}

// checkRoute answers anything but POST /api/webhooks/{endpointId}/receive,
// but for the OPTIONS handshake of a CloudEvents endpoint.
// Endpoint IDs are base64url and never need escaping: a path sent with
// escapes (%2F and the like) is not the route.
func (h *Handler) checkRoute(c *callState) int {
	id, ok := endpointIDFromPath(c.r.URL.Path)
	if !ok || c.r.URL.RawPath != "" {
		return c.reject(answer.NoRoute, reasonNoRoute)
	}
	if c.r.Method != http.MethodPost {
		if c.r.Method == http.MethodOptions {
			if code := h.answerWebhookValidation(c, id); code != notAnswered { // CloudEvents abuse protection: 200
				return code
			}
		}
		c.w.Header()["Allow"] = allowPost
		return c.reject(answer.Method, reasonMethod)
	}
	c.id = id
	return notAnswered
}

// checkTriggering is step 1: triggering disabled for the deployment.
func (h *Handler) checkTriggering(c *callState) int {
	if h.triggeringDisabled() {
		return c.reject(answer.Disabled, reasonDisabled)
	}
	return notAnswered
}

// lookUpEndpoint is step 2: the endpoint, from memory.
func (h *Handler) lookUpEndpoint(c *callState) int {
	e := h.table.Lookup(c.id)
	if e == nil {
		if senders.HasAnyCredential(c.r.Header) {
			return c.reject(answer.NotFound, reasonUnknownID)
		}
		return c.reject(answer.Unauthorized, reasonUnknownID) // the same bytes as a real endpoint's missing credential
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
		return c.reject(answer.Unauthorized, reasonMissingCredential)
	}
	if len(values) != 1 {
		return c.reject(answer.Forbidden, reasonRepeatedCredential)
	}
	if c.snd.OIDC != nil {
		return h.checkToken(c, values[0])
	}
	if !c.snd.Kind.Signed() {
		secret, ok := c.snd.SecretOf(values[0])
		switch {
		case !ok:
			return c.reject(answer.Forbidden, reasonNotBearer)
		case !senders.MatchesDigest(secret, c.e.Digests(c.now)...):
			if !c.e.HasDigest {
				return c.reject(answer.Forbidden, reasonNoSecretYet)
			}
			return c.reject(answer.Forbidden, reasonWrongSecret)
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
		return c.reject(answer.BadSignature, reasonBadSignature)
	}
	return notAnswered
}

// answerHandshake answers the handshake of a verified sender: no run.
func (h *Handler) answerHandshake(c *callState) int {
	if !c.bodyRead {
		return notAnswered
	}
	if c.d = c.snd.Describe(c.r.Header, c.body); c.d.Handshake != nil {
		return status(c.w, http.StatusOK, c.d.Handshake)
	}
	return notAnswered
}

// checkAvailable is step 5: paused, agent, thread.
func (h *Handler) checkAvailable(c *callState) int {
	if a, reason, ok := h.unavailable422(c.e); !ok {
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

// checkDelivery refuses a call its sender type reads as no delivery it
// takes (describe's refusal: for CloudEvents, not one 1.0 event).
func (h *Handler) checkDelivery(c *callState) int {
	if r := c.d.Refusal; r != nil {
		return c.reject(r.Answer, r.Reason)
	}
	return notAnswered
}

// answerIgnoredEvent is the event filter.
func (h *Handler) answerIgnoredEvent(c *callState) int {
	if !c.snd.Admits(c.d.Event) {
		return status(c.w, http.StatusOK, answerIgnored)
	}
	return notAnswered
}

// reserveBacklog is step 7, first half: the backlog cap. The call holds its
// place in the backlog until its run is stored (releaseBacklog).
func (h *Handler) reserveBacklog(c *callState) int {
	c.bv = h.backlog.Reserve(c.ep.UID, c.now)
	if !c.bv.Allowed {
		return h.backlogFull(c)
	}
	return notAnswered
}

// releaseBacklog gives back the place reserveBacklog took, unless the run
// was stored.
func (h *Handler) releaseBacklog(c *callState) {
	if !c.stored {
		h.backlog.Release(c.ep.UID, c.bv)
	}
}

// checkInvocationLimit is step 7, second half: the invocation rate limit.
func (h *Handler) checkInvocationLimit(c *callState) int {
	if v := h.invocation.Take(c.r.Context(), c.id, c.now); !v.Allowed {
		return h.rateLimited(c, &c.d, v, limitInvocation, h.invocationLimit)
	}
	return notAnswered
}

// answerDuplicate answers a delivery already accepted: the API server knows
// its run. It comes after the backlog cap and the invocation rate limit, so
// a duplicate answer takes one call from the endpoint's window as an
// accepted call does, and a replayed delivery at a full window is a 429
// that costs no API request (a sender retrying after Retry-After still gets
// its runId).
func (h *Handler) answerDuplicate(c *callState) int {
	if c.d.DeliveryID == "" {
		return notAnswered
	}
	runID := c.runOfDelivery()
	if dup, err := h.store.Duplicate(c.r.Context(), c.ep.Namespace, runID, c.payloadData()); err != nil {
		h.log.Error(err, "looking up an earlier delivery", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return h.unavailable(c, reasonLookupFailed)
	} else if dup {
		h.metrics.duplicates.Inc()
		return acceptedAnswer(c.w, runID)
	}
	return notAnswered
}

// checkMembership is step 8: the owner must still be a member.
func (h *Handler) checkMembership(c *callState) int {
	member, err := h.membership.IsMember(c.r.Context(), c.ep.Namespace, c.ep.Spec.AgentRef.Name, c.ep.Spec.Owner)
	if err != nil {
		h.log.Error(err, "checking the owner's membership", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return h.unavailable(c, reasonMembershipFailed)
	}
	if !member {
		return h.ownerNotMember(c)
	}
	return notAnswered
}

// storeRun is step 9: the run, then its payload. It always answers, and
// is traced (the receive span).
func (h *Handler) storeRun(c *callState) (code int) {
	run, err := h.newRun(c.r.Context(), c.e, &c.d, c.now)
	if err != nil {
		h.log.Error(err, "storing a run", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return h.unavailable(c, reasonStoreFailed)
	}
	if c.d.DeliveryID != "" {
		run.Name = c.runOfDelivery()
	}
	sum := sha256.Sum256(c.body)
	run.Spec.Payload = &agentsv1alpha1.PayloadReference{
		SecretName:  run.Name,
		Bytes:       int64(len(c.body)),
		SHA256:      hex.EncodeToString(sum[:]),
		ContentType: cut(c.r.Header.Get("Content-Type"), MaxContentTypeLength),
	}
	if c.fields != nil && c.send == agentsv1alpha1.PayloadFields {
		// Of the read that gave the fields: the informer's spec.payload
		// may be of another generation.
		run.Spec.Payload.Send = agentsv1alpha1.PayloadFields
	}
	if c.tokenSubject != "" {
		run.Spec.Sender.TokenSubject = c.tokenSubject
	}
	span := h.startReceive(c, run)
	defer func() { endReceive(span, code) }()
	dup, err := h.store.CreateRun(c.r.Context(), run, c.payloadData())
	if err != nil {
		h.log.Error(err, "storing a run", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return h.unavailable(c, reasonStoreFailed)
	}
	if dup {
		h.metrics.duplicates.Inc() // the same delivery, through another replica at the same moment
	} else {
		c.stored = true
		h.metrics.runsCreated.Inc()
	}
	return acceptedAnswer(c.w, run.Name)
}

// runOfDelivery is the run named after the call's delivery ID
// (store.DeliveryRunName), with the body's digest for the sender types whose
// delivery ID is not signed: the same ID with another body is another
// delivery.
func (c *callState) runOfDelivery() string {
	if c.deliveryRun == "" {
		var digest []byte
		if c.snd.BodyKeysDelivery {
			sum := sha256.Sum256(c.body)
			digest = sum[:]
		}
		c.deliveryRun = store.DeliveryRunName(c.ep, c.d.Identity(), digest)
	}
	return c.deliveryRun
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
