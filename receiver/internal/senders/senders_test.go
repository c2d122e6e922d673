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
	"crypto/sha1" //nolint:gosec // the generic HMAC scheme offers SHA1.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Plain tables for the senders of DESIGN.md section 8: what newSender
// prepares, what describe reads from a call, the event filter, and the
// signature checks on hostile input (the libraries' view is in
// signatures_oracle_test.go).

func TestNewSender(t *testing.T) {
	t.Parallel()
	spec := func(s *agentsv1alpha1.Sender) *agentsv1alpha1.WebhookEndpointSpec {
		return &agentsv1alpha1.WebhookEndpointSpec{Sender: s}
	}
	cases := []struct {
		name       string
		spec       *agentsv1alpha1.WebhookEndpointSpec
		kind       agentsv1alpha1.SenderType
		credential string
		tolerance  time.Duration
		events     []string
	}{
		{"no sender", spec(nil), agentsv1alpha1.SenderHeader, "X-Service-Webhook-Secret", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"empty type", spec(&agentsv1alpha1.Sender{}), agentsv1alpha1.SenderHeader, "X-Service-Webhook-Secret", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"Header", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHeader}), agentsv1alpha1.SenderHeader, "X-Service-Webhook-Secret", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"Bearer", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer}), agentsv1alpha1.SenderBearer, "Authorization", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"GitLab with events", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitLab, Events: []string{"Push Hook", "Tag Push Hook"}}), agentsv1alpha1.SenderGitLab, "X-Gitlab-Token", agentsv1alpha1.DefaultSenderTolerance, []string{"Push Hook", "Tag Push Hook"}},
		{"GitHub with an empty event list", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, Events: []string{}}), agentsv1alpha1.SenderGitHub, "X-Hub-Signature-256", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"HMAC header in canonical form", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC, HMAC: &agentsv1alpha1.HMACSettings{Header: "x-my-signature"}}), agentsv1alpha1.SenderHMAC, "X-My-Signature", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"HMAC without settings", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC}), agentsv1alpha1.SenderHMAC, "", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"StandardWebhooks with a tolerance", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStandardWebhooks, Tolerance: &metav1.Duration{Duration: 30 * time.Second}}), agentsv1alpha1.SenderStandardWebhooks, "Webhook-Signature", 30 * time.Second, nil},
		{"Stripe with a zero tolerance", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStripe, Tolerance: &metav1.Duration{}}), agentsv1alpha1.SenderStripe, "Stripe-Signature", agentsv1alpha1.DefaultSenderTolerance, nil},
		{"Slack with events", spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderSlack, Events: []string{"app_mention"}, Tolerance: &metav1.Duration{Duration: time.Hour}}), agentsv1alpha1.SenderSlack, "X-Slack-Signature", time.Hour, []string{"app_mention"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(c.spec)
			if s.Kind != c.kind || s.credential != c.credential || s.tolerance != c.tolerance {
				t.Fatalf("got kind %q, credential %q, tolerance %s; want %q, %q, %s", s.Kind, s.credential, s.tolerance, c.kind, c.credential, c.tolerance)
			}
			if (s.events == nil) != (c.events == nil) || len(s.events) != len(c.events) {
				t.Fatalf("events %v, want %v", s.events, c.events)
			}
			for _, e := range c.events {
				if _, ok := s.events[e]; !ok {
					t.Fatalf("events %v lack %q", s.events, e)
				}
			}
		})
	}

	t.Run("HMAC without settings verifies nothing", func(t *testing.T) {
		s := New(spec(&agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC}))
		if s.Verify(http.Header{}, "", nil, [][]byte{{}}, time.Now()) {
			t.Fatal("an HMAC sender without settings verified an empty signature with an empty key")
		}
	})
	t.Run("unsigned types verify nothing", func(t *testing.T) {
		for _, kind := range []agentsv1alpha1.SenderType{agentsv1alpha1.SenderHeader, agentsv1alpha1.SenderBearer, agentsv1alpha1.SenderGitLab} {
			if senderOf(kind, nil).Verify(http.Header{}, "secret", nil, [][]byte{[]byte("secret")}, time.Now()) {
				t.Fatalf("%s verified a signature", kind)
			}
		}
	})
}

func TestNewHMACScheme(t *testing.T) {
	t.Parallel()
	key, body := []byte("key"), []byte("body")
	cases := []struct {
		settings agentsv1alpha1.HMACSettings
		hash     func() hash.Hash
		base64   bool
	}{
		{agentsv1alpha1.HMACSettings{}, sha256.New, false},
		{agentsv1alpha1.HMACSettings{Algorithm: agentsv1alpha1.HMACSHA1}, sha1.New, false},
		{agentsv1alpha1.HMACSettings{Algorithm: agentsv1alpha1.HMACSHA256, Encoding: agentsv1alpha1.EncodingHex}, sha256.New, false},
		{agentsv1alpha1.HMACSettings{Algorithm: agentsv1alpha1.HMACSHA512, Encoding: agentsv1alpha1.EncodingBase64, Prefix: "sha512="}, sha512.New, true},
		{agentsv1alpha1.HMACSettings{Encoding: agentsv1alpha1.EncodingBase64}, sha256.New, true},
	}
	for _, c := range cases {
		s := newHMACScheme(&c.settings)
		want := hmacOf(c.hash, key, body)
		if got := hmacOf(s.hash, key, body); !hmac.Equal(got, want) || s.size != len(want) || s.base64 != c.base64 || s.prefix != c.settings.Prefix {
			t.Errorf("%+v: size %d, base64 %v, prefix %q, or the wrong hash function", c.settings, s.size, s.base64, s.prefix)
		}
	}
}

func TestSenderAdmits(t *testing.T) {
	t.Parallel()
	all := senderOf(agentsv1alpha1.SenderGitHub, nil)
	some := New(&agentsv1alpha1.WebhookEndpointSpec{Sender: &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, Events: []string{"push", "pull_request"}}})
	cases := []struct {
		s     *Sender
		event string
		want  bool
	}{
		{all, "push", true},
		{all, "", true},
		{all, "anything at all", true},
		{some, "push", true},
		{some, "pull_request", true},
		{some, "", false},
		{some, "Push", false},
		{some, "push ", false},
		{some, "issues", false},
	}
	for _, c := range cases {
		if got := c.s.Admits(c.event); got != c.want {
			t.Errorf("events %v admit %q: %v, want %v", c.s.events, c.event, got, c.want)
		}
	}
}

func TestRecordable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, v string
		n       int
		want    string
	}{
		{"short", "push", 256, "push"},
		{"empty", "", 256, ""},
		{"exactly n", strings.Repeat("a", 256), 256, strings.Repeat("a", 256)},
		{"one over", strings.Repeat("a", 257), 256, strings.Repeat("a", 256)},
		{"a rune across the cut", strings.Repeat("a", 255) + "é", 256, strings.Repeat("a", 255)},
		{"a four-byte rune across the cut", strings.Repeat("a", 254) + "😀", 256, strings.Repeat("a", 254)},
		{"invalid UTF-8", "a\xffb", 256, "a\uFFFDb"},
		{"invalid UTF-8 replaced, then cut", strings.Repeat("a", 254) + "\xff", 256, strings.Repeat("a", 254)},
		{"zero", "push", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Recordable(c.v, c.n)
			if got != c.want || !utf8.ValidString(got) || len(got) > c.n {
				t.Fatalf("recordable(%q, %d) = %q, want %q", c.v, c.n, got, c.want)
			}
		})
	}
}

func TestParseBodyFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       bodyFields
	}{
		{"Stripe event", `{"id":"evt_1","object":"event","type":"invoice.paid","data":{"object":{}}}`, bodyFields{ID: "evt_1", Type: "invoice.paid"}},
		{"Slack event", `{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention","user":"U1"}}`, bodyFields{Type: "event_callback", EventID: "Ev1", Event: struct {
			Type string `json:"type"`
		}{Type: "app_mention"}}},
		{"Slack challenge", `{"token":"x","challenge":"c","type":"url_verification"}`, bodyFields{Type: "url_verification", Challenge: "c"}},
		{"escapes and invalid UTF-8 in a string", "{\"type\":\"\\u00e9\\\"\xff\"}", bodyFields{Type: "é\"\uFFFD"}},
		{"null field", `{"type":null,"id":"x"}`, bodyFields{ID: "x"}},
		{"duplicate field: the last one", `{"type":"a","type":"b"}`, bodyFields{Type: "b"}},
		// encoding/json matches field names in any letter case, as Stripe's
		// library (which uses it too) does.
		{"field name in another case", `{"TYPE":"a"}`, bodyFields{Type: "a"}},

		// Anything but a JSON object of the expected field types: nothing.
		{"empty", ``, bodyFields{}},
		{"array", `[{"type":"a","id":"x"}]`, bodyFields{}},
		{"string", `"type"`, bodyFields{}},
		{"number", `42`, bodyFields{}},
		{"null", `null`, bodyFields{}},
		{"true", `true`, bodyFields{}},
		{"invalid JSON", `{"type":"a"`, bodyFields{}},
		{"trailing data", `{"type":"a"} {"type":"b"}`, bodyFields{}},
		{"trailing garbage", `{"type":"a"}x`, bodyFields{}},
		{"binary", "\x00\xff{", bodyFields{}},
		{"type of the wrong type", `{"type":5,"id":"x"}`, bodyFields{}},
		{"id of the wrong type", `{"type":"a","id":7}`, bodyFields{}},
		{"event of the wrong type", `{"event":"app_mention","event_id":"Ev1"}`, bodyFields{}},
		{"event.type of the wrong type", `{"event":{"type":["a"]}}`, bodyFields{}},
		{"challenge of the wrong type", `{"type":"url_verification","challenge":{}}`, bodyFields{}},
		// JSON white space before the object is still an object.
		{"leading white space", " \r\n\t{\"type\":\"a\"}", bodyFields{Type: "a"}},
		{"only white space", " \n", bodyFields{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := parseBodyFields([]byte(c.body)); got != c.want {
				t.Fatalf("parseBodyFields(%q) = %+v, want %+v", c.body, got, c.want)
			}
		})
	}
}

func TestSenderDescribe(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("e", 300)
	longDelivery := strings.Repeat("d", 1000)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name      string
		kind      agentsv1alpha1.SenderType
		h         http.Header
		body      string
		event     string
		delivery  string
		handshake string
	}{
		{"GitHub push", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Event", "push", "X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"), `{"type":"x","id":"y"}`, "push", "72d3162e-cc78-11e3-81ab-4c9367dc0958", ""},
		{"GitHub ping", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Event", "ping", "X-GitHub-Delivery", "d1"), `{"zen":"Keep it logically awesome."}`, "ping", "d1", `{"status":"pong"}` + "\n"},
		{"GitHub Ping is not ping", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Event", "Ping"), ``, "Ping", "", ""},
		{"GitHub repeated event header", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Event", "ping", "X-GitHub-Event", "ping", "X-GitHub-Delivery", "d1"), ``, "", "d1", ""},
		{"GitHub repeated delivery header", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Event", "push", "X-GitHub-Delivery", "d1", "X-GitHub-Delivery", "d2"), ``, "push", "", ""},
		{"GitHub long event cut", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Event", long), ``, long[:MaxEventBytes], "", ""},
		{"GitHub invalid UTF-8 event", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Event", "pu\xffsh"), ``, "pu\uFFFDsh", "", ""},
		{"GitHub long delivery ID kept whole", agentsv1alpha1.SenderGitHub, hdr("X-GitHub-Delivery", longDelivery), ``, "", longDelivery, ""},
		{"GitHub event in the body is not read", agentsv1alpha1.SenderGitHub, hdr(), `{"type":"push","id":"d"}`, "", "", ""},
		{"GitLab", agentsv1alpha1.SenderGitLab, hdr("X-Gitlab-Event", "Push Hook", "X-Gitlab-Event-UUID", "u1", "Idempotency-Key", "k"), ``, "Push Hook", "u1", ""},
		{"Header", agentsv1alpha1.SenderHeader, hdr("Idempotency-Key", "k1", "X-GitHub-Event", "ping"), `{"type":"url_verification","challenge":"c"}`, "", "k1", ""},
		{"Header repeated Idempotency-Key", agentsv1alpha1.SenderHeader, hdr("Idempotency-Key", "k1", "Idempotency-Key", "k2"), ``, "", "", ""},
		{"Bearer", agentsv1alpha1.SenderBearer, hdr("Idempotency-Key", "k1"), ``, "", "k1", ""},
		{"HMAC", agentsv1alpha1.SenderHMAC, hdr("Idempotency-Key", "k1"), `{"type":"a","id":"b"}`, "", "k1", ""},
		{"StandardWebhooks", agentsv1alpha1.SenderStandardWebhooks, hdr("Webhook-Id", "msg_1", "Webhook-Signature", "v1,x", "Svix-Id", "msg_svix"), `{"type":"invoice.paid","id":"other"}`, "invoice.paid", "msg_1", ""},
		{"StandardWebhooks with Svix headers", agentsv1alpha1.SenderStandardWebhooks, hdr("Svix-Id", "msg_svix", "Svix-Signature", "v1,x"), `{"type":"user.created"}`, "user.created", "msg_svix", ""},
		{"StandardWebhooks: Svix ID not read beside webhook-signature", agentsv1alpha1.SenderStandardWebhooks, hdr("Webhook-Signature", "v1,x", "Svix-Id", "msg_svix"), ``, "", "", ""},
		{"StandardWebhooks body array", agentsv1alpha1.SenderStandardWebhooks, hdr("Webhook-Id", "msg_1", "Webhook-Signature", "v1,x"), `[{"type":"a"}]`, "", "msg_1", ""},
		{"StandardWebhooks type of the wrong type", agentsv1alpha1.SenderStandardWebhooks, hdr("Webhook-Id", "msg_1", "Webhook-Signature", "v1,x"), `{"type":{"a":1}}`, "", "msg_1", ""},
		{"Stripe", agentsv1alpha1.SenderStripe, hdr("Idempotency-Key", "k"), `{"id":"evt_1","type":"invoice.paid"}`, "invoice.paid", "evt_1", ""},
		{"Stripe body string", agentsv1alpha1.SenderStripe, hdr(), `"evt_1"`, "", "", ""},
		{"Stripe body number", agentsv1alpha1.SenderStripe, hdr(), `1`, "", "", ""},
		{"Stripe invalid JSON", agentsv1alpha1.SenderStripe, hdr(), `{"id":"evt_1","type":"invoice.paid"`, "", "", ""},
		{"Stripe id of the wrong type", agentsv1alpha1.SenderStripe, hdr(), `{"id":1,"type":"invoice.paid"}`, "", "", ""},
		{"Stripe long type cut", agentsv1alpha1.SenderStripe, hdr(), `{"type":"` + long + `"}`, long[:MaxEventBytes], "", ""},
		{"Slack event", agentsv1alpha1.SenderSlack, hdr(), `{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention"}}`, "app_mention", "Ev1", ""},
		{"Slack challenge", agentsv1alpha1.SenderSlack, hdr(), `{"token":"t","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`, "url_verification", "", `{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}` + "\n"},
		{"Slack challenge escaped", agentsv1alpha1.SenderSlack, hdr(), `{"challenge":"\"</script>&","type":"url_verification"}`, "url_verification", "", `{"challenge":"\"\u003c/script\u003e\u0026"}` + "\n"},
		{"Slack challenge absent", agentsv1alpha1.SenderSlack, hdr(), `{"type":"url_verification"}`, "url_verification", "", `{"challenge":""}` + "\n"},
		{"Slack challenge of the wrong type", agentsv1alpha1.SenderSlack, hdr(), `{"type":"url_verification","challenge":1}`, "", "", ""},
		{"Slack challenge in an array", agentsv1alpha1.SenderSlack, hdr(), `[{"type":"url_verification","challenge":"c"}]`, "", "", ""},
		{"Slack event of the wrong type", agentsv1alpha1.SenderSlack, hdr(), `{"type":"event_callback","event_id":"Ev1","event":"app_mention"}`, "", "", ""},
		{"Slack top-level type is not the event", agentsv1alpha1.SenderSlack, hdr(), `{"type":"event_callback"}`, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := senderOf(c.kind, &agentsv1alpha1.HMACSettings{Header: "X-Signature"}).Describe(c.h, []byte(c.body))
			if got.Event != c.event || got.DeliveryID != c.delivery || string(got.Handshake) != c.handshake {
				t.Fatalf("describe = {event %q, delivery %q, handshake %q}, want {%q, %q, %q}", got.Event, got.DeliveryID, got.Handshake, c.event, c.delivery, c.handshake)
			}
			if c.handshake != "" {
				var answer map[string]any
				if err := json.Unmarshal(got.Handshake, &answer); err != nil {
					t.Fatalf("handshake is not a JSON object: %v", err)
				}
			}
		})
	}
}

// TestSenderDeliveryIDIsSigned: a Standard Webhooks delivery ID is the
// message ID the signature covers, so a replay within the tolerance is
// recognised as a duplicate. A call signed with Svix's headers must not take
// its delivery ID from an unsigned webhook-id header sent beside them.
func TestSenderDeliveryIDIsSigned(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	key := []byte("0123456789abcdef0123456789abcdef")
	body := []byte(`{"type":"user.created"}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	sig := base64.StdEncoding.EncodeToString(hmacOf(sha256.New, key, []byte("msg_signed."+ts+"."), body))
	s := senderOf(agentsv1alpha1.SenderStandardWebhooks, nil)
	for _, forged := range []string{"", "msg_fresh_1", "msg_fresh_2"} {
		h := http.Header{"Svix-Id": {"msg_signed"}, "Svix-Timestamp": {ts}, "Svix-Signature": {"v1," + sig}}
		if forged != "" {
			h.Set("Webhook-Id", forged)
		}
		if !verifyAsHandler(s, h, body, [][]byte{key}, now) {
			t.Fatalf("webhook-id %q: the Svix-signed call was refused", forged)
		}
		if got := s.Describe(h, body).DeliveryID; got != "msg_signed" {
			t.Errorf("webhook-id %q: delivery ID %q, want the signed svix-id %q (a replay with a fresh unsigned webhook-id escapes duplicate detection)", forged, got, "msg_signed")
		}
	}
}

// TestSignatureStripeOneTimestamp: Stripe-Signature carries exactly one t
// (verifyStripe's contract; stripe-go refuses an empty t too).
func TestSignatureStripeOneTimestamp(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	key, body := []byte("whsec_test"), []byte(`{}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	sig := hex.EncodeToString(hmacOf(sha256.New, key, []byte(ts+"."), body))
	for _, header := range []string{
		"t=" + ts + ",t=" + ts + ",v1=" + sig,
		"t=,t=" + ts + ",v1=" + sig,
		"t=" + ts + ",v1=" + sig + ",t=",
	} {
		if verifyStripe(header, body, [][]byte{key}, now, 5*time.Minute) {
			t.Errorf("verifyStripe accepted %q, which has two t", header)
		}
	}
}

// badInputFixture signs calls of each signed type at now with key.
type badInputFixture struct {
	now  time.Time
	ts   string
	key  []byte
	body []byte
}

func (f badInputFixture) githubSig() string {
	return "sha256=" + hex.EncodeToString(hmacOf(sha256.New, f.key, f.body))
}

func (f badInputFixture) stripeSig(ts string) string {
	return hex.EncodeToString(hmacOf(sha256.New, f.key, []byte(ts+"."), f.body))
}

func (f badInputFixture) swSig(id, ts string) string {
	return base64.StdEncoding.EncodeToString(hmacOf(sha256.New, f.key, []byte(id+"."+ts+"."), f.body))
}

func (f badInputFixture) slackSig(ts string) string {
	return "v0=" + hex.EncodeToString(hmacOf(sha256.New, f.key, []byte("v0:"+ts+":"), f.body))
}

// TestSignatureBadInput: hostile or odd signature headers, with valid
// calls as controls.
func TestSignatureBadInput(t *testing.T) {
	t.Parallel()
	f := badInputFixture{now: time.Unix(1_800_000_000, 0), ts: "1800000000", key: []byte("the key"), body: []byte(`{"type":"a"}`)}
	huge := strings.Repeat("0", 1<<20)
	other := hex.EncodeToString(hmacOf(sha256.New, []byte("another key"), f.body))
	nonHex := strings.Repeat("g", 64)
	sig := f.githubSig()
	stripe := f.stripeSig(f.ts)
	sw := f.swSig("msg_1", f.ts)
	slackSig := f.slackSig(f.ts)
	hmacHex := hex.EncodeToString(hmacOf(sha512.New, f.key, f.body))
	hmacB64 := base64.StdEncoding.EncodeToString(hmacOf(sha1.New, f.key, f.body))

	stripeEntries := func(n int) string {
		var b strings.Builder
		b.WriteString("t=" + f.ts)
		for range n - 1 {
			b.WriteString(",v1=" + other)
		}
		b.WriteString(",v1=" + stripe)
		return b.String()
	}
	swEntries := func(n int) string {
		e := make([]string, n)
		for i := range e {
			e[i] = "v1," + base64.StdEncoding.EncodeToString(hmacOf(sha256.New, []byte("another key"), []byte(strconv.Itoa(i))))
		}
		e[n-1] = "v1," + sw
		return strings.Join(e, " ")
	}
	swCall := func(id, ts, sig string) http.Header {
		return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
	}
	slackCall := func(ts, sig string) http.Header {
		return http.Header{"X-Slack-Request-Timestamp": {ts}, "X-Slack-Signature": {sig}}
	}
	one := func(k, v string) http.Header { return http.Header{k: {v}} }

	github := senderOf(agentsv1alpha1.SenderGitHub, nil)
	stripeSender := senderOf(agentsv1alpha1.SenderStripe, nil)
	swSender := senderOf(agentsv1alpha1.SenderStandardWebhooks, nil)
	slackSender := senderOf(agentsv1alpha1.SenderSlack, nil)
	hexSender := senderOf(agentsv1alpha1.SenderHMAC, &agentsv1alpha1.HMACSettings{Header: "X-Sig", Algorithm: agentsv1alpha1.HMACSHA512, Prefix: "sha512="})
	b64Sender := senderOf(agentsv1alpha1.SenderHMAC, &agentsv1alpha1.HMACSettings{Header: "X-Sig", Algorithm: agentsv1alpha1.HMACSHA1, Encoding: agentsv1alpha1.EncodingBase64})

	type badInput struct {
		name string
		s    *Sender
		h    http.Header
		want bool
	}
	cases := []badInput{
		{"GitHub valid", github, one("X-Hub-Signature-256", sig), true},
		{"GitHub upper-case hex", github, one("X-Hub-Signature-256", "sha256="+strings.ToUpper(sig[7:])), true},
		{"GitHub empty", github, one("X-Hub-Signature-256", ""), false},
		{"GitHub prefix only", github, one("X-Hub-Signature-256", "sha256="), false},
		{"GitHub non-hex", github, one("X-Hub-Signature-256", "sha256="+nonHex), false},
		{"GitHub upper-case prefix", github, one("X-Hub-Signature-256", "SHA256="+sig[7:]), false},
		{"GitHub no prefix", github, one("X-Hub-Signature-256", sig[7:]), false},
		{"GitHub leading space", github, one("X-Hub-Signature-256", " "+sig), false},
		{"GitHub trailing space", github, one("X-Hub-Signature-256", sig+" "), false},
		{"GitHub oversized", github, one("X-Hub-Signature-256", sig+huge), false},
		{"GitHub two signatures in one value", github, one("X-Hub-Signature-256", sig+","+sig), false},
		{"GitHub repeated header", github, http.Header{"X-Hub-Signature-256": {sig, sig}}, false},
		{"GitHub signature in X-Hub-Signature", github, one("X-Hub-Signature", sig), false},

		{"HMAC hex valid", hexSender, one("X-Sig", "sha512="+hmacHex), true},
		{"HMAC hex non-hex", hexSender, one("X-Sig", "sha512="+strings.Repeat("z", 128)), false},
		{"HMAC hex odd length", hexSender, one("X-Sig", "sha512="+hmacHex[1:]), false},
		{"HMAC hex oversized", hexSender, one("X-Sig", "sha512="+hmacHex+huge), false},
		{"HMAC hex repeated header", hexSender, http.Header{"X-Sig": {"sha512=" + hmacHex, "sha512=" + hmacHex}}, false},
		{"HMAC base64 valid", b64Sender, one("X-Sig", hmacB64), true},
		{"HMAC base64 non-base64", b64Sender, one("X-Sig", strings.Repeat("*", len(hmacB64))), false},
		{"HMAC base64 non-canonical last character", b64Sender, one("X-Sig", hmacB64[:len(hmacB64)-2]+string(hmacB64[len(hmacB64)-2]+1)+"="), false},
		{"HMAC base64 with a line break", b64Sender, one("X-Sig", hmacB64[:12]+"\n"+hmacB64[12:len(hmacB64)-1]), false},
		{"HMAC base64 oversized", b64Sender, one("X-Sig", hmacB64+huge), false},

		{"Stripe valid", stripeSender, one("Stripe-Signature", "t="+f.ts+",v1="+stripe), true},
		{"Stripe upper-case hex", stripeSender, one("Stripe-Signature", "t="+f.ts+",v1="+strings.ToUpper(stripe)), true},
		{"Stripe same v1 twice", stripeSender, one("Stripe-Signature", "t="+f.ts+",v1="+stripe+",v1="+stripe), true},
		{"Stripe maxSignatures entries", stripeSender, one("Stripe-Signature", stripeEntries(maxSignatures)), true},
		{"Stripe more than maxSignatures entries", stripeSender, one("Stripe-Signature", stripeEntries(maxSignatures+1)), false},
		{"Stripe non-hex v1", stripeSender, one("Stripe-Signature", "t="+f.ts+",v1="+nonHex), false},
		{"Stripe oversized", stripeSender, one("Stripe-Signature", "t="+f.ts+",v1="+stripe+huge), false},
		{"Stripe oversized pair", stripeSender, one("Stripe-Signature", "t="+f.ts+",v1="+stripe+",x="+huge), true},
		{"Stripe no t", stripeSender, one("Stripe-Signature", "v1="+stripe), false},
		{"Stripe empty t", stripeSender, one("Stripe-Signature", "t=,v1="+stripe), false},
		{"Stripe T", stripeSender, one("Stripe-Signature", "T="+f.ts+",v1="+stripe), false},
		{"Stripe spaces after commas", stripeSender, one("Stripe-Signature", "t="+f.ts+", v1="+stripe), false},
		{"Stripe semicolons", stripeSender, one("Stripe-Signature", "t="+f.ts+";v1="+stripe), false},
		{"Stripe pair without =", stripeSender, one("Stripe-Signature", "t="+f.ts+",v1="+stripe+",x"), false},
		{"Stripe empty pair", stripeSender, one("Stripe-Signature", "t="+f.ts+",,v1="+stripe), false},
		{"Stripe repeated header", stripeSender, http.Header{"Stripe-Signature": {"t=" + f.ts + ",v1=" + stripe, "t=" + f.ts + ",v1=" + stripe}}, false},

		{"StandardWebhooks valid", swSender, swCall("msg_1", f.ts, "v1,"+sw), true},
		{"StandardWebhooks same entry twice", swSender, swCall("msg_1", f.ts, "v1,"+sw+" v1,"+sw), true},
		{"StandardWebhooks surrounding spaces", swSender, swCall("msg_1", f.ts, "  v1,"+sw+"  "), true},
		{"StandardWebhooks maxSignatures entries", swSender, swCall("msg_1", f.ts, swEntries(maxSignatures)), true},
		{"StandardWebhooks more than maxSignatures entries", swSender, swCall("msg_1", f.ts, swEntries(maxSignatures+1)), false},
		{"StandardWebhooks non-base64", swSender, swCall("msg_1", f.ts, "v1,"+strings.Repeat("*", 44)), false},
		{"StandardWebhooks unpadded", swSender, swCall("msg_1", f.ts, "v1,"+strings.TrimRight(sw, "=")), false},
		{"StandardWebhooks hex", swSender, swCall("msg_1", f.ts, "v1,"+stripe), false},
		{"StandardWebhooks V1", swSender, swCall("msg_1", f.ts, "V1,"+sw), false},
		{"StandardWebhooks v1 without comma", swSender, swCall("msg_1", f.ts, "v1"+sw), false},
		{"StandardWebhooks oversized", swSender, swCall("msg_1", f.ts, "v1,"+sw+huge), false},
		{"StandardWebhooks oversized entry before", swSender, swCall("msg_1", f.ts, "v1,"+huge+" v1,"+sw), true},
		{"StandardWebhooks empty ID", swSender, swCall("", f.ts, "v1,"+f.swSig("", f.ts)), false},
		{"StandardWebhooks repeated ID header", swSender, http.Header{"Webhook-Id": {"msg_1", "msg_1"}, "Webhook-Timestamp": {f.ts}, "Webhook-Signature": {"v1," + sw}}, false},
		{"StandardWebhooks repeated timestamp header", swSender, http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {f.ts, f.ts}, "Webhook-Signature": {"v1," + sw}}, false},
		{"StandardWebhooks repeated signature header", swSender, http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {f.ts}, "Webhook-Signature": {"v1," + sw, "v1," + sw}}, false},
		{"StandardWebhooks Svix ID with webhook-signature", swSender, http.Header{"Svix-Id": {"msg_1"}, "Svix-Timestamp": {f.ts}, "Webhook-Signature": {"v1," + sw}}, false},

		{"Slack valid", slackSender, slackCall(f.ts, slackSig), true},
		{"Slack upper-case hex", slackSender, slackCall(f.ts, "v0="+strings.ToUpper(slackSig[3:])), true},
		{"Slack twelve digits signed as sent", slackSender, slackCall("00"+f.ts, f.slackSig("00"+f.ts)), true},
		{"Slack non-hex", slackSender, slackCall(f.ts, "v0="+nonHex), false},
		{"Slack oversized", slackSender, slackCall(f.ts, slackSig+huge), false},
		{"Slack oversized timestamp", slackSender, slackCall(huge+f.ts, f.slackSig(huge+f.ts)), false},
		{"Slack repeated timestamp header", slackSender, http.Header{"X-Slack-Request-Timestamp": {f.ts, f.ts}, "X-Slack-Signature": {slackSig}}, false},
		{"Slack repeated signature header", slackSender, http.Header{"X-Slack-Request-Timestamp": {f.ts}, "X-Slack-Signature": {slackSig, slackSig}}, false},
	}
	// Timestamps that are not plain decimal seconds, each signed as sent.
	for _, ts := range []string{"", "+" + f.ts, "-" + f.ts, " " + f.ts, f.ts + " ", "1800000000.0", "1.8e9", "0x6B49D200",
		"1_800_000_000", "１８００００００００", "9223372036854775808", "99999999999999999999", "000" + f.ts, "-0"} {
		cases = append(cases,
			badInput{"Stripe timestamp " + strconv.Quote(ts), stripeSender, one("Stripe-Signature", "t="+ts+",v1="+f.stripeSig(ts)), false},
			badInput{"StandardWebhooks timestamp " + strconv.Quote(ts), swSender, swCall("msg_1", ts, "v1,"+f.swSig("msg_1", ts)), false},
			badInput{"Slack timestamp " + strconv.Quote(ts), slackSender, slackCall(ts, f.slackSig(ts)), false},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := verifyAsHandler(c.s, c.h, f.body, [][]byte{f.key}, f.now); got != c.want {
				t.Fatalf("verdict %v, want %v", got, c.want)
			}
		})
	}
}

// TestSignatureTimely: the edges of the window, either way, on hookrun's
// own clock.
func TestSignatureTimely(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 999_999_999)
	at := func(d int64) string { return strconv.FormatInt(now.Unix()+d, 10) }
	cases := []struct {
		ts        string
		tolerance time.Duration
		want      bool
	}{
		{at(0), 5 * time.Minute, true},
		{at(-300), 5 * time.Minute, true},
		{at(-301), 5 * time.Minute, false},
		{at(300), 5 * time.Minute, true},
		{at(301), 5 * time.Minute, false},
		{at(1), 1500 * time.Millisecond, true},
		{at(2), 1500 * time.Millisecond, false},
		{at(3600), time.Hour, true},
		{at(-3601), time.Hour, false},
		{"0" + at(0), 5 * time.Minute, true},
		{"00" + at(0), 5 * time.Minute, true},
		{"000" + at(0), 5 * time.Minute, false},
		{"999999999999", time.Hour, false},
		{"0", time.Hour, false},
		{"", time.Hour, false},
	}
	for _, c := range cases {
		if got := timely(c.ts, now, c.tolerance); got != c.want {
			t.Errorf("timely(%q, %s) = %v, want %v", c.ts, c.tolerance, got, c.want)
		}
	}
	// A clock far from now does not overflow either.
	if timely("999999999999", time.Unix(999999999999, 0), time.Hour) != true || timely("0", time.Unix(0, 0), 0) != true {
		t.Error("timely refused a timestamp equal to the clock")
	}
}

func TestDecodeSignature(t *testing.T) {
	t.Parallel()
	mac := bytes.Repeat([]byte{0xfb}, sha256.Size)
	b64 := base64.StdEncoding.EncodeToString(mac)
	cases := []struct {
		name string
		got  func() ([]byte, bool)
		want bool
	}{
		{"hex", func() ([]byte, bool) { return decodeHexSignature("p="+hex.EncodeToString(mac), "p=", 32) }, true},
		{"hex upper case", func() ([]byte, bool) { return decodeHexSignature(strings.ToUpper(hex.EncodeToString(mac)), "", 32) }, true},
		{"hex short", func() ([]byte, bool) { return decodeHexSignature(hex.EncodeToString(mac[1:]), "", 32) }, false},
		{"hex long", func() ([]byte, bool) { return decodeHexSignature(hex.EncodeToString(mac)+"00", "", 32) }, false},
		{"hex without its prefix", func() ([]byte, bool) { return decodeHexSignature(hex.EncodeToString(mac), "p=", 32) }, false},
		{"hex non-hex", func() ([]byte, bool) { return decodeHexSignature(strings.Repeat("x", 64), "", 32) }, false},
		{"base64", func() ([]byte, bool) { return decodeBase64Signature("p="+b64, "p=", 32) }, true},
		{"base64 URL alphabet", func() ([]byte, bool) {
			return decodeBase64Signature(base64.URLEncoding.EncodeToString(mac), "", 32)
		}, false},
		{"base64 unpadded", func() ([]byte, bool) { return decodeBase64Signature(strings.TrimRight(b64, "="), "", 32) }, false},
		{"base64 of another size", func() ([]byte, bool) {
			return decodeBase64Signature(base64.StdEncoding.EncodeToString(mac[:31]), "", 32)
		}, false},
		{"base64 of a size with the same length", func() ([]byte, bool) {
			return decodeBase64Signature(base64.StdEncoding.EncodeToString(append(bytes.Clone(mac), 0)), "", 33)
		}, true},
		{"base64 a byte long, same length", func() ([]byte, bool) {
			return decodeBase64Signature(base64.StdEncoding.EncodeToString(append(bytes.Clone(mac), 0)), "", 32)
		}, false},
		{"base64 two bytes short, same length", func() ([]byte, bool) {
			return decodeBase64Signature(base64.StdEncoding.EncodeToString(mac[:31]), "", 33)
		}, false},
	}
	for _, c := range cases {
		sig, ok := c.got()
		if ok != c.want || ok && !bytes.Equal(sig[:32], mac) {
			t.Errorf("%s: ok %v (want %v), %x", c.name, ok, c.want, sig)
		}
	}
}

// refuteUnread for every signed type: what the headers alone refute.
func TestRefuteUnread(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts, stale := strconv.FormatInt(now.Unix(), 10), strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)
	hex64, b64 := strings.Repeat("ab", 32), "v1,"+strings.Repeat("A", 43)+"="
	hmacHex := senderOf(agentsv1alpha1.SenderHMAC, &agentsv1alpha1.HMACSettings{Header: "X-Sig", Algorithm: agentsv1alpha1.HMACSHA256, Prefix: "sha256="})
	hmac64 := senderOf(agentsv1alpha1.SenderHMAC, &agentsv1alpha1.HMACSettings{Header: "X-Sig", Algorithm: agentsv1alpha1.HMACSHA1, Encoding: agentsv1alpha1.EncodingBase64})
	sw := senderOf(agentsv1alpha1.SenderStandardWebhooks, nil)
	swHeaders := func(id, ts string) http.Header {
		return http.Header{hdrWebhookID: {id}, hdrWebhookTimestamp: {ts}, hdrWebhookSignature: {"x"}}
	}
	stripe := senderOf(agentsv1alpha1.SenderStripe, nil)
	for _, c := range []struct {
		name   string
		s      *Sender
		h      http.Header
		header string
		want   string
	}{
		{"HMAC hex", hmacHex, nil, "sha256=" + hex64, ""},
		{"HMAC hex without its prefix", hmacHex, nil, hex64, ReasonMalformedSignature},
		{"HMAC base64", hmac64, nil, strings.Repeat("A", 27) + "=", ""},
		{"HMAC base64 of the wrong length", hmac64, nil, strings.Repeat("A", 43) + "=", ReasonMalformedSignature},
		{"StandardWebhooks", sw, swHeaders("msg_1", ts), "v0,xyz " + b64, ""},
		{"StandardWebhooks without an ID", sw, swHeaders("", ts), b64, ReasonMalformedSignature},
		{"StandardWebhooks stale", sw, swHeaders("msg_1", stale), b64, ReasonStaleTimestamp},
		{"StandardWebhooks without a v1 signature", sw, swHeaders("msg_1", ts), "v2,abc", ReasonMalformedSignature},
		{"StandardWebhooks with too many", sw, swHeaders("msg_1", ts), strings.Repeat(b64+" ", maxSignatures+1), ReasonMalformedSignature},
		{"Stripe", stripe, nil, "t=" + ts + ",v0=zz,v1=" + hex64, ""},
		{"Stripe stale", stripe, nil, "t=" + stale + ",v1=" + hex64, ReasonStaleTimestamp},
		{"Stripe without t", stripe, nil, "v1=" + hex64, ReasonMalformedSignature},
		{"Stripe with two t", stripe, nil, "t=" + ts + ",t=" + ts + ",v1=" + hex64, ReasonMalformedSignature},
		{"Stripe without v1", stripe, nil, "t=" + ts + ",v0=" + hex64, ReasonMalformedSignature},
		{"Stripe with a bare word", stripe, nil, "t=" + ts + ",v1=" + hex64 + ",x", ReasonMalformedSignature},
	} {
		if got := c.s.RefuteUnread(c.h, c.header, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
