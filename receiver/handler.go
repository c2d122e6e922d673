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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/membership"
)

const (
	routePrefix = "/api/webhooks/"
	routeSuffix = "/receive"
)

var allowPost = []string{http.MethodPost}

// secretHeaderKey is agentsv1alpha1.SecretHeader in canonical form, for
// direct header map access.
var secretHeaderKey = http.CanonicalHeaderKey(agentsv1alpha1.SecretHeader)

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
type store interface {
	// createRun stores run and then its payload Secret; if either write
	// fails nothing remains and the error is returned. duplicate is true
	// when a run of that name exists already (the same delivery, stored at
	// the same moment through another replica): then nothing is created.
	createRun(ctx context.Context, run *agentsv1alpha1.AgentRun, body []byte) (duplicate bool, err error)
	// duplicate tells whether the run named name exists (a delivery seen
	// before). A queued run's payload is stored with body if its first
	// writer has not stored it yet, so a 202 never names a run without one.
	duplicate(ctx context.Context, namespace, name string, body []byte) (bool, error)
	// recordSkipped stores run as a skipped call with message.
	recordSkipped(ctx context.Context, run *agentsv1alpha1.AgentRun, message string) error
}

// Handler serves POST /api/webhooks/{endpointId}/receive with the checks of
// the design contract, in its order.
type Handler struct {
	table      *table
	store      store
	membership membership.Checker
	clock      clock.PassiveClock
	rand       io.Reader
	log        logr.Logger
	metrics    *metrics

	invocationLimit      int
	unauthenticatedLimit int
	invocation           *limiters
	preParse             *limiters
	backlog              *backlog
	bodies               *bodyBudget

	flagDisabled    bool
	runtimeDisabled atomic.Bool
	// pausing remembers, by endpoint UID, when a call was last recorded as
	// skipped because the owner is not a member.
	pausing sync.Map
}

// ServeHTTP answers one call and records its code and latency.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// held is what the call reserved of the body budget, given back once
	// it is answered (also if serving panics).
	var held int64
	defer func() { h.bodies.give(held) }()
	code := h.serve(w, r, &held)
	h.metrics.observe(code, time.Since(start))
}

// forget drops what the handler keeps of a deleted endpoint: its rate-limit
// windows, its share of the backlog and when it last recorded its owner as
// not a member.
func (h *Handler) forget(endpointID string, uid types.UID) {
	h.invocation.forget(endpointID)
	h.preParse.forget(endpointID)
	h.backlog.forget(uid)
	h.pausing.Delete(uid)
}

func (h *Handler) triggeringDisabled() bool {
	return h.flagDisabled || h.runtimeDisabled.Load()
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, held *int64) int {
	// Endpoint IDs are base64url and never need escaping: a path sent with
	// escapes (%2F and the like) is not the route.
	id, ok := endpointIDFromPath(r.URL.Path)
	if !ok || r.URL.RawPath != "" {
		return reject(w, answerNoRoute)
	}
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = allowPost
		return reject(w, answerMethod)
	}
	// 1. triggering disabled for the deployment
	if h.triggeringDisabled() {
		return reject(w, answerDisabled)
	}
	// 2. the endpoint, from memory
	e := h.table.lookup(id)
	if e == nil {
		if hasAnyCredential(r.Header) {
			return reject(w, answerNotFound)
		}
		return reject(w, answerUnauthorized) // the same bytes as a real endpoint's missing credential
	}
	ep, snd := e.obj, e.sender
	now := h.clock.Now()
	var body []byte
	bodyRead := false
	if ep.Spec.AllowUnauthenticated {
		// 3. pre-parse rate limit, before the body is read
		if v := h.preParse.take(id, now); !v.allowed {
			return h.rateLimited(r.Context(), w, e, nil, v, now, limitUnauthenticated, h.unauthenticatedLimit)
		}
	} else {
		// 4. the credential: a secret compared by its SHA-256 digest, or a
		// signature of the body (read first, within the size limit)
		values := snd.credentialValues(r.Header)
		if len(values) == 0 {
			return reject(w, answerUnauthorized)
		}
		if len(values) != 1 {
			return reject(w, answerForbidden)
		}
		if !snd.kind.Signed() {
			secret, ok := snd.secretOf(values[0])
			if !ok || !matchesDigest(secret, e.digests(now)...) {
				return reject(w, answerForbidden)
			}
		} else {
			var code int
			if body, code = h.readBody(w, r, held); code != 0 {
				return code
			}
			bodyRead = true
			if !snd.verify(r.Header, values[0], body, h.table.keysFor(e, now), h.clock.Now()) {
				return reject(w, answerBadSignature)
			}
		}
	}
	var c delivery
	if bodyRead {
		// handshakes of verified senders: answered, no run
		if c = snd.describe(r.Header, body); c.handshake != nil {
			return status(w, http.StatusOK, c.handshake)
		}
	}
	// 5. paused, agent, thread
	if a, ok := h.unavailable422(e); !ok {
		return reject(w, a)
	}
	// 6. size: Content-Length at once, chunked bodies while reading
	if !bodyRead {
		var code int
		if body, code = h.readBody(w, r, held); code != 0 {
			return code
		}
		c = snd.describe(r.Header, body)
		if ep.Spec.AllowUnauthenticated {
			// Anyone may call: an ID anyone can choose must not claim the
			// real sender's delivery.
			c.deliveryID = ""
		}
	}
	now = h.clock.Now() // reading the body may have taken a while
	// event filter
	if !snd.admits(c.event) {
		return status(w, http.StatusOK, answerIgnored)
	}
	// a delivery already accepted: the API server knows its run. Not while
	// the backlog cap or the rate limit would refuse the call anyway: a 429
	// costs no API request (a sender retrying after Retry-After still gets
	// its runId).
	if c.deliveryID != "" && !h.backlog.full(ep.UID, now) && !h.invocation.full(id, now) {
		runID := deliveryRunName(ep, c.deliveryID)
		if dup, err := h.store.duplicate(r.Context(), ep.Namespace, runID, body); err != nil {
			h.log.Error(err, "looking up an earlier delivery", "endpoint", ep.Namespace+"/"+ep.Name)
			return h.unavailable(w)
		} else if dup {
			h.metrics.duplicates.Inc()
			return acceptedAnswer(w, runID)
		}
	}
	// 7. the backlog cap, then the invocation rate limit. The call holds
	// its place in the backlog until its run is stored.
	bv := h.backlog.reserve(ep.UID, now)
	if !bv.allowed {
		return h.backlogFull(r.Context(), w, e, &c, bv, now)
	}
	stored := false
	defer func() {
		if !stored {
			h.backlog.release(ep.UID, bv)
		}
	}()
	if v := h.invocation.take(id, now); !v.allowed {
		return h.rateLimited(r.Context(), w, e, &c, v, now, limitInvocation, h.invocationLimit)
	}
	// 8. the owner must still be a member
	member, err := h.membership.IsMember(r.Context(), ep.Namespace, ep.Spec.AgentRef.Name, ep.Spec.Owner)
	if err != nil {
		h.log.Error(err, "checking the owner's membership", "endpoint", ep.Namespace+"/"+ep.Name)
		return h.unavailable(w)
	}
	if !member {
		return h.ownerNotMember(w, e, &c, now)
	}
	// 9. the run, then its payload
	run, err := h.newRun(e, &c, now)
	if err != nil {
		return h.unavailable(w)
	}
	if c.deliveryID != "" {
		run.Name = deliveryRunName(ep, c.deliveryID)
	}
	run.Spec.Payload = &agentsv1alpha1.PayloadReference{
		SecretName:  run.Name,
		Bytes:       int64(len(body)),
		ContentType: cut(r.Header.Get("Content-Type"), MaxContentTypeLength),
	}
	dup, err := h.store.createRun(r.Context(), run, body)
	if err != nil {
		h.log.Error(err, "storing a run", "endpoint", ep.Namespace+"/"+ep.Name)
		return h.unavailable(w)
	}
	if dup {
		h.metrics.duplicates.Inc() // the same delivery, through another replica at the same moment
	} else {
		stored = true
		h.metrics.runsCreated.Inc()
	}
	return acceptedAnswer(w, run.Name)
}

// unavailable422 checks step 5: the endpoint is not paused, its Agent is
// there and not archived, and its target thread (if any) is the Agent's.
func (h *Handler) unavailable422(e *endpoint) (answer, bool) {
	ep := e.obj
	if ep.Spec.Paused || ep.Status.Phase == agentsv1alpha1.EndpointPaused {
		return answerPaused, false
	}
	if !h.table.agentAvailable(ep.Namespace, ep.Spec.AgentRef.Name) {
		return answerNoAgent, false
	}
	if ep.Spec.ThreadStrategy == agentsv1alpha1.ContinueExisting {
		if ep.Spec.TargetThreadRef == nil {
			return answerNoThread, false
		}
		if agent, ok := h.table.threadOf(ep.Namespace, ep.Spec.TargetThreadRef.Name); !ok || agent != ep.Spec.AgentRef.Name {
			return answerNoThread, false
		}
	}
	return answer{}, true
}

// acceptedAnswer writes 202 {"runId":...,"status":"accepted"}.
func acceptedAnswer(w http.ResponseWriter, runID string) int {
	out, _ := json.Marshal(accepted{RunID: runID, Status: "accepted"})
	return status(w, http.StatusAccepted, append(out, '\n'))
}

// status writes a JSON answer that is not an error.
func status(w http.ResponseWriter, code int, body []byte) int {
	w.Header()["Content-Type"] = jsonContentType
	w.Header()["Cache-Control"] = noStore
	w.WriteHeader(code)
	_, _ = w.Write(body)
	return code
}

func reject(w http.ResponseWriter, a answer) int {
	a.write(w)
	return a.status
}

func (h *Handler) unavailable(w http.ResponseWriter) int {
	w.Header()["Retry-After"] = []string{strconv.Itoa(StoreRetryAfter)}
	return reject(w, answerUnavailable)
}

// newRun is the AgentRun for a call: a snapshot of the endpoint now. A call
// with a delivery ID that is stored as a run (not a skipped record) is named
// after it (deliveryRunName); any other by a ULID. c may be nil (a call
// refused before its body was read).
func (h *Handler) newRun(e *endpoint, c *delivery, now time.Time) (*agentsv1alpha1.AgentRun, error) {
	ep := e.obj
	ulid, err := newULID(now, h.rand)
	if err != nil {
		return nil, err
	}
	sender := &agentsv1alpha1.RunSender{Type: e.sender.kind}
	if c != nil {
		sender.Event, sender.DeliveryID = c.event, recordable(c.deliveryID, maxDeliveryIDBytes)
	}
	run := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ep.Namespace,
			Name:      runName(ep.Name, ulid),
			Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint: ep.Name,
				agentsv1alpha1.LabelAgent:    ep.Spec.AgentRef.Name,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(),
				Kind:       "WebhookEndpoint",
				Name:       ep.Name,
				UID:        ep.UID,
			}},
		},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef:      agentsv1alpha1.LocalObjectReference{Name: ep.Name},
			AgentRef:         ep.Spec.AgentRef,
			Prompt:           ep.Spec.Prompt,
			ThreadStrategy:   ep.Spec.ThreadStrategy,
			ThreadNamingHint: ep.Spec.ThreadNamingHint,
			Model:            ep.Spec.Model,
			Owner:            ep.Spec.Owner.DeepCopy(),
			Trust:            agentsv1alpha1.TrustStandard,
			Sender:           sender,
			ReceivedAt:       metav1.NewTime(now),
		},
	}
	if ep.Spec.TargetThreadRef != nil {
		ref := *ep.Spec.TargetThreadRef
		run.Spec.TargetThreadRef = &ref
		run.Labels[agentsv1alpha1.LabelThread] = ref.Name
	}
	if ep.Spec.AllowUnauthenticated {
		run.Spec.Trust = agentsv1alpha1.TrustLow
	}
	return run, nil
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
