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
	"crypto/sha1" //nolint:gosec // the HMAC sender type offers SHA1, and go-github verifies it.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v75/github"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The calls buildCall makes, checked against the contract of DESIGN.md
// section 8 and docs/senders.md: a signed call must verify with the
// provider's own library (crypto/hmac and go-github for generic HMAC), and
// must not verify with another secret or a body changed by one byte.

// senderSpec is an endpoint spec with spec.sender s.
func senderSpec(s agentsv1alpha1.Sender) *agentsv1alpha1.WebhookEndpointSpec {
	return &agentsv1alpha1.WebhookEndpointSpec{Sender: &s}
}

// whsec is a Standard Webhooks secret as hookrun generates one: whsec_ and
// standard base64 (with padding) of 32 bytes, here derived from seed.
func whsec(seed string) string {
	key := sha256.Sum256([]byte(seed))
	return agentsv1alpha1.StandardWebhooksSecretPrefix + base64.StdEncoding.EncodeToString(key[:])
}

// requestHeader is the call's headers as a receiver sees them. Every header
// is sent once: a name twice (in any letter case) fails t.
func requestHeader(t *testing.T, c Call) http.Header {
	t.Helper()
	h := http.Header{}
	for _, hd := range c.Headers {
		if _, dup := h[http.CanonicalHeaderKey(hd.Name)]; dup {
			t.Fatalf("header %s twice in %q", hd.Name, c.Headers)
		}
		h.Add(hd.Name, hd.Value)
	}
	return h
}

func hmacOf(h func() hash.Hash, key []byte, content ...[]byte) []byte {
	m := hmac.New(h, key)
	for _, c := range content {
		m.Write(c)
	}
	return m.Sum(nil)
}

// namedBody is a request body with a name for failure messages.
type namedBody struct {
	Name string
	Body []byte
}

// changedBodies returns body changed by one byte: a bit flipped at the
// start, the middle and the end, a byte appended and a byte removed.
func changedBodies(body []byte) []namedBody {
	flip := func(i int) []byte {
		b := bytes.Clone(body)
		b[i] ^= 1
		return b
	}
	out := []namedBody{{"byte appended", append(bytes.Clone(body), ' ')}}
	if n := len(body); n > 0 {
		out = append(out,
			namedBody{"first byte changed", flip(0)},
			namedBody{"middle byte changed", flip(n / 2)},
			namedBody{"last byte changed", flip(n - 1)},
			namedBody{"last byte removed", bytes.Clone(body[:n-1])},
		)
	}
	return out
}

// testBodies are the bodies every signed type is checked with, besides the
// sender's sample: empty, every byte value, and 64 KiB of text.
func testBodies() []namedBody {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	return []namedBody{
		{"empty", []byte{}},
		{"every byte value", all},
		{"64 KiB", bytes.Repeat([]byte("0123456789abcdef"), 4096)},
	}
}

// signedSender is a signed sender type with its provider's library.
type signedSender struct {
	spec          *agentsv1alpha1.WebhookEndpointSpec
	secret, other string
	// verify is the library's verdict on a call, at the real clock.
	verify func(h http.Header, body []byte, secret string) error
	// describe reads the event type and delivery ID of a sample call with
	// the library (or as the receiver does, where the library cannot).
	describe func(t *testing.T, h http.Header, body []byte, secret string) (event, id string)
	// timestamped senders sign the time of the call.
	timestamped bool
}

func signedSenders() map[string]signedSender {
	return map[string]signedSender{
		"GitHub": {
			spec:   senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}),
			secret: "It's a Secret to Everybody", other: "It's a Secret to Somebody",
			verify: func(h http.Header, body []byte, secret string) error {
				sig := h.Get(github.SHA256SignatureHeader)
				// go-github also takes sha1= and sha512=; GitHub's
				// X-Hub-Signature-256 and hookrun's receiver only sha256=.
				if !strings.HasPrefix(sig, "sha256=") {
					return errors.New("X-Hub-Signature-256 does not start with sha256=")
				}
				return github.ValidateSignature(sig, body, []byte(secret))
			},
			describe: func(t *testing.T, h http.Header, _ []byte, _ string) (string, string) {
				r, err := http.NewRequest(http.MethodPost, "http://hookrun.test/", nil)
				if err != nil {
					t.Fatal(err)
				}
				r.Header = h
				return github.WebHookType(r), github.DeliveryID(r)
			},
		},
		"StandardWebhooks": {
			spec:   senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStandardWebhooks}),
			secret: whsec("one"), other: whsec("other"),
			verify: func(h http.Header, body []byte, secret string) error {
				wh, err := standardwebhooks.NewWebhook(secret)
				if err != nil {
					return err
				}
				return wh.Verify(body, h)
			},
			describe: func(t *testing.T, h http.Header, body []byte, _ string) (string, string) {
				var f struct {
					Type string `json:"type"`
				}
				if err := json.Unmarshal(body, &f); err != nil {
					t.Fatalf("sample body %s: %v", body, err)
				}
				return f.Type, h.Get(standardwebhooks.HeaderWebhookID)
			},
			timestamped: true,
		},
		"Stripe": {
			spec:   senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStripe}),
			secret: "whsec_test_0123456789abcdefghijklmnopqrstuv", other: "whsec_test_vutsrqponmlkjihgfedcba9876543210",
			verify: func(h http.Header, body []byte, secret string) error {
				return stripewebhook.ValidatePayloadWithTolerance(body, h.Get("Stripe-Signature"), secret, stripewebhook.DefaultTolerance)
			},
			describe: func(t *testing.T, h http.Header, body []byte, secret string) (string, string) {
				// ConstructEvent verifies the signature too and parses the
				// body as a Stripe event; the sample names no API version.
				e, err := stripewebhook.ConstructEventWithOptions(body, h.Get("Stripe-Signature"), secret,
					stripewebhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
				if err != nil {
					t.Fatalf("stripe-go ConstructEvent: %v", err)
				}
				return string(e.Type), e.ID
			},
			timestamped: true,
		},
		"Slack": {
			spec:   senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderSlack}),
			secret: "8f742231b10e8888abcd99yyyzzz85a5", other: "8f742231b10e8888abcd99yyyzzz85a6",
			verify: func(h http.Header, body []byte, secret string) error {
				sv, err := slack.NewSecretsVerifier(h, secret)
				if err != nil {
					return err
				}
				if _, err := sv.Write(body); err != nil {
					return err
				}
				return sv.Ensure()
			},
			describe: func(t *testing.T, _ http.Header, body []byte, _ string) (string, string) {
				e, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
				if err != nil {
					t.Fatalf("slack-go ParseEvent: %v", err)
				}
				cb, ok := e.Data.(*slackevents.EventsAPICallbackEvent)
				if !ok {
					t.Fatalf("slack-go parsed the sample as %T, not an event_callback", e.Data)
				}
				return e.InnerEvent.Type, cb.EventID
			},
			timestamped: true,
		},
	}
}

func TestBuildCallVerifiesWithProviderLibraries(t *testing.T) {
	for name, s := range signedSenders() {
		t.Run(name, func(t *testing.T) {
			typ := s.spec.SenderOf()
			event := DefaultEvent(s.spec)
			const id = "delivery-0001"
			sample := SampleBody(typ, event, id)
			bodies := append([]namedBody{{"sample", sample}}, testBodies()...)
			for _, b := range bodies {
				t.Run(b.Name, func(t *testing.T) {
					d := Delivery{ID: id}
					if EventInHeader(typ) {
						d.Event = event
					}
					c, err := BuildCall(s.spec, s.secret, b.Body, "application/json", d, time.Now())
					if err != nil {
						t.Fatalf("buildCall: %v", err)
					}
					if !bytes.Equal(c.Body, b.Body) || c.ContentType != "application/json" {
						t.Fatalf("buildCall changed the body or content type: %q, %q", c.Body, c.ContentType)
					}
					h := requestHeader(t, c)
					if err := s.verify(h, c.Body, s.secret); err != nil {
						t.Fatalf("the library refused the call: %v\nheaders %q", err, c.Headers)
					}
					if err := s.verify(h, c.Body, s.other); err == nil {
						t.Errorf("the library accepted the call with another secret; headers %q", c.Headers)
					}
					for _, changed := range changedBodies(b.Body) {
						if err := s.verify(h, changed.Body, s.secret); err == nil {
							t.Errorf("the library accepted the call with the body's %s", changed.Name)
						}
					}
					if b.Name == "sample" {
						gotEvent, gotID := s.describe(t, h, c.Body, s.secret)
						if gotEvent != event || gotID != id {
							t.Errorf("the library reads event %q and delivery ID %q, want %q and %q", gotEvent, gotID, event, id)
						}
					}
				})
			}
			if s.timestamped {
				// The signed timestamp is the now given to buildCall: a call
				// made longer ago than the libraries' 5 minutes is refused.
				t.Run("signed at a stale now", func(t *testing.T) {
					stale := time.Now().Add(-agentsv1alpha1.DefaultSenderTolerance - time.Minute)
					c, err := BuildCall(s.spec, s.secret, sample, "application/json", Delivery{ID: id}, stale)
					if err != nil {
						t.Fatalf("buildCall: %v", err)
					}
					if err := s.verify(requestHeader(t, c), c.Body, s.secret); err == nil {
						t.Errorf("the library accepted a call signed 6 minutes ago; headers %q", c.Headers)
					}
				})
			}
		})
	}

	// Standard Webhooks signs the delivery ID: another webhook-id fails.
	t.Run("StandardWebhooks/another webhook-id", func(t *testing.T) {
		s := signedSenders()["StandardWebhooks"]
		body := SampleBody(agentsv1alpha1.SenderStandardWebhooks, "order.refunded", "")
		c, err := BuildCall(s.spec, s.secret, body, "application/json", Delivery{ID: "msg_1"}, time.Now())
		if err != nil {
			t.Fatalf("buildCall: %v", err)
		}
		h := requestHeader(t, c)
		h.Set(standardwebhooks.HeaderWebhookID, "msg_2")
		if err := s.verify(h, body, s.secret); err == nil {
			t.Errorf("the library accepted the signature under another webhook-id")
		}
	})
}

// TestBuildCallGenericHMAC checks type HMAC in every algorithm and encoding,
// with and without a prefix: crypto/hmac recomputes the signature, and
// go-github verifies it as sha1=/sha256=/sha512= hex (directly when the
// header is written that way, after re-encoding otherwise).
func TestBuildCallGenericHMAC(t *testing.T) {
	hashes := map[agentsv1alpha1.HMACAlgorithm]func() hash.Hash{
		agentsv1alpha1.HMACSHA1: sha1.New, agentsv1alpha1.HMACSHA256: sha256.New, agentsv1alpha1.HMACSHA512: sha512.New,
	}
	const secret, other = "s3cr3t with spaces, a quote ' and unicode ✓", "s3cr3t with spaces, a quote ' and unicode ✗"
	const id = "idem-42"
	for _, alg := range []agentsv1alpha1.HMACAlgorithm{agentsv1alpha1.HMACSHA1, agentsv1alpha1.HMACSHA256, agentsv1alpha1.HMACSHA512} {
		for _, enc := range []agentsv1alpha1.SignatureEncoding{agentsv1alpha1.EncodingHex, agentsv1alpha1.EncodingBase64} {
			githubPrefix := strings.ToLower(string(alg)) + "="
			for _, prefix := range []string{"", githubPrefix, "v1:"} {
				settings := agentsv1alpha1.HMACSettings{Header: "X-Signature", Algorithm: alg, Encoding: enc, Prefix: prefix}
				t.Run(string(alg)+"/"+string(enc)+"/prefix="+prefix, func(t *testing.T) {
					checkGenericHMAC(t, settings, hashes[alg], githubPrefix, secret, other, id)
				})
			}
		}
	}
	// Without algorithm and encoding (the API server defaults them): SHA256, Hex.
	t.Run("defaults", func(t *testing.T) {
		checkGenericHMAC(t, agentsv1alpha1.HMACSettings{Header: "X-Hook-Signature"}, sha256.New, "sha256=", secret, other, id)
	})
}

func checkGenericHMAC(t *testing.T, settings agentsv1alpha1.HMACSettings, newHash func() hash.Hash, githubPrefix, secret, other, id string) {
	t.Helper()
	spec := senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC, HMAC: &settings})
	base64Encoded := settings.Encoding == agentsv1alpha1.EncodingBase64
	bodies := append([]namedBody{{"sample", SampleBody(agentsv1alpha1.SenderHMAC, "", "")}}, testBodies()...)
	for _, b := range bodies {
		c, err := BuildCall(spec, secret, b.Body, "application/json", Delivery{ID: id}, time.Now())
		if err != nil {
			t.Fatalf("%s: buildCall: %v", b.Name, err)
		}
		if !c.Expires.IsZero() {
			t.Errorf("%s: a signature without a timestamp expires at %s", b.Name, c.Expires)
		}
		h := requestHeader(t, c)
		if len(h) != 2 || h.Get("Idempotency-Key") != id {
			t.Fatalf("%s: headers %q, want %s and Idempotency-Key: %s", b.Name, c.Headers, settings.Header, id)
		}
		value := h.Get(settings.Header)
		rest, ok := strings.CutPrefix(value, settings.Prefix)
		if !ok {
			t.Fatalf("%s: %s: %q does not start with the prefix %q", b.Name, settings.Header, value, settings.Prefix)
		}
		var sum []byte
		if base64Encoded {
			sum, err = base64.StdEncoding.Strict().DecodeString(rest)
		} else {
			sum, err = hex.DecodeString(rest)
		}
		if err != nil {
			t.Fatalf("%s: %s: %q is not %s: %v", b.Name, settings.Header, rest, settings.Encoding, err)
		}
		// Standard base64 with padding, hex in one of its two forms.
		if base64Encoded && rest != base64.StdEncoding.EncodeToString(sum) ||
			!base64Encoded && rest != hex.EncodeToString(sum) && rest != strings.ToUpper(hex.EncodeToString(sum)) {
			t.Errorf("%s: %s: %q is not canonical %s", b.Name, settings.Header, rest, settings.Encoding)
		}
		if !hmac.Equal(sum, hmacOf(newHash, []byte(secret), b.Body)) {
			t.Errorf("%s: %s: %q is not the HMAC of the body", b.Name, settings.Header, value)
		}
		asGitHub := githubPrefix + hex.EncodeToString(sum)
		if settings.Prefix == githubPrefix && !base64Encoded {
			asGitHub = value
		}
		if err := github.ValidateSignature(asGitHub, b.Body, []byte(secret)); err != nil {
			t.Errorf("%s: go-github refused %q: %v", b.Name, asGitHub, err)
		}
		if hmac.Equal(sum, hmacOf(newHash, []byte(other), b.Body)) || github.ValidateSignature(asGitHub, b.Body, []byte(other)) == nil {
			t.Errorf("%s: the signature verifies with another secret", b.Name)
		}
		for _, changed := range changedBodies(b.Body) {
			if hmac.Equal(sum, hmacOf(newHash, []byte(secret), changed.Body)) || github.ValidateSignature(asGitHub, changed.Body, []byte(secret)) == nil {
				t.Errorf("%s: the signature verifies with the body's %s", b.Name, changed.Name)
			}
		}
	}
}

// TestBuildCallHeaders checks every type's headers against the contract's
// table: the credential, and the event and delivery ID where the sender
// sends them in headers (and nowhere else). The values of signatures are
// checked by the libraries above; here only that they are there.
func TestBuildCallHeaders(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-secret"
	full := Delivery{Event: "the-event", ID: "the-delivery-id"}
	hmacSettings := &agentsv1alpha1.HMACSettings{Header: "X-Acme-Signature", Algorithm: agentsv1alpha1.HMACSHA256, Encoding: agentsv1alpha1.EncodingHex}
	cases := []struct {
		name   string
		spec   *agentsv1alpha1.WebhookEndpointSpec
		secret string
		d      Delivery
		// exact headers with their values; signed headers, only present.
		exact  map[string]string
		signed []string
	}{
		{name: "Header (no spec.sender)", spec: &agentsv1alpha1.WebhookEndpointSpec{}, secret: secret, d: full,
			exact: map[string]string{"X-Service-Webhook-Secret": secret, "Idempotency-Key": full.ID}},
		{name: "Header", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHeader}), secret: secret, d: full,
			exact: map[string]string{"X-Service-Webhook-Secret": secret, "Idempotency-Key": full.ID}},
		{name: "Header without a delivery ID", spec: &agentsv1alpha1.WebhookEndpointSpec{}, secret: secret,
			exact: map[string]string{"X-Service-Webhook-Secret": secret}},
		{name: "Header, unauthenticated", spec: &agentsv1alpha1.WebhookEndpointSpec{AllowUnauthenticated: true}, d: full,
			exact: map[string]string{"Idempotency-Key": full.ID}},
		{name: "Bearer", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer}), secret: secret, d: full,
			exact: map[string]string{"Authorization": "Bearer " + secret, "Idempotency-Key": full.ID}},
		{name: "Bearer without a delivery ID", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer}), secret: secret,
			exact: map[string]string{"Authorization": "Bearer " + secret}},
		{name: "GitLab", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitLab}), secret: secret, d: full,
			exact: map[string]string{"X-Gitlab-Token": secret, "X-Gitlab-Event": full.Event, "X-Gitlab-Event-UUID": full.ID}},
		{name: "GitHub", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}), secret: secret, d: full,
			exact:  map[string]string{"X-GitHub-Event": full.Event, "X-GitHub-Delivery": full.ID},
			signed: []string{"X-Hub-Signature-256"}},
		{name: "HMAC", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC, HMAC: hmacSettings}), secret: secret, d: full,
			exact:  map[string]string{"Idempotency-Key": full.ID},
			signed: []string{"X-Acme-Signature"}},
		{name: "StandardWebhooks", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStandardWebhooks}), secret: whsec("headers"), d: full,
			exact:  map[string]string{"webhook-id": full.ID},
			signed: []string{"webhook-timestamp", "webhook-signature"}},
		// Stripe and Slack carry the event and ID in the body: none in headers.
		{name: "Stripe", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStripe}), secret: secret, d: full,
			signed: []string{"Stripe-Signature"}},
		{name: "Slack", spec: senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderSlack}), secret: secret, d: full,
			signed: []string{"X-Slack-Request-Timestamp", "X-Slack-Signature"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(`{"hello":"world"}`)
			c, err := BuildCall(tc.spec, tc.secret, body, "text/plain; charset=utf-8", tc.d, time.Now())
			if err != nil {
				t.Fatalf("buildCall: %v", err)
			}
			if !bytes.Equal(c.Body, body) || c.ContentType != "text/plain; charset=utf-8" {
				t.Errorf("buildCall changed the body or content type: %q, %q", c.Body, c.ContentType)
			}
			h := requestHeader(t, c)
			if len(h) != len(tc.exact)+len(tc.signed) {
				t.Errorf("headers %q, want exactly %v and %v", c.Headers, tc.exact, tc.signed)
			}
			for name, want := range tc.exact {
				if got := h.Values(name); len(got) != 1 || got[0] != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
			for _, name := range tc.signed {
				if h.Get(name) == "" {
					t.Errorf("no %s in %q", name, c.Headers)
				}
			}
		})
	}
}

// TestBuildCallRefuses checks the calls buildCall cannot make.
func TestBuildCallRefuses(t *testing.T) {
	cases := []struct {
		name   string
		spec   *agentsv1alpha1.WebhookEndpointSpec
		secret string
	}{
		{"Bearer without a secret", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer}), ""},
		{"GitLab without a secret", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitLab}), ""},
		{"GitHub without a secret", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}), ""},
		{"Stripe without a secret", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStripe}), ""},
		{"Slack without a secret", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderSlack}), ""},
		{"HMAC without spec.sender.hmac", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC}), "secret"},
		{"StandardWebhooks without whsec_", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStandardWebhooks}), "not-a-whsec-secret"},
		{"StandardWebhooks with whsec_ but no base64", senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStandardWebhooks}), "whsec_not base64!"},
		{"unknown type", senderSpec(agentsv1alpha1.Sender{Type: "Carrier-Pigeon"}), "secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := BuildCall(tc.spec, tc.secret, []byte(`{}`), "application/json", Delivery{ID: "x"}, time.Now()); err == nil {
				t.Errorf("buildCall made %q", c.Headers)
			}
		})
	}
}

// TestBuildCallExpires checks that the timestamped types sign now and expire
// at now plus spec.sender.tolerance (5m by default), and that nothing else
// expires.
func TestBuildCallExpires(t *testing.T) {
	now := time.Date(2026, time.March, 14, 15, 9, 26, 535897932, time.UTC)
	unix := strconv.FormatInt(now.Unix(), 10)
	timestamps := map[agentsv1alpha1.SenderType]func(h http.Header) string{
		agentsv1alpha1.SenderStandardWebhooks: func(h http.Header) string { return h.Get(standardwebhooks.HeaderWebhookTimestamp) },
		agentsv1alpha1.SenderStripe: func(h http.Header) string {
			t, _, _ := strings.Cut(strings.TrimPrefix(h.Get("Stripe-Signature"), "t="), ",")
			return t
		},
		agentsv1alpha1.SenderSlack: func(h http.Header) string { return h.Get("X-Slack-Request-Timestamp") },
	}
	secrets := map[agentsv1alpha1.SenderType]string{agentsv1alpha1.SenderStandardWebhooks: whsec("expires")}
	for _, typ := range []agentsv1alpha1.SenderType{
		agentsv1alpha1.SenderHeader, agentsv1alpha1.SenderBearer, agentsv1alpha1.SenderGitLab, agentsv1alpha1.SenderGitHub,
		agentsv1alpha1.SenderHMAC, agentsv1alpha1.SenderStandardWebhooks, agentsv1alpha1.SenderStripe, agentsv1alpha1.SenderSlack,
	} {
		for _, tolerance := range []*metav1.Duration{nil, {Duration: 90 * time.Second}, {Duration: time.Hour}} {
			name := string(typ) + "/default tolerance"
			want := now.Add(5 * time.Minute)
			if tolerance != nil {
				name = string(typ) + "/tolerance " + tolerance.Duration.String()
				want = now.Add(tolerance.Duration)
			}
			t.Run(name, func(t *testing.T) {
				sender := agentsv1alpha1.Sender{Type: typ, Tolerance: tolerance}
				if typ == agentsv1alpha1.SenderHMAC {
					sender.HMAC = &agentsv1alpha1.HMACSettings{Header: "X-Signature"}
				}
				secret := secrets[typ]
				if secret == "" {
					secret = "a-secret-of-thirty-two-bytes-000"
				}
				c, err := BuildCall(senderSpec(sender), secret, []byte(`{}`), "application/json", Delivery{ID: "id-1"}, now)
				if err != nil {
					t.Fatalf("buildCall: %v", err)
				}
				ts, timestamped := timestamps[typ]
				if !timestamped {
					if !c.Expires.IsZero() {
						t.Errorf("expires %s, want zero: %s signs no timestamp", c.Expires, typ)
					}
					return
				}
				if !c.Expires.Equal(want) {
					t.Errorf("expires %s, want %s", c.Expires, want)
				}
				if got := ts(requestHeader(t, c)); got != unix {
					t.Errorf("signed timestamp %q, want %q; headers %q", got, unix, c.Headers)
				}
			})
		}
	}
}

// TestSampleBody checks that the sample of each type is a JSON object, and
// that the event type and delivery ID are in the fields the receiver reads:
// Stripe id and type, Slack event_id and event.type, Standard Webhooks type.
func TestSampleBody(t *testing.T) {
	// The receiver's reading of a body (receiver/senders.go bodyFields).
	type fields struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		EventID string `json:"event_id"`
		Event   struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	events := []string{"invoice.payment_failed", "app_mention", "order.refunded", `a "quoted" <event> & ünïcode`}
	const id = `evt_1 "quoted" <id>`
	for _, typ := range []agentsv1alpha1.SenderType{
		agentsv1alpha1.SenderHeader, agentsv1alpha1.SenderBearer, agentsv1alpha1.SenderGitLab, agentsv1alpha1.SenderGitHub,
		agentsv1alpha1.SenderHMAC, agentsv1alpha1.SenderStandardWebhooks, agentsv1alpha1.SenderStripe, agentsv1alpha1.SenderSlack,
	} {
		for _, event := range events {
			t.Run(string(typ)+"/"+event, func(t *testing.T) {
				body := SampleBody(typ, event, id)
				var object map[string]json.RawMessage
				if err := json.Unmarshal(body, &object); err != nil {
					t.Fatalf("sample %s is not a JSON object: %v", body, err)
				}
				var f fields
				if err := json.Unmarshal(body, &f); err != nil {
					t.Fatalf("sample %s: %v", body, err)
				}
				var gotEvent, gotID string
				switch typ {
				case agentsv1alpha1.SenderStripe:
					gotEvent, gotID = f.Type, f.ID
				case agentsv1alpha1.SenderSlack:
					gotEvent, gotID = f.Event.Type, f.EventID
					if f.Type != "event_callback" {
						t.Errorf("Slack sample of type %q, want event_callback (url_verification is a handshake)", f.Type)
					}
				case agentsv1alpha1.SenderStandardWebhooks:
					gotEvent, gotID = f.Type, id // the ID is the webhook-id header
				default:
					return // the event and ID travel in headers, if at all
				}
				if gotEvent != event || gotID != id {
					t.Errorf("sample %s names event %q and ID %q, want %q and %q", body, gotEvent, gotID, event, id)
				}
			})
		}
	}
	// slack-go parses the sample as an Events API callback of a known
	// inner event; stripe-go as an event (checked with the signature in
	// TestBuildCallVerifiesWithProviderLibraries).
	for _, event := range []string{"app_mention", "message"} {
		t.Run("slack-go/"+event, func(t *testing.T) {
			e, err := slackevents.ParseEvent(SampleBody(agentsv1alpha1.SenderSlack, event, "Ev0001"), slackevents.OptionNoVerifyToken())
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			cb, ok := e.Data.(*slackevents.EventsAPICallbackEvent)
			if !ok || e.InnerEvent.Type != event || cb.EventID != "Ev0001" {
				t.Errorf("slack-go reads %T, event %q, want an event_callback of %q with event_id Ev0001", e.Data, e.InnerEvent.Type, event)
			}
		})
	}
}

// TestEventsAndIDs checks defaultEvent and where each type carries its
// event type and delivery ID (the contract's table).
func TestEventsAndIDs(t *testing.T) {
	cases := []struct {
		typ agentsv1alpha1.SenderType
		// defaultEvent without spec.sender.events
		event                                      string
		eventInHeader, bodyCarriesID, needsDelivID bool
	}{
		{agentsv1alpha1.SenderHeader, "", false, false, false},
		{agentsv1alpha1.SenderBearer, "", false, false, false},
		{agentsv1alpha1.SenderHMAC, "", false, false, false},
		{agentsv1alpha1.SenderGitLab, "Issue Hook", true, false, false},
		{agentsv1alpha1.SenderGitHub, "issues", true, false, false},
		{agentsv1alpha1.SenderStandardWebhooks, "order.refunded", false, false, true},
		{agentsv1alpha1.SenderStripe, "invoice.payment_failed", false, true, false},
		{agentsv1alpha1.SenderSlack, "app_mention", false, true, false},
		{agentsv1alpha1.SenderCloudEvents, "com.example.order.refunded", true, false, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.typ), func(t *testing.T) {
			if got := DefaultEvent(senderSpec(agentsv1alpha1.Sender{Type: tc.typ})); got != tc.event {
				t.Errorf("defaultEvent: %q, want %q", got, tc.event)
			}
			if got := EventInHeader(tc.typ); got != tc.eventInHeader {
				t.Errorf("eventInHeader: %v, want %v", got, tc.eventInHeader)
			}
			if got := BodyCarriesID(tc.typ); got != tc.bodyCarriesID {
				t.Errorf("bodyCarriesID: %v, want %v", got, tc.bodyCarriesID)
			}
			if got := NeedsDeliveryID(tc.typ); got != tc.needsDelivID {
				t.Errorf("needsDeliveryID: %v, want %v", got, tc.needsDelivID)
			}
			if tc.event == "" {
				return
			}
			// With spec.sender.events: the first of them.
			for _, events := range [][]string{{"first"}, {"first", "second", "third"}, {"zz-last-in-order", "aa-first-in-order"}} {
				if got := DefaultEvent(senderSpec(agentsv1alpha1.Sender{Type: tc.typ, Events: events})); got != events[0] {
					t.Errorf("defaultEvent with events %q: %q, want %q", events, got, events[0])
				}
			}
		})
	}
	if got := DefaultEvent(&agentsv1alpha1.WebhookEndpointSpec{}); got != "" {
		t.Errorf("defaultEvent without spec.sender: %q, want none", got)
	}
}
