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
	"errors"
	"time"

	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

// readBody reads the body within MaxBodyBytes, the endpoint's and its
// namespace's shares of the replica's body budget and the budget itself,
// adding what it took to held as the body arrives, and within
// bodyReadTimeout; a non-zero code means the call was answered (413; 503
// once a share or the budget is spent; 400 for a body that could not be
// read, or not in time).
func (h *Handler) readBody(c *callState, held *limits.BodyHold) ([]byte, int) {
	r := c.r
	if r.ContentLength > MaxBodyBytes {
		return nil, c.reject(answer.TooLarge, reasonTooLarge)
	}
	// The server's ReadTimeout counts from the first byte of the request;
	// the body gets bodyReadTimeout from here, and no deadline once it is
	// read (a deadline that passes while the run is stored would cancel
	// the call's context). net/http's ResponseWriter sets the deadline
	// itself (what http.ResponseController calls, without allocating one);
	// another one (tests) reads without.
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
		return nil, h.bodyBudgetFull(c, budgetEndpoint, answer.EndpointBusy, reasonEndpointBodyBudget)
	case limits.BudgetNamespaceFull:
		return nil, h.bodyBudgetFull(c, budgetNamespace, answer.NamespaceBusy, reasonNamespaceBodyBudget)
	case limits.BudgetReplicaFull:
		return nil, h.bodyBudgetFull(c, budgetReplica, answer.Busy, reasonBodyBudget)
	}
	if errors.Is(err, limits.ErrTooLarge) {
		return nil, c.reject(answer.TooLarge, reasonTooLarge)
	}
	if err != nil {
		// A malformed chunked body, or a client too slow to send it. If it
		// is still there it gets a JSON answer like every other.
		return nil, c.reject(answer.BadBody, reasonBadBody)
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
