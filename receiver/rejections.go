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
	"cmp"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/answer"
	"github.com/hookrun/hookrun/receiver/senders"
)

// What the receiver keeps of the calls it refuses: one log line each, at
// rejectionLogLevel, and a count per endpoint and error code that the
// report writer (report.go) hands to the operator.

// rejectionLogLevel is the verbosity of the line logged for every refused
// call: off by default, on with --zap-log-level=debug (or 1).
const rejectionLogLevel = 1

// Why a call was refused, in a few words: the reason of its log line.
const (
	reasonNoRoute             = "not the receive route"
	reasonMethod              = "method not POST"
	reasonDisabled            = "triggering disabled"
	reasonUnknownID           = "no endpoint has this ID"
	reasonPreParseLimit       = "unauthenticated rate limit"
	reasonMissingCredential   = "missing credential header"
	reasonRepeatedCredential  = "credential header repeated"
	reasonNotBearer           = "not a Bearer token"
	reasonNoSecretYet         = "no secret generated yet"
	reasonWrongSecret         = "wrong secret"
	reasonBadSignature        = "signature mismatch"
	reasonNoSigningKey        = "signing key not available yet"
	reasonPaused              = "endpoint paused"
	reasonNoAgent             = "agent missing or archived"
	reasonNoThread            = "target thread unavailable"
	reasonTooLarge            = "body larger than 1 MiB"
	reasonBodyBudget          = "body budget of the replica spent"
	reasonEndpointBodyBudget  = "body budget share of the endpoint spent"
	reasonNamespaceBodyBudget = "body budget share of the namespace spent"
	reasonBadBody             = "body could not be read"
	reasonBacklog             = "backlog full"
	reasonInvocationLimit     = "invocation rate limit"
	reasonNotMember           = "owner not a member"
	reasonLookupFailed        = "looking up an earlier delivery failed"
	reasonMembershipFailed    = "membership check failed"
	reasonStoreFailed         = "storing the run failed"
)

// idPrefixLength is how much of an unknown endpoint ID a log line shows.
const idPrefixLength = 6

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

// rejected counts a refused call against its endpoint, if it has one, and
// logs it when rejectionLogLevel is on. With the level off nothing is
// allocated: a flood of refusals costs one map lookup each.
func (h *Handler) rejected(c *callState, status int) {
	if c.ep != nil && c.rejection.code != "" {
		h.rejections.add(c.ep, c.rejection.slot, c.now)
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
	if reason == reasonBadSignature {
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
	if len(h.table.keysFor(c.e, c.now)) == 0 {
		return reasonNoSigningKey
	}
	values := c.snd.CredentialValues(c.r.Header)
	if len(values) == 1 && !c.snd.InTolerance(c.r.Header, values[0], h.clock.Now()) {
		return senders.ReasonStaleTimestamp
	}
	return reasonBadSignature
}

// counts are an endpoint's refused calls in one period, by code slot.
type counts [answer.Slots]int64

// rejectionEntry is what a replica counted of one endpoint.
type rejectionEntry struct {
	namespace, name string
	// window is the start of the period counts belong to; previous are the
	// counts of the period before it.
	window           time.Time
	counts, previous counts
	last             time.Time
	// lastError is the newest evaluation error counted; none when its
	// time is zero.
	lastError agentsv1alpha1.ReportedError
}

// roll moves the entry to the period starting at window, if that is later
// than its own: counts become previous if window follows on directly.
func (e *rejectionEntry) roll(window time.Time) {
	if !window.After(e.window) {
		return
	}
	if window.Sub(e.window) == agentsv1alpha1.RejectionWindow {
		e.previous = e.counts
	} else {
		e.previous = counts{}
	}
	e.counts, e.window = counts{}, window
	if e.lastError.Time.Before(window.Add(-agentsv1alpha1.RejectionWindow)) {
		e.lastError = agentsv1alpha1.ReportedError{}
	}
}

// empty tells whether nothing in the entry counts any more.
func (e *rejectionEntry) empty() bool {
	return e.counts == counts{} && e.previous == counts{}
}

func (e *rejectionEntry) total() int64 {
	var n int64
	for i := range e.counts {
		n += e.counts[i] + e.previous[i]
	}
	return n
}

// rejectionCounter counts refused calls per endpoint UID, for the report.
type rejectionCounter struct {
	mu      sync.Mutex
	entries map[types.UID]*rejectionEntry
	// changed: a count changed since the last report was taken.
	changed bool
}

func newRejectionCounter() *rejectionCounter {
	return &rejectionCounter{entries: map[types.UID]*rejectionEntry{}}
}

// add counts one call to ep refused with the code of slot at now.
func (rc *rejectionCounter) add(ep *agentsv1alpha1.WebhookEndpoint, slot answer.Slot, now time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.count(ep, slot, now)
}

// addError counts one call to ep whose expression failed, with the code of
// slot at now, and keeps its error as the newest.
func (rc *rejectionCounter) addError(ep *agentsv1alpha1.WebhookEndpoint, slot answer.Slot, now time.Time,
	expr agentsv1alpha1.EvaluatedExpression, message string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e := rc.count(ep, slot, now)
	if !now.Before(e.lastError.Time) {
		e.lastError = agentsv1alpha1.ReportedError{Expression: expr, Time: now,
			Message: agentsv1alpha1.EvaluationErrorMessage(message)}
	}
}

// count counts one call, under rc.mu, and returns its endpoint's entry.
func (rc *rejectionCounter) count(ep *agentsv1alpha1.WebhookEndpoint, slot answer.Slot, now time.Time) *rejectionEntry {
	window := now.Truncate(agentsv1alpha1.RejectionWindow)
	e := rc.entries[ep.UID]
	if e == nil {
		e = &rejectionEntry{namespace: ep.Namespace, name: ep.Name, window: window}
		rc.entries[ep.UID] = e
	}
	e.roll(window)
	e.counts[slot]++
	if now.After(e.last) {
		e.last = now
	}
	rc.changed = true
	return e
}

// forget drops a deleted endpoint's counts.
func (rc *rejectionCounter) forget(uid types.UID) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := rc.entries[uid]; ok {
		delete(rc.entries, uid)
		rc.changed = true
	}
}

// reportLine is one endpoint's entry, copied out of the counter.
type reportLine struct {
	uid   types.UID
	entry rejectionEntry
}

// take returns, if a count changed since the last call, the lines of a
// report of the entries that still count at now: at most limit, shared
// between the namespaces (shareLines), those with the most refusals first.
// Entries that no longer count are dropped either way.
func (rc *rejectionCounter) take(now time.Time, limit int) ([]reportLine, bool) {
	window := now.Truncate(agentsv1alpha1.RejectionWindow)
	rc.mu.Lock()
	changed := rc.changed
	rc.changed = false
	var lines []reportLine
	for uid, e := range rc.entries {
		if e.roll(window); e.empty() {
			delete(rc.entries, uid)
		} else if changed {
			lines = append(lines, reportLine{uid: uid, entry: *e})
		}
	}
	rc.mu.Unlock()
	if !changed {
		return nil, false
	}
	return shareLines(lines, limit), true
}

// byMostRefused orders lines by their refusals, most first, then by key.
func byMostRefused(a, b reportLine) int {
	return cmp.Or(cmp.Compare(b.entry.total(), a.entry.total()), cmp.Compare(a.uid, b.uid))
}

// markChanged makes the next take report again (a report that could not be
// written).
func (rc *rejectionCounter) markChanged() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.changed = true
}

// restore takes the counts of a report this replica wrote before it
// restarted, for endpoints it has not counted since. A line of summed
// counts (othersKey) comes back as an entry without a name, which the next
// report sums into the same line again.
func (rc *rejectionCounter) restore(uid types.UID, in agentsv1alpha1.RejectionReportEntry) {
	e := &rejectionEntry{namespace: in.Namespace, name: in.Name, window: in.Window.UTC(), last: in.Last}
	if in.LastError != nil {
		e.lastError = *in.LastError
	}
	for i := range answer.Slots {
		code := answer.Slot(i).Code()
		e.counts[i], e.previous[i] = in.Counts[code], in.Previous[code]
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := rc.entries[uid]; !ok {
		rc.entries[uid] = e
	}
}

// reportEntry is the entry as a report holds it.
func (e *rejectionEntry) reportEntry() agentsv1alpha1.RejectionReportEntry {
	out := agentsv1alpha1.RejectionReportEntry{Namespace: e.namespace, Name: e.name, Window: e.window, Last: e.last}
	out.Counts, out.Previous = byCode(&e.counts), byCode(&e.previous)
	if !e.lastError.Time.IsZero() {
		out.LastError = &e.lastError
	}
	return out
}

// byCode maps the non-zero counts to their error codes; nil when there are none.
func byCode(c *counts) map[string]int64 {
	var out map[string]int64
	for i, n := range c {
		if n > 0 {
			if out == nil {
				out = map[string]int64{}
			}
			out[answer.Slot(i).Code()] = n
		}
	}
	return out
}
