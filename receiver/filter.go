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

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

// spec.filter: a CEL expression (controllers/filter) that decides whether a
// call that passed every check before it starts a run.

var answerFilterInvalid = answer.New(http.StatusUnprocessableEntity, answer.CodeFilterInvalid,
	"The endpoint's spec.filter does not compile; see the endpoint's Ready condition")

var answerFilterBusy = answer.New(http.StatusServiceUnavailable, answer.CodeUnavailable,
	"The receiver is evaluating as many calls of this endpoint's spec.filter as one endpoint may; retry after the number of seconds in Retry-After")

// slotFilterError and slotFieldError are the rejection-report slots of
// codeFilterError and codeFieldError.
var (
	slotFilterError = answer.SlotOf(answer.CodeFilterError)
	slotFieldError  = answer.SlotOf(answer.CodeFieldError)
)

var answerFilterTimeout = answer.Counted(answer.New(http.StatusServiceUnavailable, answer.CodeUnavailable,
	"The receiver was too busy to finish evaluating the endpoint's spec.filter, spec.fields or claims in time; retry after the number of seconds in Retry-After"),
	answer.CodeFilterTimeout)

const (
	reasonFilterInvalid = "filter does not compile"
	reasonFilterError   = "filter evaluation failed"
	reasonFilterBusy    = "filter evaluations of the endpoint busy"
	reasonFilterTimeout = "evaluation stopped by the clock"
)

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
		return c.reject(answerFilterBusy, reasonFilterBusy)
	}
	matched, invalid, err := h.evaluateFilter(c)
	if invalid {
		return c.reject(answerFilterInvalid, reasonFilterInvalid)
	}
	if errors.Is(err, filter.ErrTimeout) {
		return h.evaluationTimedOut(c)
	}
	if err != nil {
		h.metrics.filterErrors.Inc()
		h.rejections.AddError(c.ep, slotFilterError, c.now, agentsv1alpha1.ExpressionFilter, err.Error())
		if log := h.log.V(rejectionLogLevel); log.Enabled() {
			// The error names the expression's keys and types, never the body's values.
			log.Info("ignored a call", "reason", reasonFilterError, "error", err.Error(),
				"endpoint", c.ep.Namespace+"/"+c.ep.Name)
		}
	}
	if !matched {
		return status(c.w, http.StatusOK, answerIgnored)
	}
	return notAnswered
}

// evaluationTimedOut answers a call whose evaluation the clock stopped:
// 503 with Retry-After, counted as filter_timeout.
func (h *Handler) evaluationTimedOut(c *callState) int {
	h.metrics.filterTimeouts.Inc()
	c.w.Header()["Retry-After"] = answer.BusyRetryAfter
	return c.reject(answerFilterTimeout, reasonFilterTimeout)
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
