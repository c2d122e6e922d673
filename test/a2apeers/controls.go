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

package a2apeers

import (
	"context"
	"net/http"
	"time"
)

// What a test turns on in a running peer: answers that turn calls away
// before the SDK sees them (a status with Retry-After, a stall, a final
// refusal), and the tarpit, which answers nothing.

// trouble is how the next calls are turned away: n of them answer status
// after a wait of after, with Retry-After retryAfter if it is not empty.
type trouble struct {
	n, status  int
	retryAfter string
	after      time.Duration
}

// TurnAway makes the next n calls answer the HTTP status (503, 429, ...)
// before the agent sees them, with header Retry-After: retryAfter when it
// is not empty. It replaces what an earlier TurnAway or Stall had left.
func (p *Peer) TurnAway(n, status int, retryAfter string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trouble = trouble{n: n, status: status, retryAfter: retryAfter}
}

// Stall makes the next n calls answer 503 only after d, or as soon as
// their caller hangs up: a call that outlasts the caller's deadline. It
// replaces what an earlier TurnAway or Stall had left.
func (p *Peer) Stall(n int, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trouble = trouble{n: n, status: http.StatusServiceUnavailable, after: d}
}

// TurnAwaysLeft is how many calls the last TurnAway or Stall has still to
// turn away.
func (p *Peer) TurnAwaysLeft() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trouble.n
}

// RefuseCalls makes every call from now on answer 400, a final error.
func (p *Peer) RefuseCalls() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuseAll = true
}

// turnAway answers r as the trouble set asks, and tells whether it did.
func (p *Peer) turnAway(w http.ResponseWriter, r *http.Request) bool {
	p.mu.Lock()
	t, refuse := p.trouble, p.refuseAll
	if t.n > 0 {
		p.trouble.n--
	}
	p.mu.Unlock()
	switch {
	case t.n > 0:
		if t.after > 0 {
			select {
			case <-time.After(t.after):
			case <-r.Context().Done():
			case <-p.stop:
			}
		}
		if t.retryAfter != "" {
			w.Header().Set("Retry-After", t.retryAfter)
		}
		http.Error(w, "busy", t.status)
		return true
	case refuse:
		http.Error(w, "no", http.StatusBadRequest)
		return true
	}
	return false
}

// Tarpit makes the peer answer nothing: it holds every request open until
// its caller hangs up or the peer closes (Held counts them).
func Tarpit() Option { return func(c *config) { c.tarpit = true } }

// holding is what a tarpit holds: requests open now, the most at once, and
// those whose caller hung up.
type holding struct{ open, peak, gaveUp int }

// hold holds r open as a tarpit does.
func (p *Peer) hold(r *http.Request) {
	p.mu.Lock()
	p.holding.open++
	p.holding.peak = max(p.holding.peak, p.holding.open)
	p.mu.Unlock()
	select {
	case <-r.Context().Done():
		p.mu.Lock()
		p.holding.gaveUp++
		p.mu.Unlock()
	case <-p.stop:
	}
	p.mu.Lock()
	p.holding.open--
	p.mu.Unlock()
}

// Held tells how many requests a tarpit holds open now, the most it held
// at once, and how many of their callers hung up.
func (p *Peer) Held() (open, peak, gaveUp int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.holding.open, p.holding.peak, p.holding.gaveUp
}

// SlowWork is how long the echo agent works on a payload whose first word
// is "slow".
const SlowWork = 50 * time.Millisecond

// overlap counts the slow tasks at work, by context and in all, and the
// most there were at once.
type overlap struct {
	byContext        map[string]int
	peakContext, all int
	peakAll          int
}

// work works SlowWork (or until ctx ends) on a slow task of contextID.
func (p *Peer) work(ctx context.Context, contextID string) {
	p.mu.Lock()
	if p.overlap.byContext == nil {
		p.overlap.byContext = map[string]int{}
	}
	p.overlap.byContext[contextID]++
	p.overlap.all++
	p.overlap.peakContext = max(p.overlap.peakContext, p.overlap.byContext[contextID])
	p.overlap.peakAll = max(p.overlap.peakAll, p.overlap.all)
	p.mu.Unlock()
	select {
	case <-time.After(SlowWork):
	case <-ctx.Done():
	case <-p.stop:
	}
	p.mu.Lock()
	p.overlap.byContext[contextID]--
	p.overlap.all--
	p.mu.Unlock()
}

// Overlap is the most slow tasks the peer had at work at once: of one
// context, and in all.
func (p *Peer) Overlap() (oneContext, all int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.overlap.peakContext, p.overlap.peakAll
}

// headerKey is the context key of the HTTP header of the call a message
// came in.
type headerKey struct{}

// headerOf is the header of the call ctx serves, or nil.
func headerOf(ctx context.Context) http.Header {
	h, _ := ctx.Value(headerKey{}).(http.Header)
	return h
}
