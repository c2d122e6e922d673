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

package senders

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // HMAC-SHA1 is what some senders sign with; chosen per endpoint.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The signature schemes of the senders that sign their calls, as pure
// functions of the headers, the body, the keys and the clock. Each takes the
// header values as sent (one value each: a repeated header never reaches
// them), tries every key it is given, and compares in constant time. They
// refuse anything malformed: a signature that is not hex or base64, a
// timestamp that is not a decimal number of seconds or lies outside the
// tolerance, more signatures than maxSignatures.

// maxSignatures bounds the signatures one header may list (Stripe and
// Standard Webhooks list one per active secret; providers send one or two).
const maxSignatures = 8

// Why a signed call is refused before its body is read (RefuteUnread), in
// the words of the receiver's log line.
const (
	ReasonMalformedSignature = "signature header malformed"
	ReasonStaleTimestamp     = "timestamp outside tolerance"
)

// maxTimestampDigits bounds a signed timestamp: ten digits last until 2286,
// and anything longer would overflow once multiplied into nanoseconds.
const maxTimestampDigits = 12

// macOf returns HMAC(key, parts...) with hash function h.
func macOf(h func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(h, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// anyKeySigns tells whether one of keys gives HMAC(key, parts) equal to
// one of sigs. Every key is tried against every signature.
func anyKeySigns(h func() hash.Hash, keys [][]byte, sigs [][]byte, parts ...[]byte) bool {
	ok := false
	for _, key := range keys {
		mac := macOf(h, key, parts...)
		for _, sig := range sigs {
			if hmac.Equal(mac, sig) {
				ok = true
			}
		}
	}
	return ok
}

// verifyGitHub checks X-Hub-Signature-256: "sha256=" and the hex
// HMAC-SHA256 of the body.
func verifyGitHub(header string, body []byte, keys [][]byte) bool {
	sig, ok := decodeHexSignature(header, "sha256=", sha256.Size)
	return ok && anyKeySigns(sha256.New, keys, [][]byte{sig}, body)
}

// hmacScheme is a generic body signature (spec.sender.hmac).
type hmacScheme struct {
	hash   func() hash.Hash
	size   int
	base64 bool
	prefix string
}

func newHMACScheme(s *agentsv1alpha1.HMACSettings) hmacScheme {
	scheme := hmacScheme{hash: sha256.New, size: sha256.Size, prefix: s.Prefix, base64: s.Encoding == agentsv1alpha1.EncodingBase64}
	switch s.Algorithm {
	case agentsv1alpha1.HMACSHA1:
		scheme.hash, scheme.size = sha1.New, sha1.Size
	case agentsv1alpha1.HMACSHA512:
		scheme.hash, scheme.size = sha512.New, sha512.Size
	}
	return scheme
}

// verify checks "<prefix><encoded HMAC(key, body)>".
func (s hmacScheme) verify(header string, body []byte, keys [][]byte) bool {
	var sig []byte
	var ok bool
	if s.base64 {
		sig, ok = decodeBase64Signature(header, s.prefix, s.size)
	} else {
		sig, ok = decodeHexSignature(header, s.prefix, s.size)
	}
	return ok && anyKeySigns(s.hash, keys, [][]byte{sig}, body)
}

// verifyStandardWebhooks checks webhook-signature: a space-separated list
// of "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>"; entries of other
// versions are skipped.
func verifyStandardWebhooks(id, timestamp, header string, body []byte, keys [][]byte, now time.Time, tolerance time.Duration) bool {
	if id == "" || !timely(timestamp, now, tolerance) {
		return false
	}
	var sigs [][]byte
	n := 0
	for entry := range strings.FieldsSeq(header) { // no slice of every entry: the header may be 32 KiB
		if n++; n > maxSignatures {
			return false
		}
		if rest, ok := strings.CutPrefix(entry, "v1,"); ok {
			if sig, ok := decodeBase64Signature(rest, "", sha256.Size); ok {
				sigs = append(sigs, sig)
			}
		}
	}
	return len(sigs) > 0 && anyKeySigns(sha256.New, keys, sigs, []byte(id), dot, []byte(timestamp), dot, body)
}

var dot = []byte{'.'}

// verifyStripe checks Stripe-Signature: "t=<unix>,v1=<hex>[,v1=<hex>...]"
// (other schemes, such as v0, are skipped), signing "t.body". Exactly one t.
func verifyStripe(header string, body []byte, keys [][]byte, now time.Time, tolerance time.Duration) bool {
	timestamp, seen := "", false
	var sigs [][]byte
	n := 0
	for pair := range strings.SplitSeq(header, ",") {
		if n++; n > 1+maxSignatures {
			return false
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return false
		}
		switch k {
		case "t":
			if seen {
				return false
			}
			timestamp, seen = v, true
		case "v1":
			if sig, ok := decodeHexSignature(v, "", sha256.Size); ok {
				sigs = append(sigs, sig)
			}
		}
	}
	if !timely(timestamp, now, tolerance) || len(sigs) == 0 {
		return false
	}
	return anyKeySigns(sha256.New, keys, sigs, []byte(timestamp), dot, body)
}

// verifySlack checks X-Slack-Signature: "v0=" and the hex
// HMAC-SHA256(key, "v0:timestamp:body"), with X-Slack-Request-Timestamp.
func verifySlack(header, timestamp string, body []byte, keys [][]byte, now time.Time, tolerance time.Duration) bool {
	if !timely(timestamp, now, tolerance) {
		return false
	}
	sig, ok := decodeHexSignature(header, "v0=", sha256.Size)
	return ok && anyKeySigns(sha256.New, keys, [][]byte{sig}, []byte("v0:"), []byte(timestamp), []byte{':'}, body)
}

// timely tells whether timestamp is decimal Unix seconds within tolerance
// of now, either way.
func timely(timestamp string, now time.Time, tolerance time.Duration) bool {
	if timestamp == "" || len(timestamp) > maxTimestampDigits {
		return false
	}
	for i := 0; i < len(timestamp); i++ {
		if timestamp[i] < '0' || timestamp[i] > '9' {
			return false
		}
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	// Seconds on both sides: 12 digits and a tolerance of at most an hour
	// cannot overflow.
	tol := int64(tolerance / time.Second)
	n := now.Unix()
	return sec >= n-tol && sec <= n+tol
}

// decodeHexSignature cuts prefix off value and decodes exactly size bytes
// of hex (either letter case).
func decodeHexSignature(value, prefix string, size int) ([]byte, bool) {
	rest, ok := strings.CutPrefix(value, prefix)
	if !ok || len(rest) != hex.EncodedLen(size) {
		return nil, false
	}
	sig, err := hex.DecodeString(rest)
	return sig, err == nil
}

// decodeBase64Signature cuts prefix off value and decodes exactly size
// bytes of standard base64 with padding.
func decodeBase64Signature(value, prefix string, size int) ([]byte, bool) {
	rest, ok := strings.CutPrefix(value, prefix)
	if !ok || len(rest) != base64.StdEncoding.EncodedLen(size) {
		return nil, false
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(rest)
	return sig, err == nil && len(sig) == size
}

// refuteUnread returns why a signed call's headers alone refute it, before
// its body is read (reasonMalformedSignature or reasonStaleTimestamp), or ""
// when only the body can tell. Malformed is what no key and no body could
// match: a signature that is not the scheme's encoding and length, a list
// with no signature of a known version or more than maxSignatures, a
// missing Standard Webhooks ID or a Stripe timestamp given twice. It never
// refutes what verify accepts (TestSenderOracles checks every accepted call
// through both, as the handler does: verifyAsHandler), and
// allocates nothing for the hex schemes.
func (s *Sender) RefuteUnread(h http.Header, signature string, now time.Time) string {
	var ok, timelyOK bool
	switch s.Kind {
	case agentsv1alpha1.SenderGitHub:
		ok, timelyOK = hexShaped(signature, "sha256=", sha256.Size), true
	case agentsv1alpha1.SenderHMAC:
		ok, timelyOK = s.hmac.hash != nil && s.hmac.shaped(signature), true
	case agentsv1alpha1.SenderStandardWebhooks:
		id, ts := single(h, hdrWebhookID), single(h, hdrWebhookTimestamp)
		if len(h[hdrWebhookSignature]) == 0 {
			id, ts = single(h, hdrSvixID), single(h, hdrSvixTimestamp)
		}
		ok, timelyOK = id != "" && standardWebhooksShaped(signature), timely(ts, now, s.tolerance)
	case agentsv1alpha1.SenderStripe:
		var ts string
		ts, ok = stripeShaped(signature)
		timelyOK = !ok || timely(ts, now, s.tolerance) // a broken header has no timestamp to speak of
	case agentsv1alpha1.SenderSlack:
		ok, timelyOK = hexShaped(signature, "v0=", sha256.Size), timely(single(h, hdrSlackTimestamp), now, s.tolerance)
	default:
		return ""
	}
	switch {
	case !timelyOK:
		return ReasonStaleTimestamp
	case !ok:
		return ReasonMalformedSignature
	}
	return ""
}

// hexShaped tells, without decoding, whether value is prefix and exactly
// size bytes of hex (decodeHexSignature would take it).
func hexShaped(value, prefix string, size int) bool {
	rest, ok := strings.CutPrefix(value, prefix)
	if !ok || len(rest) != hex.EncodedLen(size) {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !isHexDigit(rest[i]) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// shaped tells whether header is a signature this scheme could verify.
func (s hmacScheme) shaped(header string) bool {
	if s.base64 {
		_, ok := decodeBase64Signature(header, s.prefix, s.size)
		return ok
	}
	return hexShaped(header, s.prefix, s.size)
}

// standardWebhooksShaped tells whether header lists at most maxSignatures
// entries, one of them a v1 signature verifyStandardWebhooks could take.
func standardWebhooksShaped(header string) bool {
	n, found := 0, false
	for entry := range strings.FieldsSeq(header) {
		if n++; n > maxSignatures {
			return false
		}
		if rest, ok := strings.CutPrefix(entry, "v1,"); ok && !found {
			_, found = decodeBase64Signature(rest, "", sha256.Size)
		}
	}
	return found
}

// stripeShaped returns the timestamp of a Stripe-Signature header and
// whether the header is one verifyStripe could take: pairs only, one t, at
// least one v1 signature, at most 1+maxSignatures pairs.
func stripeShaped(header string) (string, bool) {
	timestamp, seen, found := "", false, false
	n := 0
	for pair := range strings.SplitSeq(header, ",") {
		if n++; n > 1+maxSignatures {
			return "", false
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return "", false
		}
		switch k {
		case "t":
			if seen {
				return "", false
			}
			timestamp, seen = v, true
		case "v1":
			found = found || hexShaped(v, "", sha256.Size)
		}
	}
	return timestamp, seen && found
}
