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

package limits

import (
	"context"
	"sync"
	"time"
)

// slidingWindow is an exact sliding-window limiter: it remembers when each
// of the last `limit` allowed calls happened and allows a call when fewer
// than limit happened within the window before it. The timestamps grow with
// the calls, up to limit (8 bytes each), then are reused as a ring: an
// endpoint costs what it was called, never more than the flags allow, even
// with a very high limit.
type slidingWindow struct {
	mu        sync.Mutex
	limit     int
	times     []int64 // unix nanoseconds of allowed calls; a ring once len == limit
	next      int     // once full: ring position of the oldest entry (and of the next write)
	rejecting bool    // a call was rejected since the last allowed one
}

// Verdict is the outcome of one limiter check.
type Verdict struct {
	Allowed bool
	// first is true for the first rejection since the limiter last let a call through.
	First bool
	// retryAfter is, for a rejection, how long until a call would be allowed.
	RetryAfter time.Duration
}

func newSlidingWindow(limit int) *slidingWindow {
	return &slidingWindow{limit: limit}
}

// Take checks a call at now against limit calls per window and records it if allowed.
func (s *slidingWindow) take(now time.Time, window time.Duration) Verdict {
	t := now.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.times) < s.limit {
		s.times = append(s.times, t)
		s.rejecting = false
		return Verdict{Allowed: true}
	}
	oldest := s.times[s.next]
	if t-oldest < int64(window) {
		first := !s.rejecting
		s.rejecting = true
		return Verdict{First: first, RetryAfter: time.Duration(oldest + int64(window) - t)}
	}
	s.times[s.next] = t
	s.next = (s.next + 1) % len(s.times)
	s.rejecting = false
	return Verdict{Allowed: true}
}

// RetryAfterSeconds is the Retry-After value for d: whole seconds, rounded
// up, at least 1.
func RetryAfterSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		return 1
	}
	return s
}

// Local holds one sliding window per endpoint for one limit. Windows are
// created on an endpoint's first call and dropped with the endpoint.
type Local struct {
	Limit int
	mu    sync.RWMutex
	byKey map[string]*slidingWindow
}

func NewLocal(limit int) *Local {
	return &Local{Limit: limit, byKey: map[string]*slidingWindow{}}
}

// Take checks a call of endpoint key at now; the context is the shared
// store's (rateLimiter).
func (l *Local) Take(_ context.Context, key string, now time.Time) Verdict {
	l.mu.RLock()
	w := l.byKey[key]
	l.mu.RUnlock()
	if w == nil {
		l.mu.Lock()
		if w = l.byKey[key]; w == nil {
			w = newSlidingWindow(l.Limit)
			l.byKey[key] = w
		}
		l.mu.Unlock()
	}
	return w.take(now, Window)
}

// Forget drops the window of a deleted endpoint.
func (l *Local) Forget(key string) {
	l.mu.Lock()
	delete(l.byKey, key)
	l.mu.Unlock()
}

// Holds tells whether the limiter keeps a window of key.
func (l *Local) Holds(key string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	_, ok := l.byKey[key]
	return ok
}

// Len is the number of windows the limiter keeps.
func (l *Local) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.byKey)
}
