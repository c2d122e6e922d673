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
	"errors"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// BodyBudget bounds the bytes of request bodies one replica holds at once,
// the share of them the calls of one namespace hold, and the share of that
// one endpoint's calls hold. A call takes from the budget as its body
// arrives, in the steps its buffer grows by (readBody), and gives it back
// when it is answered: a connection that announces a body and sends
// nothing holds nothing, so idle connections cannot lock an endpoint's
// real deliveries out. Without the budget, a thousand slow 1 MiB uploads
// hold a gigabyte, whatever the rate limits; without the shares, 32 slow
// uploads to one public URL, or to a few URLs of one namespace, hold the
// whole budget and every tenant on the replica gets 503.
type BodyBudget struct {
	limit int64
	// namespaceShare is what the calls of one namespace may hold: half of
	// limit, never less than one largest body.
	namespaceShare int64
	// share is what the calls of one endpoint may hold: a quarter of
	// limit, never less than one largest body.
	share int64
	// Reserve is what a namespace holding more than one largest body
	// leaves free (a quarter of limit, at least one largest body): the
	// shares are caps, and two namespaces at theirs would hold all of
	// limit. Up to one largest body, a namespace may take from it: a third
	// namespace's delivery is still read.
	reserve int64

	mu   sync.Mutex
	used int64
	// byEndpoint and byNamespace hold what each endpoint's and each
	// namespace's calls hold, with an entry only while one of them holds
	// anything: their size follows the calls in flight, not the endpoints.
	byEndpoint  map[types.UID]int64
	byNamespace map[string]int64
}

func NewBodyBudget(limit int64) *BodyBudget {
	return &BodyBudget{
		limit:          limit,
		namespaceShare: max(limit/namespaceBodyShare, maxBody),
		share:          max(limit/endpointBodyShare, maxBody),
		reserve:        max(limit/bodyReserve, maxBody),
		byEndpoint:     map[types.UID]int64{},
		byNamespace:    map[string]int64{},
	}
}

// BodyHold is what one call holds of the budget, for its endpoint.
type BodyHold struct {
	endpoint  types.UID
	namespace string
	n         int64
}

// BudgetVerdict is the outcome of take.
type BudgetVerdict uint8

const (
	BudgetTaken BudgetVerdict = iota
	// budgetEndpointFull: the endpoint's calls hold its share.
	BudgetEndpointFull
	// budgetNamespaceFull: the calls of the endpoint's namespace hold its
	// share.
	BudgetNamespaceFull
	// budgetReplicaFull: the replica holds its limit.
	BudgetReplicaFull
)

// EndpointShare is the most the calls of one endpoint hold.
func (b *BodyBudget) EndpointShare() int64 { return b.share }

// Take adds n bytes to what a call of endpoint (in namespace) holds if
// they fit in the endpoint's share, the namespace's share and the
// replica's limit, and, once the namespace holds more than one largest
// body, outside the reserve.
func (b *BodyBudget) Take(endpoint types.UID, namespace string, n int64, held *BodyHold) BudgetVerdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	mine, ours := b.byEndpoint[endpoint], b.byNamespace[namespace]
	switch {
	case mine+n > b.share:
		return BudgetEndpointFull
	case ours+n > b.namespaceShare, ours+n > maxBody && b.used+n > b.limit-b.reserve:
		return BudgetNamespaceFull
	case b.used+n > b.limit:
		return BudgetReplicaFull
	}
	b.byEndpoint[endpoint] = mine + n
	b.byNamespace[namespace] = ours + n
	b.used += n
	held.endpoint, held.namespace, held.n = endpoint, namespace, held.n+n
	return BudgetTaken
}

// Give returns what a call held.
func (b *BodyBudget) Give(held BodyHold) {
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
	if left := b.byNamespace[held.namespace] - held.n; left > 0 {
		b.byNamespace[held.namespace] = left
	} else {
		delete(b.byNamespace, held.namespace)
	}
}

// InUse returns the bytes held and the number of endpoints holding them.
func (b *BodyBudget) InUse() (int64, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, len(b.byEndpoint)
}

var ErrTooLarge = errors.New("body larger than the limit")

// firstBodyChunk is the buffer a body is first read into, taken from the
// budget once a byte of it has arrived: until then a call holds only this,
// as much as net/http holds of every connection to read its headers.
const firstBodyChunk = 4 << 10

// BodyTaker takes from the budget for one call's endpoint. A value, not a
// closure, and apart from what the call holds: held does not escape, and
// reading a body allocates nothing but the body.
type BodyTaker struct {
	Budget   *BodyBudget
	Endpoint *agentsv1alpha1.WebhookEndpoint
}

func (t BodyTaker) take(n int64, held *BodyHold) BudgetVerdict {
	return t.Budget.Take(t.Endpoint.UID, t.Endpoint.Namespace, n, held)
}

// ReadBody reads at most maxBody, failing with errTooLarge beyond, into
// a buffer that grows with what arrived: it doubles when full, up to the
// body's Content-Length (maxBody when unknown). The budget is asked
// for the buffer's capacity once the first bytes are there and for each
// growth before it is made; a verdict other than budgetTaken ends the read.
func ReadBody(body io.Reader, contentLength int64, t BodyTaker, held *BodyHold) ([]byte, BudgetVerdict, error) {
	limit := int64(maxBody)
	if contentLength >= 0 && contentLength <= maxBody {
		limit = contentLength
	}
	buf := make([]byte, 0, min(limit, firstBodyChunk))
	taken := int64(0)
	for {
		if int64(len(buf)) == limit {
			return buf, BudgetTaken, endOf(body, contentLength)
		}
		if len(buf) == cap(buf) {
			grown := min(2*int64(cap(buf)), limit)
			if v := t.take(grown-taken, held); v != BudgetTaken {
				return nil, v, nil
			}
			taken = grown
			buf = append(make([]byte, 0, grown), buf...)
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		if n > 0 && taken == 0 {
			// The first bytes arrived: the buffer they are in counts.
			if v := t.take(int64(cap(buf)), held); v != BudgetTaken {
				return nil, v, nil
			}
			taken = int64(cap(buf))
		}
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF && contentLength >= 0 && int64(len(buf)) < contentLength:
			return nil, BudgetTaken, io.ErrUnexpectedEOF
		case err == io.EOF:
			return buf, BudgetTaken, nil
		case err != nil:
			return nil, BudgetTaken, err
		}
	}
}

// endOf checks that a body whose buffer is full has ended: one of known
// length has (net/http reads no further), one of unknown length must not
// hold another byte.
func endOf(body io.Reader, contentLength int64) error {
	if contentLength >= 0 {
		return nil
	}
	var one [1]byte
	for {
		n, err := body.Read(one[:])
		switch {
		case n > 0:
			return ErrTooLarge
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
}
