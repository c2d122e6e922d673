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
	"io"
	"sync/atomic"
)

// bodyBudget bounds the bytes of request bodies one replica holds at once:
// a call reserves its Content-Length (MaxBodyBytes when the length is not
// known, as with chunked bodies) before its body is read, and gives it back
// when it is answered. Without it, a thousand slow 1 MiB uploads hold a
// gigabyte, whatever the rate limits.
type bodyBudget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes if they fit.
func (b *bodyBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n bytes taken before.
func (b *bodyBudget) give(n int64) {
	if n != 0 {
		b.used.Add(-n)
	}
}

// reservation is how much of the budget a body of contentLength needs.
func reservation(contentLength int64) int64 {
	if contentLength < 0 || contentLength > MaxBodyBytes {
		return MaxBodyBytes
	}
	return contentLength
}

// readBody reads the body within MaxBodyBytes and the replica's body
// budget, adding what it reserved to held; a non-zero code means the call was
// answered (413; 503 while the budget is spent; 400 for a body that could
// not be read).
func (h *Handler) readBody(c *callState, held *int64) ([]byte, int) {
	r := c.r
	if r.ContentLength > MaxBodyBytes {
		return nil, c.reject(answerTooLarge, reasonTooLarge)
	}
	n := reservation(r.ContentLength)
	if !h.bodies.take(n) {
		h.metrics.bodyBudgetFull.Inc()
		c.w.Header()["Retry-After"] = busyRetryAfter
		return nil, c.reject(answerBusy, reasonBodyBudget)
	}
	*held += n
	body, err := readBody(r.Body, r.ContentLength)
	if errors.Is(err, errTooLarge) {
		return nil, c.reject(answerTooLarge, reasonTooLarge)
	}
	if err != nil {
		// A malformed chunked body, or a client too slow to send it. If it
		// is still there it gets a JSON answer like every other.
		return nil, c.reject(answerBadBody, reasonBadBody)
	}
	return body, 0
}

var errTooLarge = errors.New("body larger than the limit")

// readBody reads at most MaxBodyBytes, failing with errTooLarge beyond. A
// body of known length is read into a buffer of that length.
func readBody(body io.Reader, contentLength int64) ([]byte, error) {
	if contentLength >= 0 && contentLength <= MaxBodyBytes {
		b := make([]byte, contentLength)
		if _, err := io.ReadFull(body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(body, MaxBodyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBodyBytes {
		return nil, errTooLarge
	}
	return b, nil
}
