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
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/membership"
	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/rejections"
	"github.com/hookrun/hookrun/receiver/internal/senders"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

const (
	routePrefix = "/api/webhooks/"
	routeSuffix = "/receive"
)

var allowPost = []string{http.MethodPost}

// The two rate limits, as named in metrics and skipped-run messages.
const (
	limitInvocation      = "invocation"
	limitUnauthenticated = "unauthenticated"
	// limitBacklog labels 429 backlog_full in the rate-limit metric.
	limitBacklog = "backlog"
)

// endpointIDFromPath returns {endpointId} of /api/webhooks/{endpointId}/receive.
// The ID must be non-empty and contain no slash; nothing else is accepted.
func endpointIDFromPath(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, routePrefix)
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, routeSuffix)
	if !ok || id == "" || strings.IndexByte(id, '/') >= 0 {
		return "", false
	}
	return id, true
}

// store writes what a call leaves behind in the API server.
type runStore interface {
	// createRun stores run and then its payload Secret with data (the body
	// under PayloadBodyKey, and the fields); if either write fails nothing
	// remains and the error is returned. duplicate is true when a run of
	// that name exists already (the same delivery, stored at the same
	// moment through another replica): then nothing is created.
	CreateRun(ctx context.Context, run *agentsv1alpha1.AgentRun, data map[string][]byte) (duplicate bool, err error)
	// duplicate tells whether the run named name exists (a delivery seen
	// before). A queued run's payload is stored with data if its first
	// writer has not stored it yet, so a 202 never names a run without one.
	Duplicate(ctx context.Context, namespace, name string, data map[string][]byte) (bool, error)
	// recordSkipped stores run as a skipped call with message.
	RecordSkipped(ctx context.Context, run *agentsv1alpha1.AgentRun, message string) error
	// prompt returns ep's prompt at ep's generation or later (the informer
	// keeps none), for the run of a call.
	Prompt(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, error)
	// fields returns ep's spec.fields and spec.payload at ep's generation
	// or later (the informer keeps no fields), and that generation.
	Fields(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (store.FieldsSpec, error)
	// forget drops what the store keeps of a deleted endpoint.
	Forget(uid types.UID)
}

// Handler serves POST /api/webhooks/{endpointId}/receive with the checks of
// the design contract, in its order.
type Handler struct {
	table      *endpoints.Table
	store      runStore
	membership membership.Checker
	clock      clock.PassiveClock
	rand       io.Reader
	log        logr.Logger
	metrics    *metrics
	// tracer makes the receive span of a call that stores a run.
	tracer trace.Tracer

	invocationLimit      int
	unauthenticatedLimit int
	invocation           limits.RateLimiter
	preParse             limits.RateLimiter
	backlog              *limits.Backlog
	bodies               *limits.BodyBudget
	// oidc verifies the tokens of OIDC senders, at Dependencies.TokenClock's
	// time.
	oidc *oidc.Verifier
	// filterGate bounds the evaluations of each endpoint's spec.filter.
	filterGate limits.Turns
	// bodyReadTimeout bounds reading a body (BodyReadTimeout).
	bodyReadTimeout time.Duration
	// rejections counts refused calls per endpoint for the report writer.
	rejections *rejections.Counter

	flagDisabled    bool
	runtimeDisabled atomic.Bool
	// pausing remembers, by endpoint UID, when a call was last recorded as
	// skipped because the owner is not a member.
	pausing sync.Map
}

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

func (h *Handler) triggeringDisabled() bool {
	return h.flagDisabled || h.runtimeDisabled.Load()
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

// unavailable422 checks step 5: the endpoint is not paused, its Agent is
// there and not archived, and its target thread (if any) is the Agent's.
func (h *Handler) unavailable422(e *endpoints.Endpoint) (answer.Answer, string, bool) {
	ep := e.Obj
	if ep.Spec.Paused || ep.Status.Phase == agentsv1alpha1.EndpointPaused {
		return answer.Paused, reasonPaused, false
	}
	if !h.table.AgentAvailable(ep.Namespace, ep.Spec.AgentRef.Name) {
		return answer.NoAgent, reasonNoAgent, false
	}
	if ep.Spec.ThreadStrategy == agentsv1alpha1.ContinueExisting {
		if ep.Spec.TargetThreadRef == nil {
			return answer.NoThread, reasonNoThread, false
		}
		if agent, ok := h.table.ThreadOf(ep.Namespace, ep.Spec.TargetThreadRef.Name); !ok || agent != ep.Spec.AgentRef.Name {
			return answer.NoThread, reasonNoThread, false
		}
	}
	return answer.Answer{}, "", true
}

// acceptedAnswer writes 202 {"runId":...,"status":"accepted"}.
func acceptedAnswer(w http.ResponseWriter, runID string) int {
	out, _ := json.Marshal(accepted{RunID: runID, Status: "accepted"})
	return status(w, http.StatusAccepted, append(out, '\n'))
}

// status writes a JSON answer that is not an error.
func status(w http.ResponseWriter, code int, body []byte) int {
	w.Header()["Content-Type"] = answer.JSONContentType
	w.Header()["Cache-Control"] = answer.NoStore
	w.WriteHeader(code)
	_, _ = w.Write(body)
	return code
}

func reject(w http.ResponseWriter, a answer.Answer) int {
	a.Write(w)
	return a.Status()
}

// unavailable answers 503 with Retry-After: the run could not be stored.
func (h *Handler) unavailable(c *callState, reason string) int {
	c.w.Header()["Retry-After"] = []string{strconv.Itoa(StoreRetryAfter)}
	return c.reject(answer.Unavailable, reason)
}

// newRun is the AgentRun for a call (store.NewRun) with its endpoint's
// prompt as the store reads it (the informer keeps none). d may be nil (a
// call refused before its body was read).
func (h *Handler) newRun(ctx context.Context, e *endpoints.Endpoint, d *senders.Delivery, now time.Time) (*agentsv1alpha1.AgentRun, error) {
	ulid, err := store.NewULID(now, h.rand)
	if err != nil {
		return nil, err
	}
	prompt, err := h.store.Prompt(ctx, e.Obj)
	if err != nil {
		return nil, err
	}
	return store.NewRun(e.Obj, e.Sender.Kind, prompt, d, now, ulid), nil
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
