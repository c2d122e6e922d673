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
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/senders"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

// The checks of serve once the body is read: what the sender says it is,
// the event and spec.filter, the backlog cap and the invocation rate limit
// (step 7), spec.fields, an earlier delivery, the owner's membership (step
// 8), and the run stored (step 9). The refusals for a limit or for
// membership record their first refusal as a skipped run.

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
		return answer.Status(c.w, http.StatusOK, answer.Ignored)
	}
	return notAnswered
}

// spec.filter: a CEL expression (controllers/filter) that decides whether a
// call that passed every check before it starts a run.

// evaluate runs a filter; tests replace it with one that blocks.
var evaluate = func(ctx context.Context, p *filter.Program, call filter.Call) (bool, error) {
	return p.Matches(ctx, call)
}

// applyFilter is the endpoint's spec.filter: a filter that does not compile
// answers 422 filter_invalid (whatever the operator's condition says);
// false, or an evaluation error (too many steps, too much memory too),
// answers 200 ignored, and the call takes nothing from the backlog or the
// invocation rate limit. Errors are counted in the rejection report and a
// metric. An evaluation the clock stopped is answered 503 with
// Retry-After (filter_timeout). Evaluations take turns (filterGate); a
// call that gets none within filterWait is answered 503 with Retry-After.
func (h *Handler) applyFilter(c *callState) int {
	if c.ep.Spec.Filter == "" {
		return notAnswered
	}
	// A filter not compiled yet (or pushed out of the cache) is compiled
	// within the endpoint's turns too: compiling a 4096-character filter
	// costs about what an evaluation does, and a tenant calling many
	// endpoints in turn would otherwise compile as fast as it calls.
	if !h.filterGate.Enter(c.r.Context(), c.ep.Namespace, c.ep.UID) {
		c.w.Header()["Retry-After"] = answer.BusyRetryAfter
		return c.reject(answer.FilterBusy, answer.ReasonFilterBusy)
	}
	matched, invalid, err := h.evaluateFilter(c)
	if invalid {
		return c.reject(answer.FilterInvalid, answer.ReasonFilterInvalid)
	}
	if errors.Is(err, filter.ErrTimeout) {
		return h.evaluationTimedOut(c)
	}
	if err != nil {
		h.metrics.filterErrors.Inc()
		h.rejections.AddError(c.ep, answer.SlotFilterError, c.now, agentsv1alpha1.ExpressionFilter, err.Error())
		if log := h.log.V(rejectionLogLevel); log.Enabled() {
			// The error names the expression's keys and types, never the body's values.
			log.Info("ignored a call", "reason", answer.ReasonFilterError, "error", err.Error(),
				"endpoint", c.ep.Namespace+"/"+c.ep.Name)
		}
	}
	if !matched {
		return answer.Status(c.w, http.StatusOK, answer.Ignored)
	}
	return notAnswered
}

// evaluateFilter compiles the endpoint's filter if it is not compiled yet
// and evaluates it on the call, in a slot taken with filterGate.enter, and
// gives the slot back (also if evaluating panics). invalid: the filter
// does not compile.
func (h *Handler) evaluateFilter(c *callState) (matched, invalid bool, err error) {
	defer h.filterGate.Leave(c.ep.Namespace, c.ep.UID)
	f := h.table.FilterOf(c.e)
	if f.Err != nil {
		return false, true, nil
	}
	matched, err = evaluate(c.r.Context(), f.Program, filter.Call{Header: c.r.Header, Event: c.d.Event, Body: c.body})
	return matched, false, err
}

// evaluationTimedOut answers a call whose evaluation the clock stopped:
// 503 with Retry-After, counted as filter_timeout.
func (h *Handler) evaluationTimedOut(c *callState) int {
	h.metrics.filterTimeouts.Inc()
	c.w.Header()["Retry-After"] = answer.BusyRetryAfter
	return c.reject(answer.FilterTimeout, answer.ReasonFilterTimeout)
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

// backlogFull answers 429 backlog_full and records the first refusal since
// the endpoint last admitted a call as a skipped run.
func (h *Handler) backlogFull(c *callState) int {
	h.metrics.rateLimited.WithLabelValues(limitBacklog).Inc()
	if v := c.bv; v.First {
		message := fmt.Sprintf("Skipped: %d runs of the endpoint are waiting to start", h.backlog.PerEndpoint)
		if v.Scope == limits.BacklogScopeAgent {
			message = fmt.Sprintf("Skipped: %d runs of Agent %s are waiting to start", h.backlog.PerAgent, c.ep.Spec.AgentRef.Name)
		}
		h.recordRefusal(c.r.Context(), c.e, &c.d, c.now, "", message+", the most the receiver queues; "+
			"further calls are rejected with 429 backlog_full and not recorded until one is let through again")
	}
	c.w.Header()["Retry-After"] = answer.BacklogRetryAfter
	return c.reject(answer.BacklogFull, answer.ReasonBacklog)
}

// checkInvocationLimit is step 7, second half: the invocation rate limit.
func (h *Handler) checkInvocationLimit(c *callState) int {
	if v := h.invocation.Take(c.r.Context(), c.id, c.now); !v.Allowed {
		return h.rateLimited(c, &c.d, v, limitInvocation, h.invocationLimit)
	}
	return notAnswered
}

// rateLimited answers 429 and records the first rejection of a window as a
// skipped run; d is the call's delivery, nil before the body is read.
func (h *Handler) rateLimited(c *callState, d *senders.Delivery, v limits.Verdict, name string, limit int) int {
	h.metrics.rateLimited.WithLabelValues(name).Inc()
	if v.First {
		h.recordRefusal(c.r.Context(), c.e, d, c.now, "", fmt.Sprintf("Skipped: the %s rate limit of %d calls per minute was exceeded; "+
			"further calls are rejected with 429 and not recorded until a call is let through again", name, limit))
	}
	c.w.Header()["Retry-After"] = []string{strconv.FormatInt(limits.RetryAfterSeconds(v.RetryAfter), 10)}
	reason := answer.ReasonInvocationLimit
	if name == limitUnauthenticated {
		reason = answer.ReasonPreParseLimit
	}
	return c.reject(answer.RateLimited, reason)
}

// spec.fields: values taken from a call once it is accepted (CEL, as the
// filter), stored beside its body in the payload Secret.

// evaluateFieldsOf evaluates compiled fields; tests replace it with one
// that blocks.
var evaluateFieldsOf = func(ctx context.Context, f *filter.Fields, call filter.Call) filter.Values {
	return f.Eval(ctx, call)
}

// evaluateFields is the step before the duplicate check for an endpoint
// with spec.fields: fields that do not compile answer 422 fields_invalid;
// otherwise they are evaluated once, within the endpoint's evaluation
// slots (as its filter is: a call that finds none within filterWait is
// answered 503 with Retry-After), on the call's headers without its
// credentials, and kept for the payload Secret. A field that fails is
// null, and the call is counted in hookrun_receiver_field_errors_total. A
// body that leaves its fields no room in the payload Secret (1 MiB for
// all of its values) is answered 413.
func (h *Handler) evaluateFields(c *callState) int {
	if len(c.ep.Spec.Fields) == 0 {
		return notAnswered
	}
	if !h.filterGate.Enter(c.r.Context(), c.ep.Namespace, c.ep.UID) {
		c.w.Header()["Retry-After"] = answer.BusyRetryAfter
		return c.reject(answer.FieldsBusy, answer.ReasonFieldsBusy)
	}
	defer h.filterGate.Leave(c.ep.Namespace, c.ep.UID)
	f, err := h.table.FieldsOf(c.r.Context(), c.e, h.store.Fields)
	if err != nil {
		h.log.Error(err, "reading an endpoint's fields", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return c.unavailable(answer.ReasonStoreFailed)
	}
	if f.Err != nil {
		return c.reject(answer.FieldsInvalid, answer.ReasonFieldsInvalid)
	}
	// Not stopped when the caller hangs up: the run is stored anyway (the
	// store's writes outlive the call), so its fields must be whole.
	v := evaluateFieldsOf(context.WithoutCancel(c.r.Context()), f.Compiled,
		filter.Call{Header: senders.WithoutCredentials(c.r.Header), Event: c.d.Event, Body: c.body})
	if v.TimedOut {
		return h.evaluationTimedOut(c)
	}
	var errs []byte
	if len(v.Errors) > 0 {
		errs, _ = json.Marshal(v.Errors) // names: identifiers
	}
	if len(c.body)+len(v.Object)+len(errs) > agentsv1alpha1.MaxPayloadBytes {
		return c.reject(answer.NoRoomForFields, answer.ReasonNoRoom)
	}
	if errs != nil {
		h.metrics.fieldErrors.Inc()
		h.rejections.AddError(c.ep, answer.SlotFieldError, c.now, agentsv1alpha1.ExpressionFields,
			fmt.Sprintf("%d of %d fields failed (%s); %s", len(v.Errors), len(f.Compiled.Names()), strings.Join(v.Errors, ", "), v.FirstError))
	}
	c.fields, c.fieldErrors, c.send = v.Object, errs, f.Payload
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
		return c.unavailable(answer.ReasonLookupFailed)
	} else if dup {
		h.metrics.duplicates.Inc()
		return answer.Accepted(c.w, runID)
	}
	return notAnswered
}

// checkMembership is step 8: the owner must still be a member.
func (h *Handler) checkMembership(c *callState) int {
	member, err := h.membership.IsMember(c.r.Context(), c.ep.Namespace, c.ep.Spec.AgentRef.Name, c.ep.Spec.Owner)
	if err != nil {
		h.log.Error(err, "checking the owner's membership", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return c.unavailable(answer.ReasonMembershipFailed)
	}
	if !member {
		return h.ownerNotMember(c)
	}
	return notAnswered
}

// ownerNotMember records the call as a skipped run labelled
// OwnerNotMember; the operator pauses the endpoint for it (the receiver
// writes no endpoint status). The record uses its own context (a caller
// hanging up must not lose what pauses the endpoint), and calls that arrive
// before the pause reaches the informer are answered without recording
// again.
func (h *Handler) ownerNotMember(c *callState) int {
	ep, now := c.ep, c.now
	if last, ok := h.pausing.Load(ep.UID); ok && now.Sub(last.(time.Time)) < pauseRecordInterval { //nolint:errcheck // only time.Time is stored
		return c.reject(answer.NotMember, answer.ReasonNotMember)
	}
	h.pausing.Store(ep.UID, now)
	ctx, cancel := context.WithTimeout(context.Background(), store.CleanupTimeout)
	defer cancel()
	h.recordRefusal(ctx, c.e, &c.d, now, agentsv1alpha1.SkipReasonOwnerNotMember, fmt.Sprintf(
		"Skipped: the endpoint's owner %s may no longer trigger Agent %s; the endpoint is paused until the owner is a member again or another member takes ownership",
		ep.Spec.Owner.UserName(), ep.Spec.AgentRef.Name))
	return c.reject(answer.NotMember, answer.ReasonNotMember)
}

// recordRefusal stores a refused call as a skipped run with message and, if
// skipReason is not empty, the label agentsv1alpha1.LabelSkipReason; a
// failure is logged, not answered (the refusal stands either way).
func (h *Handler) recordRefusal(ctx context.Context, e *endpoints.Endpoint, c *senders.Delivery, now time.Time, skipReason, message string) {
	run, err := h.newRun(ctx, e, c, now)
	if err == nil {
		if skipReason != "" {
			run.Labels[agentsv1alpha1.LabelSkipReason] = skipReason
		}
		err = h.store.RecordSkipped(ctx, run, message)
	}
	if err != nil {
		h.log.Error(err, "recording a refused call", "endpoint", e.Obj.Namespace+"/"+e.Obj.Name)
	}
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

// storeRun is step 9: the run, then its payload. It always answers, and
// is traced (the receive span).
func (h *Handler) storeRun(c *callState) (code int) {
	run, err := h.newRun(c.r.Context(), c.e, &c.d, c.now)
	if err != nil {
		h.log.Error(err, "storing a run", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return c.unavailable(answer.ReasonStoreFailed)
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
	span := tracing.StartReceive(c.r.Context(), h.tracer, c.r.Header, c.start, c.snd.Kind, !c.ep.Spec.AllowUnauthenticated, run)
	defer func() { tracing.EndReceive(span, code) }()
	dup, err := h.store.CreateRun(c.r.Context(), run, c.payloadData())
	if err != nil {
		h.log.Error(err, "storing a run", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return c.unavailable(answer.ReasonStoreFailed)
	}
	if dup {
		h.metrics.duplicates.Inc() // the same delivery, through another replica at the same moment
	} else {
		c.stored = true
		h.metrics.runsCreated.Inc()
	}
	return answer.Accepted(c.w, run.Name)
}
