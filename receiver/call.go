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
	"crypto/sha256"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
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

// What the checks of serve share: the handler, one call's state on its
// way through them, and how a refusal is answered and noted.

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

	// triggering is step 1's switch.
	triggering triggering
	// pausing remembers, by endpoint UID, when a call was last recorded as
	// skipped because the owner is not a member.
	pausing sync.Map
}

// triggering is the switch of step 1: --disable-triggering, or at run
// time the receiver's ConfigMap (ConfigMapName) with "triggering" set to
// "disabled".
type triggering struct {
	flag    bool
	runtime atomic.Bool
}

func (t *triggering) disabled() bool { return t.flag || t.runtime.Load() }

// observe sets the runtime switch from the receiver's ConfigMap.
func (t *triggering) observe(cm *corev1.ConfigMap) {
	t.runtime.Store(cm.Name == ConfigMapName && cm.Data["triggering"] == "disabled")
}

// forget turns the runtime switch back on when the receiver's ConfigMap
// is deleted.
func (t *triggering) forget(cm *corev1.ConfigMap) {
	if cm.Name == ConfigMapName {
		t.runtime.Store(false)
	}
}

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

// payloadData is what the payload Secret of the call holds: its body, and
// its fields when the endpoint names some. It is made once, for the
// duplicate check and the run's store alike.
func (c *callState) payloadData() map[string][]byte {
	if c.data != nil {
		return c.data
	}
	c.data = map[string][]byte{agentsv1alpha1.PayloadBodyKey: c.body}
	if c.fields != nil {
		c.data[agentsv1alpha1.PayloadFieldsKey] = c.fields
	}
	if c.fieldErrors != nil {
		c.data[agentsv1alpha1.PayloadFieldErrorsKey] = c.fieldErrors
	}
	return c.data
}

// rejectionLogLevel is the verbosity of the line logged for every refused
// call: off by default, on with --zap-log-level=debug (or 1).
const rejectionLogLevel = 1

// rejection is what refused a call: its answer's code and slot, and why.
type rejection struct {
	code   string
	slot   answer.Slot
	reason string
}

// reject answers the call with a, noting why for its count and log line.
func (c *callState) reject(a answer.Answer, reason string) int {
	c.rejection = rejection{code: a.Code(), slot: a.Slot(), reason: reason}
	return reject(c.w, a)
}

func reject(w http.ResponseWriter, a answer.Answer) int {
	a.Write(w)
	return a.Status()
}

// unavailable answers 503 with Retry-After: the run could not be stored.
func (c *callState) unavailable(reason string) int {
	c.w.Header()["Retry-After"] = answer.StoreRetryAfter
	return c.reject(answer.Unavailable, reason)
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
