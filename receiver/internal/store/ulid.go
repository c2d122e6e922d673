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

package store

import (
	"crypto/sha256"
	"io"
	"strings"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// crockford is the ULID alphabet (Crockford's base32, lower-cased for object names).
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewULID returns a lower-case ULID: 48 bits of milliseconds since the epoch
// and 80 random bits from rnd, 26 characters, sortable by time.
func NewULID(now time.Time, rnd io.Reader) (string, error) {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	if _, err := io.ReadFull(rnd, b[6:]); err != nil {
		return "", err
	}
	return base32Of(b), nil
}

// base32Of writes 128 bits as 26 lower-case Crockford base32 characters.
func base32Of(b [16]byte) string {
	// 128 bits → 26 base32 characters; the first holds the top 3 bits.
	var out [26]byte
	var acc uint64
	bits := 2 // 130 bits of output for 128 bits of input: pad with 2 leading zero bits
	j := 0
	for _, c := range b {
		acc = acc<<8 | uint64(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out[j] = crockford[(acc>>uint(bits))&31]
			j++
		}
	}
	return string(out[:])
}

// DeliveryRunName is the run of a call with a delivery ID: the endpoint name
// and 26 characters of SHA-256 over the endpoint's UID, the delivery ID and
// bodyDigest, the SHA-256 of the body for sender types whose delivery ID no
// signature covers (sender.bodyKeysDelivery; nil for the others, whose
// names are as before). Every replica derives the same name, so the API
// server refuses a second run for one delivery; a recreated endpoint (new
// UID) starts afresh.
func DeliveryRunName(ep *agentsv1alpha1.WebhookEndpoint, deliveryID string, bodyDigest []byte) string {
	h := sha256.New()
	h.Write([]byte(ep.UID))
	h.Write([]byte{0})
	h.Write([]byte(deliveryID))
	if bodyDigest != nil {
		h.Write([]byte{0})
		h.Write(bodyDigest)
	}
	var b [16]byte
	copy(b[:], h.Sum(nil))
	return RunName(ep.Name, base32Of(b))
}

// RunName is the AgentRun (and runId) for a call to endpoint: the endpoint
// name cut to 30 characters, a dash, and a ULID.
func RunName(endpoint, ulid string) string {
	prefix := endpoint
	if len(prefix) > runNamePrefixLength {
		prefix = prefix[:runNamePrefixLength]
	}
	prefix = strings.TrimRight(prefix, "-.")
	return prefix + "-" + ulid
}
