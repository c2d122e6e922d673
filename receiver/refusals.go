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
	"fmt"
	"strconv"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/senders"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

// The answers that refuse a call for a limit or for membership, each
// recording its first refusal as a skipped run.

// rateLimited answers 429 and records the first rejection of a window as a
// skipped run; d is the call's delivery, nil before the body is read.
func (h *Handler) rateLimited(c *callState, d *senders.Delivery, v limits.Verdict, name string, limit int) int {
	h.metrics.rateLimited.WithLabelValues(name).Inc()
	if v.First {
		h.recordRefusal(c.r.Context(), c.e, d, c.now, "", fmt.Sprintf("Skipped: the %s rate limit of %d calls per minute was exceeded; "+
			"further calls are rejected with 429 and not recorded until a call is let through again", name, limit))
	}
	c.w.Header()["Retry-After"] = []string{strconv.FormatInt(limits.RetryAfterSeconds(v.RetryAfter), 10)}
	reason := reasonInvocationLimit
	if name == limitUnauthenticated {
		reason = reasonPreParseLimit
	}
	return c.reject(answer.RateLimited, reason)
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
	c.w.Header()["Retry-After"] = backlogRetryAfter
	return c.reject(answer.BacklogFull, reasonBacklog)
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
		return c.reject(answer.NotMember, reasonNotMember)
	}
	h.pausing.Store(ep.UID, now)
	ctx, cancel := context.WithTimeout(context.Background(), store.CleanupTimeout)
	defer cancel()
	h.recordRefusal(ctx, c.e, &c.d, now, agentsv1alpha1.SkipReasonOwnerNotMember, fmt.Sprintf(
		"Skipped: the endpoint's owner %s may no longer trigger Agent %s; the endpoint is paused until the owner is a member again or another member takes ownership",
		ep.Spec.Owner.UserName(), ep.Spec.AgentRef.Name))
	return c.reject(answer.NotMember, reasonNotMember)
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
