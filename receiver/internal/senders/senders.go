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
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

// SecretHeader is agentsv1alpha1.SecretHeader in canonical form, for
// direct header map access.
var SecretHeader = http.CanonicalHeaderKey(agentsv1alpha1.SecretHeader)

// The request headers of the senders (DESIGN.md section 8), in canonical form.
var (
	hdrGitHubSignature  = http.CanonicalHeaderKey("X-Hub-Signature-256")
	hdrGitHubEvent      = http.CanonicalHeaderKey("X-GitHub-Event")
	hdrGitHubDelivery   = http.CanonicalHeaderKey("X-GitHub-Delivery")
	HeaderGitLabToken   = http.CanonicalHeaderKey("X-Gitlab-Token")
	hdrGitLabEvent      = http.CanonicalHeaderKey("X-Gitlab-Event")
	hdrGitLabDelivery   = http.CanonicalHeaderKey("X-Gitlab-Event-UUID")
	HeaderAuthorization = http.CanonicalHeaderKey("Authorization")
	hdrIdempotencyKey   = http.CanonicalHeaderKey("Idempotency-Key")
	hdrStripeSignature  = http.CanonicalHeaderKey("Stripe-Signature")
	hdrSlackSignature   = http.CanonicalHeaderKey("X-Slack-Signature")
	hdrSlackTimestamp   = http.CanonicalHeaderKey("X-Slack-Request-Timestamp")
	// Standard Webhooks; Svix sends the same headers with its own prefix.
	hdrWebhookID        = http.CanonicalHeaderKey("webhook-id")
	hdrWebhookTimestamp = http.CanonicalHeaderKey("webhook-timestamp")
	hdrWebhookSignature = http.CanonicalHeaderKey("webhook-signature")
	hdrSvixID           = http.CanonicalHeaderKey("svix-id")
	hdrSvixTimestamp    = http.CanonicalHeaderKey("svix-timestamp")
	hdrSvixSignature    = http.CanonicalHeaderKey("svix-signature")
)

// credentialHeaders are the headers that carry a credential for some sender
// type: a call to an unknown endpoint ID with any of them is answered 404,
// without any of them 401 (the answer of a real endpoint without its credential).
var credentialHeaders = []string{
	SecretHeader, HeaderAuthorization, HeaderGitLabToken, hdrGitHubSignature,
	hdrWebhookSignature, hdrSvixSignature, hdrStripeSignature, hdrSlackSignature,
}

func HasAnyCredential(h http.Header) bool {
	for _, k := range credentialHeaders {
		if len(h[k]) > 0 {
			return true
		}
	}
	return false
}

// maxDeliveryIDBytes and maxEventBytes bound what a run records of a
// delivery ID and an event type (longer values are cut; the run name is
// derived from the whole delivery ID).
const (
	MaxDeliveryIDBytes = 256
	MaxEventBytes      = 256
)

// Sender is what the receiver needs of an endpoint's spec.Sender, prepared
// once when the endpoint changes.
type Sender struct {
	Kind agentsv1alpha1.SenderType
	// credential is the header that carries the secret or the signature.
	credential string
	// events is the allow-list; nil admits every event.
	events    map[string]struct{}
	tolerance time.Duration
	hmac      hmacScheme
	// bodyKeysDelivery: the delivery ID is a header no signature covers,
	// so the body's SHA-256 is part of what names the delivery's run
	// (store.DeliveryRunName). Anyone holding one signed call could otherwise
	// send it under the sender's next ID, and the real call would get that
	// run's ID and never run.
	BodyKeysDelivery bool
	// oidc, when not nil, is the token the credential must be
	// (spec.sender.oidc) instead of a secret.
	OIDC *agentsv1alpha1.OIDCSender
}

func New(spec *agentsv1alpha1.WebhookEndpointSpec) *Sender {
	s := &Sender{Kind: spec.SenderOf(), tolerance: spec.ToleranceOf(), OIDC: spec.OIDCOf()}
	switch s.Kind {
	case agentsv1alpha1.SenderGitHub:
		s.credential = hdrGitHubSignature
	case agentsv1alpha1.SenderGitLab:
		s.credential = HeaderGitLabToken
	case agentsv1alpha1.SenderBearer, agentsv1alpha1.SenderCloudEvents:
		s.credential = HeaderAuthorization
	case agentsv1alpha1.SenderHMAC:
		if spec.Sender.HMAC != nil {
			s.credential = http.CanonicalHeaderKey(spec.Sender.HMAC.Header)
			s.hmac = newHMACScheme(spec.Sender.HMAC)
		}
	case agentsv1alpha1.SenderStandardWebhooks:
		s.credential = hdrWebhookSignature
	case agentsv1alpha1.SenderStripe:
		s.credential = hdrStripeSignature
	case agentsv1alpha1.SenderSlack:
		s.credential = hdrSlackSignature
	default:
		s.credential = SecretHeader
	}
	switch s.Kind {
	case agentsv1alpha1.SenderHeader, agentsv1alpha1.SenderBearer, agentsv1alpha1.SenderGitLab,
		agentsv1alpha1.SenderGitHub, agentsv1alpha1.SenderHMAC:
		s.BodyKeysDelivery = true
	}
	if spec.Sender != nil && len(spec.Sender.Events) > 0 {
		s.events = make(map[string]struct{}, len(spec.Sender.Events))
		for _, e := range spec.Sender.Events {
			s.events[e] = struct{}{}
		}
	}
	return s
}

// credentialValues returns the values of the credential header. Standard
// Webhooks senders may use Svix's header names instead.
func (s *Sender) CredentialValues(h http.Header) []string {
	v := h[s.credential]
	if len(v) == 0 && s.Kind == agentsv1alpha1.SenderStandardWebhooks {
		v = h[hdrSvixSignature]
	}
	return v
}

// secretOf returns the secret a hash-only sender sent in its credential
// value: the value itself, or for Bearer and CloudEvents the token after
// "Bearer ".
func (s *Sender) SecretOf(value string) (string, bool) {
	if s.Kind != agentsv1alpha1.SenderBearer && s.Kind != agentsv1alpha1.SenderCloudEvents {
		return value, true
	}
	scheme, token, ok := strings.Cut(value, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// matchesDigest compares SHA-256 of secret in constant time with each
// digest; every digest is compared.
func MatchesDigest(secret string, digests ...*[sha256.Size]byte) bool {
	sum := sha256.Sum256([]byte(secret))
	ok := 0
	for _, d := range digests {
		if d != nil {
			ok |= subtle.ConstantTimeCompare(sum[:], d[:])
		}
	}
	return ok == 1
}

// verify checks the signature of a signed call with keys (the current key,
// and during a rotation overlap the previous one).
func (s *Sender) Verify(h http.Header, signature string, body []byte, keys [][]byte, now time.Time) bool {
	if len(keys) == 0 {
		return false
	}
	switch s.Kind {
	case agentsv1alpha1.SenderGitHub:
		return verifyGitHub(signature, body, keys)
	case agentsv1alpha1.SenderHMAC:
		return s.hmac.hash != nil && s.hmac.verify(signature, body, keys)
	case agentsv1alpha1.SenderStandardWebhooks:
		id, ts := single(h, hdrWebhookID), single(h, hdrWebhookTimestamp)
		if len(h[hdrWebhookSignature]) == 0 {
			id, ts = single(h, hdrSvixID), single(h, hdrSvixTimestamp)
		}
		return verifyStandardWebhooks(id, ts, signature, body, keys, now, s.tolerance)
	case agentsv1alpha1.SenderStripe:
		return verifyStripe(signature, body, keys, now, s.tolerance)
	case agentsv1alpha1.SenderSlack:
		return verifySlack(signature, single(h, hdrSlackTimestamp), body, keys, now, s.tolerance)
	}
	return false
}

// inTolerance tells whether a signed call's timestamp, for the sender types
// that sign one (StandardWebhooks, Stripe, Slack), is within the tolerance;
// true for the others. Only the log line of a refused call asks.
func (s *Sender) InTolerance(h http.Header, signature string, now time.Time) bool {
	var ts string
	switch s.Kind {
	case agentsv1alpha1.SenderStandardWebhooks:
		ts = single(h, hdrWebhookTimestamp)
		if len(h[hdrWebhookSignature]) == 0 {
			ts = single(h, hdrSvixTimestamp)
		}
	case agentsv1alpha1.SenderStripe:
		for pair := range strings.SplitSeq(signature, ",") {
			if v, ok := strings.CutPrefix(pair, "t="); ok {
				ts = v
				break
			}
		}
	case agentsv1alpha1.SenderSlack:
		ts = single(h, hdrSlackTimestamp)
	default:
		return true
	}
	return timely(ts, now, s.tolerance)
}

// single returns the one value of header k; "" when it is absent or repeated.
func single(h http.Header, k string) string {
	if v := h[k]; len(v) == 1 {
		return v[0]
	}
	return ""
}

// delivery is what a verified call says about itself.
type Delivery struct {
	Event      string
	DeliveryID string
	// handshake, if not nil, is the answer to a sender's handshake: no run.
	Handshake []byte
	// source and subject are a CloudEvent's attributes, as a run records them.
	Source, Subject string
	// key, when not empty, identifies the delivery instead of deliveryID
	// (CloudEvents: source and id together).
	Key string
	// refusal, if not nil, says why the call is no delivery its sender
	// type takes (CloudEvents: not one 1.0 event): no run.
	Refusal *Refusal
}

// refusal is a sender type's reason to refuse a call it reads as no
// delivery: the answer, and the reason the endpoint's history records.
// Senders refer to refusals of their own, allocated once.
type Refusal struct {
	Answer answer.Answer
	Reason string
}

// identity is what names the delivery's run (store.DeliveryRunName): key, or
// else the delivery ID.
func (d *Delivery) Identity() string {
	if d.Key != "" {
		return d.Key
	}
	return d.DeliveryID
}

// bodyFields are the JSON fields some senders put their event type and
// delivery ID in.
type bodyFields struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	EventID   string `json:"event_id"`
	Challenge string `json:"challenge"`
	Event     struct {
		Type string `json:"type"`
	} `json:"event"`
}

// parseBodyFields reads bodyFields from a JSON object; anything else (not
// JSON, not an object, a field of another type) yields no fields.
func parseBodyFields(body []byte) bodyFields {
	var f bodyFields
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return bodyFields{}
	}
	if err := json.Unmarshal(body, &f); err != nil {
		return bodyFields{}
	}
	return f
}

var (
	answerPong      = []byte(`{"status":"pong"}` + "\n")
	githubPingEvent = "ping"
	slackChallenge  = "url_verification"
)

// describe reads the event type, the delivery ID and any handshake of a call.
func (s *Sender) Describe(h http.Header, body []byte) Delivery {
	var c Delivery
	switch s.Kind {
	case agentsv1alpha1.SenderGitHub:
		c.Event, c.DeliveryID = single(h, hdrGitHubEvent), single(h, hdrGitHubDelivery)
		if c.Event == githubPingEvent {
			c.Handshake = answerPong
		}
	case agentsv1alpha1.SenderGitLab:
		c.Event, c.DeliveryID = single(h, hdrGitLabEvent), single(h, hdrGitLabDelivery)
	case agentsv1alpha1.SenderStandardWebhooks:
		c.Event = parseBodyFields(body).Type
		// The ID that was signed: from the same header family as the
		// signature verify used, never an unsigned header beside it.
		if len(h[hdrWebhookSignature]) > 0 {
			c.DeliveryID = single(h, hdrWebhookID)
		} else {
			c.DeliveryID = single(h, hdrSvixID)
		}
	case agentsv1alpha1.SenderStripe:
		f := parseBodyFields(body)
		c.Event, c.DeliveryID = f.Type, f.ID
	case agentsv1alpha1.SenderSlack:
		f := parseBodyFields(body)
		c.Event, c.DeliveryID = f.Event.Type, f.EventID
		if f.Type == slackChallenge {
			c.Event = slackChallenge
			if b, err := json.Marshal(map[string]string{"challenge": f.Challenge}); err == nil {
				c.Handshake = append(b, '\n')
			}
		}
	case agentsv1alpha1.SenderCloudEvents:
		c = DescribeCloudEvent(h, body)
	default:
		c.DeliveryID = single(h, hdrIdempotencyKey)
	}
	c.Event = Recordable(c.Event, MaxEventBytes)
	return c
}

// admits tells whether the allow-list lets event through.
func (s *Sender) Admits(event string) bool {
	if s.events == nil {
		return true
	}
	_, ok := s.events[event]
	return ok
}

// recordable makes a header or body value fit for a run's spec: valid
// UTF-8, at most n bytes.
func Recordable(v string, n int) string {
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	if len(v) <= n {
		return v
	}
	v = v[:n]
	for !utf8.ValidString(v) {
		v = v[:len(v)-1]
	}
	return v
}

// secretHeaders carry the secrets of the sender types (signatures are not
// secrets): no field sees them, since a field's value is stored in the
// payload Secret and sent to the agent (the filter, whose value goes
// nowhere, does).
var secretHeaders = []string{SecretHeader, HeaderAuthorization, HeaderGitLabToken, "Proxy-Authorization", "Cookie"}

// WithoutCredentials is h without secretHeaders (h itself when it has none
// of them).
func WithoutCredentials(h http.Header) http.Header {
	for _, k := range secretHeaders {
		if _, ok := h[k]; ok {
			out := h.Clone()
			for _, k := range secretHeaders {
				delete(out, k)
			}
			return out
		}
	}
	return h
}
