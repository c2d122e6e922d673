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

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// One fuzz target per parser. Each restates its scheme from the contract
// (DESIGN.md section 8) and recomputes the MAC with crypto/hmac: a true
// verdict must mean the header really carries the MAC of the signed content
// under one of the keys, and no input may panic.

// fuzzNow is the clock of the fuzz targets; their seeds sign at it.
var fuzzNow = time.Unix(1_800_000_000, 0)

const fuzzTolerance = 5 * time.Minute

// fuzzTimely restates timely: 1 to 12 ASCII digits, within the tolerance
// of fuzzNow either way.
func fuzzTimely(ts string) bool {
	if ts == "" || len(ts) > 12 || strings.TrimLeft(ts, "0123456789") != "" {
		return false
	}
	sec, err := strconv.ParseUint(ts, 10, 64)
	tol := uint64(fuzzTolerance / time.Second)
	return err == nil && sec+tol >= uint64(fuzzNow.Unix()) && sec <= uint64(fuzzNow.Unix())+tol
}

// hexEquals tells whether s is the hex of mac, in either letter case.
func hexEquals(s string, mac []byte) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(s) == hex.EncodedLen(len(mac)) && hmac.Equal(b, mac)
}

// fuzzKeys are the keys of a call: both, for the rotation overlap.
func fuzzKeys(k1, k2 []byte) [][]byte { return [][]byte{k1, k2} }

// eitherKey tells whether valid holds for one of the keys.
func eitherKey(keys [][]byte, valid func(key []byte) bool) bool {
	for _, k := range keys {
		if valid(k) {
			return true
		}
	}
	return false
}

func FuzzGitHubSignature(f *testing.F) {
	body, key := []byte(`{"zen":"Design for failure."}`), []byte("It's a Secret to Everybody")
	f.Add("sha256="+hex.EncodeToString(hmacOf(sha256.New, key, body)), body, key, []byte("old"))
	f.Add("sha256="+strings.ToUpper(hex.EncodeToString(hmacOf(sha256.New, key, nil))), []byte(nil), key, []byte{})
	f.Add("sha1="+hex.EncodeToString(hmacOf(sha1.New, key, body)), body, key, key)
	f.Add("sha256=", []byte{0xff}, []byte{}, []byte{})
	f.Add(hex.EncodeToString(hmacOf(sha256.New, key, body)), body, key, key)
	f.Add("sha256="+hex.EncodeToString(hmacOf(sha256.New, key, body))+"00", body, key, key)
	f.Fuzz(func(t *testing.T, header string, body, k1, k2 []byte) {
		keys := fuzzKeys(k1, k2)
		got := verifyGitHub(header, body, keys)
		rest, ok := strings.CutPrefix(header, "sha256=")
		want := ok && eitherKey(keys, func(k []byte) bool { return hexEquals(rest, hmacOf(sha256.New, k, body)) })
		if got != want {
			t.Fatalf("verifyGitHub(%q) = %v, want %v", header, got, want)
		}
		if !verifyGitHub("sha256="+hex.EncodeToString(hmacOf(sha256.New, k1, body)), body, keys) {
			t.Fatal("the correct signature was refused")
		}
	})
}

func FuzzHMACSignature(f *testing.F) {
	body, key := []byte("payload"), []byte("key")
	f.Add(uint8(0), false, "", hex.EncodeToString(hmacOf(sha1.New, key, body)), body, key, []byte("old"))
	f.Add(uint8(1), true, "sha256=", "sha256="+base64.StdEncoding.EncodeToString(hmacOf(sha256.New, key, body)), body, key, []byte("old"))
	f.Add(uint8(2), false, "v1=", "v1="+strings.ToUpper(hex.EncodeToString(hmacOf(sha512.New, key, body))), body, []byte("old"), key)
	f.Add(uint8(2), true, "", base64.StdEncoding.EncodeToString(hmacOf(sha512.New, key, nil)), []byte(nil), key, key)
	// Non-canonical base64: the unused bits of the last character set.
	canonical := base64.StdEncoding.EncodeToString(hmacOf(sha256.New, key, body))
	f.Add(uint8(1), true, "", canonical[:42]+string(canonical[42]+1)+"=", body, key, key)
	f.Add(uint8(1), true, "", strings.TrimRight(canonical, "="), body, key, key)
	f.Fuzz(func(t *testing.T, alg uint8, b64 bool, prefix, header string, body, k1, k2 []byte) {
		settings := agentsv1alpha1.HMACSettings{Header: "X-Signature", Prefix: prefix, Encoding: agentsv1alpha1.EncodingHex}
		var h func() hash.Hash
		switch alg % 3 {
		case 0:
			settings.Algorithm, h = agentsv1alpha1.HMACSHA1, sha1.New
		case 1:
			settings.Algorithm, h = agentsv1alpha1.HMACSHA256, sha256.New
		default:
			settings.Algorithm, h = agentsv1alpha1.HMACSHA512, sha512.New
		}
		encode := hex.EncodeToString
		if b64 {
			settings.Encoding, encode = agentsv1alpha1.EncodingBase64, base64.StdEncoding.EncodeToString
		}
		s := newHMACScheme(&settings)
		keys := fuzzKeys(k1, k2)
		got := s.verify(header, body, keys)
		rest, ok := strings.CutPrefix(header, prefix)
		want := ok && eitherKey(keys, func(k []byte) bool {
			mac := hmacOf(h, k, body)
			if b64 {
				return rest == base64.StdEncoding.EncodeToString(mac)
			}
			return hexEquals(rest, mac)
		})
		if got != want {
			t.Fatalf("%+v: verify(%q) = %v, want %v", settings, header, got, want)
		}
		if !s.verify(prefix+encode(hmacOf(h, k2, body)), body, keys) {
			t.Fatalf("%+v: the correct signature was refused", settings)
		}
	})
}

func FuzzStandardWebhooksSignature(f *testing.F) {
	body, key := []byte(`{"type":"user.created"}`), []byte("0123456789abcdef0123456789abcdef")
	ts := strconv.FormatInt(fuzzNow.Unix(), 10)
	sig := func(id, ts string, k []byte) string {
		return base64.StdEncoding.EncodeToString(hmacOf(sha256.New, k, []byte(id+"."+ts+"."), body))
	}
	f.Add("msg_1", ts, "v1,"+sig("msg_1", ts, key), body, key, []byte("old"))
	f.Add("msg_2", ts, "v1,"+sig("msg_2", ts, []byte("old"))+" v1,"+sig("msg_2", ts, key), body, key, []byte("old"))
	f.Add("msg_3", strconv.FormatInt(fuzzNow.Unix()-299, 10), "v2,abc v1,"+sig("msg_3", ts, key), body, []byte("old"), key)
	f.Add("", ts, "v1,"+sig("", ts, key), body, key, key)
	f.Add("msg_4", ts, strings.Repeat("v1,"+sig("msg_4", ts, []byte("old"))+" ", maxSignatures)+"v1,"+sig("msg_4", ts, key), body, key, key)
	for _, edge := range []int64{-301, -300, 300, 301} {
		ts := strconv.FormatInt(fuzzNow.Unix()+edge, 10)
		f.Add("msg_5", ts, "v1,"+sig("msg_5", ts, key), body, key, key)
	}
	f.Add("msg_6", "+"+ts, "v1,"+sig("msg_6", "+"+ts, key), body, key, key)
	f.Fuzz(func(t *testing.T, id, ts, header string, body, k1, k2 []byte) {
		keys := fuzzKeys(k1, k2)
		got := verifyStandardWebhooks(id, ts, header, body, keys, fuzzNow, fuzzTolerance)
		entries := strings.Fields(header)
		want := id != "" && fuzzTimely(ts) && len(entries) <= maxSignatures && eitherKey(keys, func(k []byte) bool {
			signed := "v1," + base64.StdEncoding.EncodeToString(hmacOf(sha256.New, k, []byte(id), []byte("."), []byte(ts), []byte("."), body))
			for _, e := range entries {
				if e == signed {
					return true
				}
			}
			return false
		})
		if got != want {
			t.Fatalf("verifyStandardWebhooks(%q, %q, %q) = %v, want %v", id, ts, header, got, want)
		}
		if id != "" && fuzzTimely(ts) {
			correct := "v1," + base64.StdEncoding.EncodeToString(hmacOf(sha256.New, k2, []byte(id+"."+ts+"."), body))
			if !verifyStandardWebhooks(id, ts, correct, body, keys, fuzzNow, fuzzTolerance) {
				t.Fatal("the correct signature was refused")
			}
		}
	})
}

func FuzzStripeSignature(f *testing.F) {
	body, key := []byte(`{"id":"evt_1","type":"invoice.paid"}`), []byte("whsec_test")
	ts := strconv.FormatInt(fuzzNow.Unix(), 10)
	sig := func(ts string, k []byte) string {
		return hex.EncodeToString(hmacOf(sha256.New, k, []byte(ts+"."), body))
	}
	f.Add("t="+ts+",v1="+sig(ts, key), body, key, []byte("old"))
	f.Add("t="+ts+",v1="+sig(ts, []byte("old"))+",v1="+sig(ts, key)+",v0="+sig(ts, key), body, key, []byte("old"))
	f.Add("v1="+sig(ts, key)+",t="+ts, body, []byte("old"), key)
	f.Add("t="+ts+",t="+ts+",v1="+sig(ts, key), body, key, key)
	f.Add("t="+ts+strings.Repeat(",v1="+sig(ts, []byte("old")), maxSignatures)+",v1="+sig(ts, key), body, key, key)
	for _, edge := range []int64{-301, -300, 300, 301} {
		ts := strconv.FormatInt(fuzzNow.Unix()+edge, 10)
		f.Add("t="+ts+",v1="+sig(ts, key), body, key, key)
	}
	f.Add("t=+"+ts+",v1="+sig("+"+ts, key), body, key, key)
	f.Fuzz(func(t *testing.T, header string, body, k1, k2 []byte) {
		keys := fuzzKeys(k1, k2)
		if !verifyStripe(header, body, keys, fuzzNow, fuzzTolerance) {
			return
		}
		// Accepted: at most 1+maxSignatures pairs, each with an =, and a
		// timely t whose v1 is the MAC of t.body.
		pairs := strings.Split(header, ",")
		if len(pairs) > 1+maxSignatures {
			t.Fatalf("accepted %d pairs: %q", len(pairs), header)
		}
		var stamps, sigs []string
		for _, p := range pairs {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				t.Fatalf("accepted a pair without =: %q", header)
			}
			switch k {
			case "t":
				if v != "" {
					stamps = append(stamps, v)
				}
			case "v1":
				sigs = append(sigs, v)
			}
		}
		if len(stamps) != 1 || !fuzzTimely(stamps[0]) {
			t.Fatalf("accepted timestamps %q: %q", stamps, header)
		}
		if !eitherKey(keys, func(k []byte) bool {
			mac := hmacOf(sha256.New, k, []byte(stamps[0]+"."), body)
			for _, s := range sigs {
				if hexEquals(s, mac) {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("accepted %q without the MAC of t.body", header)
		}
	})
}

func FuzzSlackSignature(f *testing.F) {
	body, key := []byte("token=x&team_id=T1&command=%2Fweather"), []byte("8f742231b10e8888abcd99yyyzzz85a5")
	ts := strconv.FormatInt(fuzzNow.Unix(), 10)
	sig := func(ts string, k []byte) string {
		return "v0=" + hex.EncodeToString(hmacOf(sha256.New, k, []byte("v0:"+ts+":"), body))
	}
	f.Add(sig(ts, key), ts, body, key, []byte("old"))
	f.Add(sig("0"+ts, key), "0"+ts, body, []byte("old"), key)
	for _, edge := range []int64{-301, -300, 300, 301} {
		ts := strconv.FormatInt(fuzzNow.Unix()+edge, 10)
		f.Add(sig(ts, key), ts, body, key, key)
	}
	for _, ts := range []string{"+" + ts, "000" + ts, " " + ts} {
		f.Add(sig(ts, key), ts, body, key, key)
	}
	f.Fuzz(func(t *testing.T, header, ts string, body, k1, k2 []byte) {
		keys := fuzzKeys(k1, k2)
		got := verifySlack(header, ts, body, keys, fuzzNow, fuzzTolerance)
		rest, ok := strings.CutPrefix(header, "v0=")
		want := ok && fuzzTimely(ts) && eitherKey(keys, func(k []byte) bool {
			return hexEquals(rest, hmacOf(sha256.New, k, []byte("v0:"), []byte(ts), []byte(":"), body))
		})
		if got != want {
			t.Fatalf("verifySlack(%q, %q) = %v, want %v", header, ts, got, want)
		}
	})
}

// FuzzDescribe: describe never panics, records at most maxEventBytes of
// valid UTF-8 as the event, and answers a handshake only to a GitHub ping
// or a Slack url_verification, with the challenge as sent.
func FuzzDescribe(f *testing.F) {
	f.Add(uint8(1), "ping", "72d3162e-cc78-11e3-81ab-4c9367dc0958", []byte(`{"zen":"x"}`))
	f.Add(uint8(7), "", "", []byte(`{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}`))
	f.Add(uint8(7), "", "", []byte(`{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention"}}`))
	f.Add(uint8(6), "", "", []byte(`{"id":"evt_1","type":"invoice.paid"}`))
	f.Add(uint8(5), "", "msg_1", []byte(`{"type":"user.created"}`))
	f.Add(uint8(2), "Push Hook", "u1", []byte(nil))
	f.Add(uint8(0), "", "k1", []byte("\xff"))
	f.Add(uint8(6), "", "", []byte(`{"type":"`+strings.Repeat("é", 200)+`"}`))
	kinds := []agentsv1alpha1.SenderType{
		agentsv1alpha1.SenderHeader, agentsv1alpha1.SenderGitHub, agentsv1alpha1.SenderGitLab, agentsv1alpha1.SenderBearer,
		agentsv1alpha1.SenderHMAC, agentsv1alpha1.SenderStandardWebhooks, agentsv1alpha1.SenderStripe, agentsv1alpha1.SenderSlack,
	}
	f.Fuzz(func(t *testing.T, kind uint8, event, delivery string, body []byte) {
		k := kinds[int(kind)%len(kinds)]
		s := New(&agentsv1alpha1.WebhookEndpointSpec{Sender: &agentsv1alpha1.Sender{Type: k, HMAC: &agentsv1alpha1.HMACSettings{Header: "X-Signature"}}})
		h := http.Header{}
		for _, name := range []string{"X-Github-Event", "X-Gitlab-Event"} {
			h.Set(name, event)
		}
		for _, name := range []string{"X-Github-Delivery", "X-Gitlab-Event-Uuid", "Idempotency-Key", "Webhook-Id", "Svix-Id"} {
			h.Set(name, delivery)
		}
		if kind&0x80 != 0 {
			h.Set("Webhook-Signature", "v1,x")
		}
		c := s.Describe(h, body)
		if len(c.Event) > MaxEventBytes || !utf8.ValidString(c.Event) {
			t.Fatalf("%s: event of %d bytes, valid UTF-8 %v", k, len(c.Event), utf8.ValidString(c.Event))
		}
		fields := parseBodyFields(body)
		if fields != (bodyFields{}) && (len(body) == 0 || body[0] != '{' || !json.Valid(body)) {
			t.Fatalf("fields %+v read from a body that is not a JSON object: %q", fields, body)
		}
		switch {
		case k == agentsv1alpha1.SenderGitHub && event == "ping":
			if !bytes.Equal(c.Handshake, answerPong) {
				t.Fatalf("GitHub ping answered %q", c.Handshake)
			}
		case k == agentsv1alpha1.SenderSlack && fields.Type == "url_verification":
			var answer map[string]string
			if err := json.Unmarshal(c.Handshake, &answer); err != nil || len(answer) != 1 || answer["challenge"] != fields.Challenge {
				t.Fatalf("Slack challenge %q answered %q (%v)", fields.Challenge, c.Handshake, err)
			}
		default:
			if c.Handshake != nil {
				t.Fatalf("%s answered a handshake %q to event %q, body %q", k, c.Handshake, event, body)
			}
		}
		// The event is the start of what the sender named, when that is
		// valid UTF-8.
		named := map[agentsv1alpha1.SenderType]string{
			agentsv1alpha1.SenderGitHub: event, agentsv1alpha1.SenderGitLab: event,
			agentsv1alpha1.SenderStandardWebhooks: fields.Type, agentsv1alpha1.SenderStripe: fields.Type,
			agentsv1alpha1.SenderSlack: fields.Event.Type,
		}[k]
		if k == agentsv1alpha1.SenderSlack && fields.Type == "url_verification" {
			named = "url_verification"
		}
		if utf8.ValidString(named) && !strings.HasPrefix(named, c.Event) || len(named) <= MaxEventBytes && utf8.ValidString(named) && c.Event != named {
			t.Fatalf("%s: event %q, named %q", k, c.Event, named)
		}
		wantDelivery := delivery
		switch k {
		case agentsv1alpha1.SenderStripe:
			wantDelivery = fields.ID
		case agentsv1alpha1.SenderSlack:
			wantDelivery = fields.EventID
		}
		if c.DeliveryID != wantDelivery {
			t.Fatalf("%s: delivery ID %q, want %q", k, c.DeliveryID, wantDelivery)
		}
		if !s.Admits(c.Event) {
			t.Fatalf("%s without an allow-list refused event %q", k, c.Event)
		}
	})
}
