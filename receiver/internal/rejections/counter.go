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

package rejections

import (
	"cmp"
	"sync"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hookrun/hookrun/receiver/internal/answer"
)

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

// Counter counts refused calls per endpoint UID, for the report.
type Counter struct {
	mu      sync.Mutex
	entries map[types.UID]*rejectionEntry
	// changed: a count changed since the last report was taken.
	changed bool
}

func NewCounter() *Counter {
	return &Counter{entries: map[types.UID]*rejectionEntry{}}
}

// Add counts one call to ep refused with the code of slot at now.
func (rc *Counter) Add(ep *agentsv1alpha1.WebhookEndpoint, slot answer.Slot, now time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.count(ep, slot, now)
}

// AddError counts one call to ep whose expression failed, with the code of
// slot at now, and keeps its error as the newest.
func (rc *Counter) AddError(ep *agentsv1alpha1.WebhookEndpoint, slot answer.Slot, now time.Time,
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
func (rc *Counter) count(ep *agentsv1alpha1.WebhookEndpoint, slot answer.Slot, now time.Time) *rejectionEntry {
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

// Counted is how many calls to the endpoint of uid the counter holds
// refused with the code of slot in the current period.
func (rc *Counter) Counted(uid types.UID, slot answer.Slot) int64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if e, ok := rc.entries[uid]; ok {
		return e.counts[slot]
	}
	return 0
}

// Len is the number of endpoints the counter holds counts of.
func (rc *Counter) Len() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.entries)
}

// Forget drops a deleted endpoint's counts.
func (rc *Counter) Forget(uid types.UID) {
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
func (rc *Counter) take(now time.Time, limit int) ([]reportLine, bool) {
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
func (rc *Counter) markChanged() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.changed = true
}

// restore takes the counts of a report this replica wrote before it
// restarted, for endpoints it has not counted since. A line of summed
// counts (othersKey) comes back as an entry without a name, which the next
// report sums into the same line again.
func (rc *Counter) restore(uid types.UID, in agentsv1alpha1.RejectionReportEntry) {
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
