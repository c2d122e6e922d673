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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// bodyBudget bounds the bytes of request bodies one replica holds at once,
// and the share of them one endpoint's calls hold: a call reserves its
// Content-Length (MaxBodyBytes when the length is not known, as with chunked
// bodies) before its body is read, and gives it back when it is answered.
// Without it, a thousand slow 1 MiB uploads hold a gigabyte, whatever the
// rate limits; without the share, 32 slow uploads to one public URL hold the
// whole budget and every tenant on the replica gets 503.
type bodyBudget struct {
	limit int64
	// share is what the calls of one endpoint may hold: a quarter of
	// limit, never less than one largest body.
	share int64

	mu   sync.Mutex
	used int64
	// byEndpoint holds what each endpoint's calls hold, with an entry only
	// while one of them holds anything: its size follows the calls in
	// flight, not the endpoints.
	byEndpoint map[types.UID]int64
}

func newBodyBudget(limit int64) *bodyBudget {
	return &bodyBudget{limit: limit, share: max(limit/endpointBodyShare, MaxBodyBytes), byEndpoint: map[types.UID]int64{}}
}

// bodyHold is what one call holds of the budget, for its endpoint.
type bodyHold struct {
	endpoint types.UID
	n        int64
}

// budgetVerdict is the outcome of take.
type budgetVerdict uint8

const (
	budgetTaken budgetVerdict = iota
	// budgetEndpointFull: the endpoint's calls hold its share.
	budgetEndpointFull
	// budgetReplicaFull: the replica holds its limit.
	budgetReplicaFull
)

// take reserves n bytes for a call of endpoint if they fit in both the
// endpoint's share and the replica's limit, adding them to held.
func (b *bodyBudget) take(endpoint types.UID, n int64, held *bodyHold) budgetVerdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	mine := b.byEndpoint[endpoint]
	switch {
	case mine+n > b.share:
		return budgetEndpointFull
	case b.used+n > b.limit:
		return budgetReplicaFull
	}
	b.byEndpoint[endpoint] = mine + n
	b.used += n
	held.endpoint, held.n = endpoint, held.n+n
	return budgetTaken
}

// give returns what a call held.
func (b *bodyBudget) give(held bodyHold) {
	if held.n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= held.n
	if left := b.byEndpoint[held.endpoint] - held.n; left > 0 {
		b.byEndpoint[held.endpoint] = left
	} else {
		delete(b.byEndpoint, held.endpoint)
	}
}

// inUse returns the bytes held and the number of endpoints holding them.
func (b *bodyBudget) inUse() (int64, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, len(b.byEndpoint)
}

// reservation is how much of the budget a body of contentLength needs.
func reservation(contentLength int64) int64 {
	if contentLength < 0 || contentLength > MaxBodyBytes {
		return MaxBodyBytes
	}
	return contentLength
}

// readBody reads the body within MaxBodyBytes, the endpoint's share of the
// replica's body budget and the budget itself, adding what it reserved to
// held, and within bodyReadTimeout; a non-zero code means the call was
// answered (413; 503 while the endpoint's share or the budget is spent; 400
// for a body that could not be read, or not in time).
func (h *Handler) readBody(c *callState, held *bodyHold) ([]byte, int) {
	r := c.r
	if r.ContentLength > MaxBodyBytes {
		return nil, c.reject(answerTooLarge, reasonTooLarge)
	}
	switch h.bodies.take(c.ep.UID, reservation(r.ContentLength), held) {
	case budgetEndpointFull:
		h.metrics.bodyBudgetFull.WithLabelValues(budgetEndpoint).Inc()
		c.w.Header()["Retry-After"] = busyRetryAfter
		return nil, c.reject(answerEndpointBusy, reasonEndpointBodyBudget)
	case budgetReplicaFull:
		h.metrics.bodyBudgetFull.WithLabelValues(budgetReplica).Inc()
		c.w.Header()["Retry-After"] = busyRetryAfter
		return nil, c.reject(answerBusy, reasonBodyBudget)
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
	body, err := readBody(r.Body, r.ContentLength)
	if dl != nil {
		_ = dl.SetReadDeadline(time.Time{})
	}
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

// readDeadliner is the ResponseWriter of net/http's server.
type readDeadliner interface {
	SetReadDeadline(deadline time.Time) error
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
