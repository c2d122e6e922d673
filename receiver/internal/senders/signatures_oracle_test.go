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
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the generic HMAC scheme offers SHA1, and go-github accepts it.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v75/github"
	"github.com/slack-go/slack"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// hookrun's signature checks against the senders' own libraries. The library
// signs (crypto/hmac signs where the library has no signer: GitHub, Slack,
// generic HMAC), hookrun must accept exactly that, and for every way a call
// can be wrong hookrun must refuse, with the library's verdict equal to
// hookrun's. The differences hookrun intends are listed, each with its
// reason, in TestSignatureLibraryDifferences (and the one the random rounds
// meet, Stripe's future timestamps, in the Stripe scheme below).
//
// The Slack and Standard Webhooks libraries read the real clock and fix the
// tolerance at five minutes, so every round runs at time.Now() with that
// tolerance, and the timestamps it signs lie at least a minute away from the
// edges of the window (the edges themselves are checked against hookrun's own
// clock in TestSignatureTimely).

var oracleSeed = flag.Uint64("oracle-seed", 20261122, "seed of the random bodies and secrets of TestSenderOracles")

const (
	// oracleRounds is the number of random bodies and secrets per scheme.
	oracleRounds = 300
	// oracleTolerance is the libraries' fixed window, given to hookrun too.
	oracleTolerance = 5 * time.Minute
)

// oracleRand returns the random source of t: the seed and t's name pick
// the stream, and the seed is printed if t fails.
func oracleRand(t testing.TB) *rand.Rand {
	seed := *oracleSeed
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random rounds from -oracle-seed=%d", seed)
		}
	})
	name := fnv.New64a()
	name.Write([]byte(t.Name()))
	return rand.New(rand.NewPCG(seed, name.Sum64()))
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

const alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomText(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// randomBody is empty, JSON as senders send it, binary, and now and then
// about a mebibyte.
func randomBody(r *rand.Rand) []byte {
	switch n := r.IntN(64); {
	case n == 0:
		return nil
	case n == 1:
		return []byte{}
	case n == 2:
		return randomBytes(r, 1<<20+r.IntN(4096))
	case n < 24:
		return []byte(`{"id":"evt_` + randomText(r, alphanumeric, 24) + `","type":"` +
			randomText(r, "abcdefghijklmnopqrstuvwxyz._", 1+r.IntN(30)) + `","data":{"n":` + strconv.Itoa(r.Int()) + `}}`)
	default:
		return randomBytes(r, r.IntN(2048))
	}
}

// tampered returns body with one bit flipped, or a byte added to an empty body.
func tampered(r *rand.Rand, body []byte) []byte {
	if len(body) == 0 {
		return []byte{byte(r.Uint32())}
	}
	b := bytes.Clone(body)
	b[r.IntN(len(b))] ^= 1 << r.IntN(8)
	return b
}

// withHeader returns a copy of h with header k set to v ("" deletes it).
func withHeader(h http.Header, k, v string) http.Header {
	c := h.Clone()
	if v == "" {
		c.Del(k)
	} else {
		c.Set(k, v)
	}
	return c
}

// verifyAsHandler checks a signed call as the handler does: exactly one
// value of the sender's credential header, what the headers alone refute
// (before the body is read), then sender.verify. Every call an oracle
// accepts must pass both: refuteUnread never refuses what verify accepts.
func verifyAsHandler(s *Sender, h http.Header, body []byte, keys [][]byte, now time.Time) bool {
	values := s.CredentialValues(h)
	if len(values) != 1 {
		return false
	}
	return s.RefuteUnread(h, values[0], now) == "" && s.Verify(h, values[0], body, keys, now)
}

func senderOf(kind agentsv1alpha1.SenderType, settings *agentsv1alpha1.HMACSettings) *Sender {
	return New(&agentsv1alpha1.WebhookEndpointSpec{Sender: &agentsv1alpha1.Sender{Type: kind, HMAC: settings}})
}

func hmacOf(h func() hash.Hash, key []byte, content ...[]byte) []byte {
	m := hmac.New(h, key)
	for _, c := range content {
		m.Write(c)
	}
	return m.Sum(nil)
}

// oracleScheme is one sender type as the differential rounds drive it.
type oracleScheme struct {
	sender *Sender
	// newSecret returns a secret as the provider issues it.
	newSecret func(r *rand.Rand) string
	// key is the key hookrun is given for secret.
	key func(secret string) []byte
	// sign returns the headers of a call signed with secret at ts.
	sign func(r *rand.Rand, body []byte, secret string, ts time.Time) http.Header
	// library is the library's verdict on a call, for one secret.
	library func(h http.Header, body []byte, secret string) bool
	// signature is the header that carries the signature; required lists
	// every header the scheme needs.
	signature string
	required  []string
	// timestamped schemes refuse stale and future timestamps.
	timestamped bool
	// libraryAcceptsFuture: the library accepts a timestamp beyond the
	// tolerance in the future (hookrun never does).
	libraryAcceptsFuture bool
	// extra returns the scheme's own cases for one round.
	extra func(r *rand.Rand, body []byte, secret, other string, ts time.Time) []oracleCase
}

// oracleCase is one call: hookrun holds the keys of secrets; the library
// tries each secret and accepts if one verifies.
type oracleCase struct {
	name    string
	h       http.Header
	body    []byte
	secrets []string
	// want is hookrun's verdict; library is the library's, which differs
	// only where a comment says why.
	want, library bool
}

func runOracle(t *testing.T, s oracleScheme) {
	r := oracleRand(t)
	for round := range oracleRounds {
		now := time.Now()
		body := randomBody(r)
		switch round {
		case 0:
			body = randomBytes(r, 1<<20)
		case 1:
			body = nil
		}
		secret, other := s.newSecret(r), s.newSecret(r)
		ts := now
		if s.timestamped {
			ts = now.Add(time.Duration(r.Int64N(int64(8*time.Minute))) - 4*time.Minute)
		}
		signed := s.sign(r, body, secret, ts)
		sig := signed.Get(s.signature)
		cases := []oracleCase{
			{name: "signed by the library", h: signed, body: body, secrets: []string{secret}, want: true, library: true},
			{name: "tampered body", h: signed, body: tampered(r, body), secrets: []string{secret}},
			{name: "byte appended to the body", h: signed, body: append(bytes.Clone(body), '\n'), secrets: []string{secret}},
			{name: "wrong key", h: signed, body: body, secrets: []string{other}},
			{name: "signed with another endpoint's key", h: s.sign(r, body, other, ts), body: body, secrets: []string{secret}},
			{name: "signature truncated by one", h: withHeader(signed, s.signature, sig[:len(sig)-1]), body: body, secrets: []string{secret}},
			{name: "signature truncated by two", h: withHeader(signed, s.signature, sig[:len(sig)-2]), body: body, secrets: []string{secret}},
			{name: "signature extended by 0", h: withHeader(signed, s.signature, sig+"0"), body: body, secrets: []string{secret}},
			{name: "signature extended by 00", h: withHeader(signed, s.signature, sig+"00"), body: body, secrets: []string{secret}},
			{name: "signature extended by AAAA", h: withHeader(signed, s.signature, sig+"AAAA"), body: body, secrets: []string{secret}},
			// Rotation: during the overlap hookrun holds [previous, current].
			{name: "rotation: previous key, both held", h: signed, body: body, secrets: []string{secret, other}, want: true, library: true},
			{name: "rotation: current key, both held", h: s.sign(r, body, other, ts), body: body, secrets: []string{secret, other}, want: true, library: true},
			{name: "rotation: previous key after the overlap", h: signed, body: body, secrets: []string{other}},
		}
		for _, k := range s.required {
			cases = append(cases, oracleCase{name: "missing " + k, h: withHeader(signed, k, ""), body: body, secrets: []string{secret}})
		}
		if s.timestamped {
			stale := now.Add(-oracleTolerance - time.Minute - time.Duration(r.Int64N(int64(time.Hour))))
			future := now.Add(oracleTolerance + time.Minute + time.Duration(r.Int64N(int64(time.Hour))))
			cases = append(cases,
				oracleCase{name: "stale timestamp", h: s.sign(r, body, secret, stale), body: body, secrets: []string{secret}},
				oracleCase{name: "future timestamp", h: s.sign(r, body, secret, future), body: body, secrets: []string{secret}, library: s.libraryAcceptsFuture},
			)
		}
		if s.extra != nil {
			cases = append(cases, s.extra(r, body, secret, other, ts)...)
		}
		for _, c := range cases {
			keys := make([][]byte, len(c.secrets))
			lib := false
			for i, secret := range c.secrets {
				keys[i] = s.key(secret)
				lib = lib || s.library(c.h, c.body, secret)
			}
			got := verifyAsHandler(s.sender, c.h, c.body, keys, now)
			if got != c.want || lib != c.library {
				t.Fatalf("round %d, %s: hookrun %v (want %v), library %v (want %v)\nheaders %q\nbody of %d bytes, secrets %q",
					round, c.name, got, c.want, lib, c.library, c.h, len(c.body), c.secrets)
			}
		}
	}
}

// githubScheme: go-github has no signer; crypto/hmac signs, in either
// letter case, and go-github verifies (ValidateSignature and
// ValidatePayloadFromBody must agree).
func githubScheme() oracleScheme {
	return oracleScheme{
		sender:    senderOf(agentsv1alpha1.SenderGitHub, nil),
		newSecret: func(r *rand.Rand) string { return string(randomBytes(r, 1+r.IntN(64))) },
		key:       func(secret string) []byte { return []byte(secret) },
		sign: func(r *rand.Rand, body []byte, secret string, _ time.Time) http.Header {
			sig := hex.EncodeToString(hmacOf(sha256.New, []byte(secret), body))
			if r.IntN(4) == 0 {
				sig = strings.ToUpper(sig)
			}
			return http.Header{github.SHA256SignatureHeader: {"sha256=" + sig}}
		},
		library:   githubLibrary,
		signature: github.SHA256SignatureHeader,
		required:  []string{github.SHA256SignatureHeader},
	}
}

func githubLibrary(h http.Header, body []byte, secret string) bool {
	sig := h.Get(github.SHA256SignatureHeader)
	validated := github.ValidateSignature(sig, body, []byte(secret)) == nil
	payload, err := github.ValidatePayloadFromBody("application/json", bytes.NewReader(body), sig, []byte(secret))
	if fromBody := err == nil && bytes.Equal(payload, body); fromBody != validated {
		panic("go-github's ValidateSignature and ValidatePayloadFromBody disagree")
	}
	return validated
}

func stripeScheme() oracleScheme {
	return oracleScheme{
		sender:    senderOf(agentsv1alpha1.SenderStripe, nil),
		newSecret: func(r *rand.Rand) string { return "whsec_" + randomText(r, alphanumeric, 32) },
		key:       func(secret string) []byte { return []byte(secret) },
		sign: func(_ *rand.Rand, body []byte, secret string, ts time.Time) http.Header {
			p := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: ts})
			return http.Header{"Stripe-Signature": {p.Header}}
		},
		library: func(h http.Header, body []byte, secret string) bool {
			return stripewebhook.ValidatePayloadWithTolerance(body, h.Get("Stripe-Signature"), secret, oracleTolerance) == nil
		},
		signature:   "Stripe-Signature",
		required:    []string{"Stripe-Signature"},
		timestamped: true,
		// Intended difference: stripe-go refuses only timestamps older than
		// the tolerance; hookrun also refuses those more than the tolerance
		// in the future (a sender's clock that far ahead, or a signature
		// made for later, is not a call of now), as DESIGN.md section 8 says
		// of every timestamped scheme.
		libraryAcceptsFuture: true,
		extra: func(r *rand.Rand, body []byte, secret, other string, ts time.Time) []oracleCase {
			t := strconv.FormatInt(ts.Unix(), 10)
			mine := hex.EncodeToString(stripewebhook.ComputeSignature(ts, body, secret))
			theirs := hex.EncodeToString(stripewebhook.ComputeSignature(ts, body, other))
			v0 := hex.EncodeToString(randomBytes(r, 32))
			return []oracleCase{
				// Stripe lists one v1 per active secret while a secret rolls.
				{name: "v1 of another secret, then ours", h: http.Header{"Stripe-Signature": {"t=" + t + ",v1=" + theirs + ",v1=" + mine}}, body: body, secrets: []string{secret}, want: true, library: true},
				{name: "v1 of another secret only", h: http.Header{"Stripe-Signature": {"t=" + t + ",v1=" + theirs}}, body: body, secrets: []string{secret}},
				{name: "test-mode v0 entry after v1", h: http.Header{"Stripe-Signature": {"t=" + t + ",v1=" + mine + ",v0=" + v0}}, body: body, secrets: []string{secret}, want: true, library: true},
				{name: "our signature only as v0", h: http.Header{"Stripe-Signature": {"t=" + t + ",v0=" + mine}}, body: body, secrets: []string{secret}},
				{name: "timestamp other than the signed one", h: http.Header{"Stripe-Signature": {"t=" + strconv.FormatInt(ts.Unix()+1, 10) + ",v1=" + mine}}, body: body, secrets: []string{secret}},
				{name: "no timestamp", h: http.Header{"Stripe-Signature": {"v1=" + mine}}, body: body, secrets: []string{secret}},
			}
		},
	}
}

func standardWebhooksScheme() oracleScheme {
	return oracleScheme{
		sender: senderOf(agentsv1alpha1.SenderStandardWebhooks, nil),
		newSecret: func(r *rand.Rand) string {
			return agentsv1alpha1.StandardWebhooksSecretPrefix + base64.StdEncoding.EncodeToString(randomBytes(r, 24+r.IntN(41)))
		},
		// hookrun is given the base64-decoded part after whsec_.
		key: func(secret string) []byte {
			key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, agentsv1alpha1.StandardWebhooksSecretPrefix))
			if err != nil {
				panic(err)
			}
			return key
		},
		sign: func(r *rand.Rand, body []byte, secret string, ts time.Time) http.Header {
			id := "msg_" + randomText(r, alphanumeric, 27)
			sig, err := mustWebhook(secret).Sign(id, ts, body)
			if err != nil {
				panic(err)
			}
			return http.Header{
				http.CanonicalHeaderKey(standardwebhooks.HeaderWebhookID):        {id},
				http.CanonicalHeaderKey(standardwebhooks.HeaderWebhookTimestamp): {strconv.FormatInt(ts.Unix(), 10)},
				http.CanonicalHeaderKey(standardwebhooks.HeaderWebhookSignature): {sig},
			}
		},
		library: func(h http.Header, body []byte, secret string) bool {
			return mustWebhook(secret).Verify(body, h) == nil
		},
		signature:   http.CanonicalHeaderKey(standardwebhooks.HeaderWebhookSignature),
		required:    []string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"},
		timestamped: true,
		extra: func(r *rand.Rand, body []byte, secret, other string, ts time.Time) []oracleCase {
			signed := standardWebhooksHeaders(r, body, secret, ts)
			id, t := signed.Get("Webhook-Id"), signed.Get("Webhook-Timestamp")
			mine, theirs := standardWebhooksSignature(secret, id, t, body), standardWebhooksSignature(other, id, t, body)
			return []oracleCase{
				// A sender lists one signature per active secret while one rolls.
				{name: "another secret's signature, then ours", h: withHeader(signed, "Webhook-Signature", "v1,"+theirs+" v1,"+mine), body: body, secrets: []string{secret}, want: true, library: true},
				{name: "another secret's signature only", h: withHeader(signed, "Webhook-Signature", "v1,"+theirs), body: body, secrets: []string{secret}},
				{name: "an unknown version, then ours", h: withHeader(signed, "Webhook-Signature", "v1a,"+base64.StdEncoding.EncodeToString(randomBytes(r, 64))+" v1,"+mine), body: body, secrets: []string{secret}, want: true, library: true},
				{name: "our signature under another version", h: withHeader(signed, "Webhook-Signature", "v2,"+mine), body: body, secrets: []string{secret}},
				{name: "another message ID", h: withHeader(signed, "Webhook-Id", id+"x"), body: body, secrets: []string{secret}},
				{name: "another timestamp", h: withHeader(signed, "Webhook-Timestamp", strconv.FormatInt(ts.Unix()+1, 10)), body: body, secrets: []string{secret}},
			}
		},
	}
}

func mustWebhook(secret string) *standardwebhooks.Webhook {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		panic(err)
	}
	return wh
}

func standardWebhooksHeaders(r *rand.Rand, body []byte, secret string, ts time.Time) http.Header {
	return standardWebhooksScheme().sign(r, body, secret, ts)
}

// standardWebhooksSignature is the base64 signature of id.t.body, made by
// crypto/hmac with the decoded key.
func standardWebhooksSignature(secret, id, t string, body []byte) string {
	key := standardWebhooksScheme().key(secret)
	return base64.StdEncoding.EncodeToString(hmacOf(sha256.New, key, []byte(id+"."+t+"."), body))
}

// slackScheme: slack-go has no signer; crypto/hmac signs and slack-go's
// SecretsVerifier verifies.
func slackScheme() oracleScheme {
	return oracleScheme{
		sender:    senderOf(agentsv1alpha1.SenderSlack, nil),
		newSecret: func(r *rand.Rand) string { return randomText(r, "0123456789abcdef", 32) },
		key:       func(secret string) []byte { return []byte(secret) },
		sign: func(_ *rand.Rand, body []byte, secret string, ts time.Time) http.Header {
			t := strconv.FormatInt(ts.Unix(), 10)
			return http.Header{
				"X-Slack-Request-Timestamp": {t},
				"X-Slack-Signature":         {slackSignature(secret, t, body)},
			}
		},
		library:     slackLibrary,
		signature:   "X-Slack-Signature",
		required:    []string{"X-Slack-Signature", "X-Slack-Request-Timestamp"},
		timestamped: true,
		extra: func(_ *rand.Rand, body []byte, secret, _ string, ts time.Time) []oracleCase {
			h := slackScheme().sign(nil, body, secret, ts)
			return []oracleCase{
				{name: "another timestamp", h: withHeader(h, "X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix()+1, 10)), body: body, secrets: []string{secret}},
				{name: "upper-case hex", h: withHeader(h, "X-Slack-Signature", "v0="+strings.ToUpper(strings.TrimPrefix(h.Get("X-Slack-Signature"), "v0="))), body: body, secrets: []string{secret}, want: true, library: true},
				{name: "another version", h: withHeader(h, "X-Slack-Signature", "v1="+strings.TrimPrefix(h.Get("X-Slack-Signature"), "v0=")), body: body, secrets: []string{secret}},
			}
		},
	}
}

func slackSignature(secret, t string, body []byte) string {
	return "v0=" + hex.EncodeToString(hmacOf(sha256.New, []byte(secret), []byte("v0:"+t+":"), body))
}

func slackLibrary(h http.Header, body []byte, secret string) bool {
	sv, err := slack.NewSecretsVerifier(h, secret)
	if err != nil {
		return false
	}
	if _, err := sv.Write(body); err != nil {
		return false
	}
	return sv.Ensure() == nil
}

// hmacScheme: crypto/hmac signs, and the oracle is the definition: the
// header is the prefix and the encoded HMAC (hex in either letter case).
func genericHMACScheme(settings agentsv1alpha1.HMACSettings) oracleScheme {
	h := map[agentsv1alpha1.HMACAlgorithm]func() hash.Hash{
		agentsv1alpha1.HMACSHA1: sha1.New, agentsv1alpha1.HMACSHA256: sha256.New, agentsv1alpha1.HMACSHA512: sha512.New,
	}[settings.Algorithm]
	encode := func(mac []byte) string {
		if settings.Encoding == agentsv1alpha1.EncodingBase64 {
			return base64.StdEncoding.EncodeToString(mac)
		}
		return hex.EncodeToString(mac)
	}
	return oracleScheme{
		sender:    senderOf(agentsv1alpha1.SenderHMAC, &settings),
		newSecret: func(r *rand.Rand) string { return string(randomBytes(r, 1+r.IntN(128))) },
		key:       func(secret string) []byte { return []byte(secret) },
		sign: func(r *rand.Rand, body []byte, secret string, _ time.Time) http.Header {
			sig := encode(hmacOf(h, []byte(secret), body))
			if settings.Encoding != agentsv1alpha1.EncodingBase64 && r.IntN(4) == 0 {
				sig = strings.ToUpper(sig)
			}
			return http.Header{http.CanonicalHeaderKey(settings.Header): {settings.Prefix + sig}}
		},
		library: func(hd http.Header, body []byte, secret string) bool {
			v, want := hd.Values(settings.Header), settings.Prefix+encode(hmacOf(h, []byte(secret), body))
			if len(v) != 1 {
				return false
			}
			if settings.Encoding == agentsv1alpha1.EncodingBase64 {
				return v[0] == want
			}
			rest, ok := strings.CutPrefix(v[0], settings.Prefix)
			return ok && strings.ToLower(rest) == strings.TrimPrefix(want, settings.Prefix)
		},
		signature: http.CanonicalHeaderKey(settings.Header),
		required:  []string{settings.Header},
		extra: func(_ *rand.Rand, body []byte, secret, _ string, _ time.Time) []oracleCase {
			mac := hmacOf(h, []byte(secret), body)
			wrongAlgorithm := hmacOf(sha256.New, []byte(secret), body)
			if settings.Algorithm == agentsv1alpha1.HMACSHA256 {
				wrongAlgorithm = hmacOf(sha512.New, []byte(secret), body)
			}
			hdr := func(v string) http.Header { return http.Header{http.CanonicalHeaderKey(settings.Header): {v}} }
			cases := []oracleCase{
				{name: "another hash function", h: hdr(settings.Prefix + encode(wrongAlgorithm)), body: body, secrets: []string{secret}},
				{name: "signature in the other encoding", h: hdr(settings.Prefix + otherEncoding(settings.Encoding, mac)), body: body, secrets: []string{secret}},
				{name: "signature without padding", h: hdr(settings.Prefix + strings.TrimRight(encode(mac), "=")), body: body, secrets: []string{secret}, want: settings.Encoding != agentsv1alpha1.EncodingBase64, library: settings.Encoding != agentsv1alpha1.EncodingBase64},
				{name: "URL-safe base64", h: hdr(settings.Prefix + base64.URLEncoding.EncodeToString(mac)), body: body, secrets: []string{secret}, want: false},
			}
			if base64.URLEncoding.EncodeToString(mac) == encode(mac) {
				// No + or / in this MAC: the two alphabets write it alike.
				cases[3].want, cases[3].library = true, true
			}
			if settings.Prefix != "" {
				cases = append(cases,
					oracleCase{name: "prefix missing", h: hdr(encode(mac)), body: body, secrets: []string{secret}},
					oracleCase{name: "prefix in upper case", h: hdr(strings.ToUpper(settings.Prefix) + encode(mac)), body: body, secrets: []string{secret}},
				)
			}
			return cases
		},
	}
}

func otherEncoding(e agentsv1alpha1.SignatureEncoding, mac []byte) string {
	if e == agentsv1alpha1.EncodingBase64 {
		return hex.EncodeToString(mac)
	}
	return base64.StdEncoding.EncodeToString(mac)
}

func TestSenderOracles(t *testing.T) {
	t.Parallel()
	schemes := map[string]oracleScheme{
		"GitHub":           githubScheme(),
		"Stripe":           stripeScheme(),
		"StandardWebhooks": standardWebhooksScheme(),
		"Slack":            slackScheme(),
	}
	for _, alg := range []agentsv1alpha1.HMACAlgorithm{agentsv1alpha1.HMACSHA1, agentsv1alpha1.HMACSHA256, agentsv1alpha1.HMACSHA512} {
		for _, enc := range []agentsv1alpha1.SignatureEncoding{agentsv1alpha1.EncodingHex, agentsv1alpha1.EncodingBase64} {
			for _, prefix := range []string{"", strings.ToLower(string(alg)) + "="} {
				name := "HMAC/" + string(alg) + "/" + string(enc) + "/prefix=" + prefix
				schemes[name] = genericHMACScheme(agentsv1alpha1.HMACSettings{Header: "X-Signature", Algorithm: alg, Encoding: enc, Prefix: prefix})
			}
		}
	}
	for name, s := range schemes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runOracle(t, s)
		})
	}
}

// TestSignatureLibraryDifferences lists every call on which hookrun's
// verdict intentionally differs from the provider's library, and asserts
// both verdicts, so that a change on either side shows here.
func TestSignatureLibraryDifferences(t *testing.T) {
	t.Parallel()
	now := time.Now()
	body := []byte(`{"id":"evt_1","type":"invoice.paid"}`)
	ts := now.Unix()
	t10 := strconv.FormatInt(ts, 10)

	const githubSecret = "It's a Secret to Everybody"
	githubHeader := func(sig string) http.Header { return http.Header{github.SHA256SignatureHeader: {sig}} }

	const stripeSecret = "whsec_test_secret"
	stripeSig := func(t string) string {
		return hex.EncodeToString(hmacOf(sha256.New, []byte(stripeSecret), []byte(t+"."), body))
	}
	stripeHeader := func(v string) http.Header { return http.Header{"Stripe-Signature": {v}} }

	swSecret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	swHeaders := func(id, t, sig string) http.Header {
		return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {t}, "Webhook-Signature": {sig}}
	}
	swSig := func(id, t string) string { return standardWebhooksSignature(swSecret, id, t, body) }

	const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	slackHeaders := func(t, sig string) http.Header {
		return http.Header{"X-Slack-Request-Timestamp": {t}, "X-Slack-Signature": {sig}}
	}

	nineStripe := "t=" + t10 + strings.Repeat(",v1="+stripeSig("1"), 8) + ",v1=" + stripeSig(t10)
	nineSW := strings.Repeat("v1,"+swSig("msg_1", "1")+" ", 8) + "v1," + swSig("msg_1", t10)

	cases := []struct {
		name   string
		s      oracleScheme
		h      http.Header
		secret string
		// hookrun's verdict and the library's
		hookrun, library bool
	}{
		// go-github v75 validates X-Hub-Signature (sha1=) and sha512=
		// signatures too; hookrun reads X-Hub-Signature-256 and accepts
		// only sha256=, the one GitHub documents as secure.
		{"GitHub: sha1= signature", githubScheme(), githubHeader("sha1=" + hex.EncodeToString(hmacOf(sha1.New, []byte(githubSecret), body))), githubSecret, false, true},
		{"GitHub: sha512= signature", githubScheme(), githubHeader("sha512=" + hex.EncodeToString(hmacOf(sha512.New, []byte(githubSecret), body))), githubSecret, false, true},

		// stripe-go v84 refuses only timestamps older than the tolerance;
		// hookrun also refuses those further ahead (see stripeScheme).
		{"Stripe: timestamp ten minutes ahead", stripeScheme(), stripeHeader("t=" + strconv.FormatInt(ts+600, 10) + ",v1=" + stripeSig(strconv.FormatInt(ts+600, 10))), stripeSecret, false, true},
		// stripe-go v84 accepts any timestamp ParseInt reads and signs its
		// canonical decimal form; hookrun takes only digits and signs them
		// as sent (as Slack does), so a sign or leading zeros change the
		// signed content.
		{"Stripe: t with a plus sign", stripeScheme(), stripeHeader("t=+" + t10 + ",v1=" + stripeSig(t10)), stripeSecret, false, true},
		{"Stripe: t with a leading zero, signed canonically", stripeScheme(), stripeHeader("t=0" + t10 + ",v1=" + stripeSig(t10)), stripeSecret, false, true},
		{"Stripe: t with a leading zero, signed as sent", stripeScheme(), stripeHeader("t=0" + t10 + ",v1=" + stripeSig("0"+t10)), stripeSecret, true, false},
		// stripe-go lets a later t override an earlier one; hookrun takes
		// exactly one t.
		{"Stripe: two timestamps", stripeScheme(), stripeHeader("t=" + strconv.FormatInt(ts-1, 10) + ",t=" + t10 + ",v1=" + stripeSig(t10)), stripeSecret, false, true},
		// stripe-go refuses the whole header when any pair has two =;
		// hookrun skips pairs it does not use (a v1 that is not 64 hex
		// digits, an unknown scheme) and verifies the rest.
		{"Stripe: an unknown pair with two =", stripeScheme(), stripeHeader("t=" + t10 + ",v1=" + stripeSig(t10) + ",x=a=b"), stripeSecret, true, false},
		{"Stripe: a malformed v1 with two =", stripeScheme(), stripeHeader("t=" + t10 + ",v1=a=b,v1=" + stripeSig(t10)), stripeSecret, true, false},
		// stripe-go reads any number of signatures; hookrun refuses more
		// than maxSignatures.
		{"Stripe: nine v1 entries", stripeScheme(), stripeHeader(nineStripe), stripeSecret, false, true},

		// The standard-webhooks Go library v0.0.1 reads only webhook-*
		// headers; hookrun also takes Svix's svix-* headers when
		// webhook-signature is absent (Svix sends those).
		{"StandardWebhooks: svix-* headers", standardWebhooksScheme(), http.Header{"Svix-Id": {"msg_1"}, "Svix-Timestamp": {t10}, "Svix-Signature": {"v1," + swSig("msg_1", t10)}}, swSecret, true, false},
		// The library splits the list on single spaces; hookrun on any
		// white space.
		{"StandardWebhooks: entries separated by a tab", standardWebhooksScheme(), swHeaders("msg_1", t10, "v1,"+swSig("msg_1", "1")+"\tv1,"+swSig("msg_1", t10)), swSecret, true, false},
		// The library reads the second comma-separated field of an entry
		// and ignores the rest; hookrun wants exactly "v1,<signature>".
		{"StandardWebhooks: entry with a third field", standardWebhooksScheme(), swHeaders("msg_1", t10, "v1,"+swSig("msg_1", t10)+",x"), swSecret, false, true},
		// The library reads any number of entries; hookrun refuses more
		// than maxSignatures.
		{"StandardWebhooks: nine entries", standardWebhooksScheme(), swHeaders("msg_1", t10, nineSW), swSecret, false, true},
		// As with Stripe: the library signs the canonical timestamp,
		// hookrun the digits as sent.
		{"StandardWebhooks: timestamp with a plus sign", standardWebhooksScheme(), swHeaders("msg_1", "+"+t10, "v1,"+swSig("msg_1", t10)), swSecret, false, true},
		{"StandardWebhooks: timestamp with a leading zero, signed canonically", standardWebhooksScheme(), swHeaders("msg_1", "0"+t10, "v1,"+swSig("msg_1", t10)), swSecret, false, true},
		{"StandardWebhooks: timestamp with a leading zero, signed as sent", standardWebhooksScheme(), swHeaders("msg_1", "0"+t10, "v1,"+swSig("msg_1", "0"+t10)), swSecret, true, false},

		// slack-go v0.35.0 accepts any timestamp ParseInt reads (both sign
		// it as sent); hookrun takes only up to maxTimestampDigits digits.
		{"Slack: timestamp with a plus sign", slackScheme(), slackHeaders("+"+t10, slackSignature(slackSecret, "+"+t10, body)), slackSecret, false, true},
		{"Slack: timestamp of 13 digits", slackScheme(), slackHeaders("000"+t10, slackSignature(slackSecret, "000"+t10, body)), slackSecret, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := verifyAsHandler(c.s.sender, c.h, body, [][]byte{c.s.key(c.secret)}, now)
			lib := c.s.library(c.h, body, c.secret)
			if got != c.hookrun || lib != c.library {
				t.Fatalf("hookrun %v (want %v), library %v (want %v); headers %q", got, c.hookrun, lib, c.library, c.h)
			}
		})
	}

	// Where hookrun has no key it verifies nothing, while go-github's
	// ValidatePayloadFromBody passes an unsigned payload when it is given
	// no secret either (an endpoint without a signing key is not served).
	t.Run("GitHub: no secret, no signature", func(t *testing.T) {
		if _, err := github.ValidatePayloadFromBody("application/json", bytes.NewReader(body), "", nil); err != nil {
			t.Fatalf("go-github refused an unsigned payload without a secret: %v", err)
		}
		if verifyAsHandler(githubScheme().sender, http.Header{}, body, nil, now) {
			t.Fatal("hookrun accepted an unsigned call without a key")
		}
	})
	// slack-go refuses to verify with an empty secret; hookrun's schemes
	// take a key as bytes, and an empty key is one (whether a key may be
	// empty is decided where keys are read, not here). Both verdicts are
	// asserted so that a change shows.
	t.Run("Slack: empty secret", func(t *testing.T) {
		h := slackHeaders(t10, slackSignature("", t10, body))
		if slackLibrary(h, body, "") {
			t.Fatal("slack-go accepted an empty secret")
		}
		if !verifyAsHandler(slackScheme().sender, h, body, [][]byte{{}}, now) {
			t.Fatal("hookrun refused a signature made with the empty key it was given")
		}
	})
}
