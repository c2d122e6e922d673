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

package a2a

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// An agent that answers 429 (too many requests) or 503 (unavailable) may
// say when to call again (RFC 9110 §10.2.3): in delta-seconds or as an HTTP
// date. The operator waits that long, within [MinRetryAfter, MaxRetryAfter].
const (
	// MaxRetryAfter bounds the wait an agent can ask for: a run does not
	// sit idle longer on one answer, whatever its runTimeout.
	MaxRetryAfter = 5 * time.Minute
	// MinRetryAfter is the least wait: an agent answering "Retry-After: 0"
	// to every call does not get them back to back.
	MinRetryAfter = time.Second
	// maxRetryAfterBytes bounds the header kept: an HTTP date is 29 bytes.
	maxRetryAfterBytes = 64
)

// asksToWait tells whether an answer of status may carry a Retry-After the
// operator follows.
func asksToWait(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// RetryAfter is how long err, an agent's 429 or 503, asked the caller to
// wait, seen at now; false when it asked nothing the operator can read (no
// header, or neither delta-seconds nor an HTTP date). A date in the past
// asks for MinRetryAfter; the wait is cut to [MinRetryAfter, MaxRetryAfter].
func RetryAfter(err error, now time.Time) (time.Duration, bool) {
	var e *Error
	if !errors.As(err, &e) || !asksToWait(e.StatusCode) {
		return 0, false
	}
	return ParseRetryAfter(e.RetryAfter, now)
}

// ParseRetryAfter reads a Retry-After value at now: delta-seconds or an
// HTTP date (http.ParseTime's three formats), cut to [MinRetryAfter,
// MaxRetryAfter].
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) {
			secs = int64(MaxRetryAfter / time.Second) // too large to parse is larger than the cap
		}
		d = time.Duration(secs) * time.Second
	} else {
		at, err := http.ParseTime(v)
		if err != nil {
			return 0, false
		}
		d = at.Sub(now)
	}
	return min(max(d, MinRetryAfter), MaxRetryAfter), true
}

// isDigits tells whether s is ASCII digits only (delta-seconds: no sign, no
// fraction).
func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
