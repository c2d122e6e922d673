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
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // the HMAC sender type offers SHA1 because some senders sign with it.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Header is one request header, kept in the order it is printed.
type Header struct{ Name, Value string }

// Call is one request to an endpoint.
type Call struct {
	Body        []byte
	ContentType string
	Headers     []Header
	// Expires is when a signed timestamp in the call leaves the receiver's
	// tolerance; zero when nothing in it expires.
	Expires time.Time
}

// Delivery is what a call says about itself besides its body: the event
// type and the delivery ID, for the senders that send them in headers
// (the others carry them in the body), and a CloudEvent's source.
type Delivery struct {
	Event, ID string
	// Source is the ce-source of a CloudEvents call in binary mode;
	// DefaultCloudEventSource when empty.
	Source string
}

// DefaultCloudEventSource is the source of the CloudEvents the plugin sends.
const DefaultCloudEventSource = "/kubectl-hookrun"

// EventInHeader tells whether the sender names its event in a header (the
// others name it in the body, or not at all). CloudEvents calls in binary
// mode name it in ce-type.
func EventInHeader(t agentsv1alpha1.SenderType) bool {
	return t == agentsv1alpha1.SenderGitHub || t == agentsv1alpha1.SenderGitLab || t == agentsv1alpha1.SenderCloudEvents
}

// NamesEvents tells whether the sender names its events, so that
// spec.sender.events can filter them.
func NamesEvents(t agentsv1alpha1.SenderType) bool {
	switch t {
	case agentsv1alpha1.SenderGitHub, agentsv1alpha1.SenderGitLab, agentsv1alpha1.SenderStandardWebhooks,
		agentsv1alpha1.SenderStripe, agentsv1alpha1.SenderSlack, agentsv1alpha1.SenderCloudEvents:
		return true
	}
	return false
}

// DefaultEvent is the event a sample call names: the first one the endpoint
// lets through, or a common one of the sender.
func DefaultEvent(spec *agentsv1alpha1.WebhookEndpointSpec) string {
	t := spec.SenderOf()
	if !NamesEvents(t) {
		return ""
	}
	if spec.Sender != nil && len(spec.Sender.Events) > 0 {
		return spec.Sender.Events[0]
	}
	switch t {
	case agentsv1alpha1.SenderGitHub:
		return "issues"
	case agentsv1alpha1.SenderGitLab:
		return "Issue Hook"
	case agentsv1alpha1.SenderStripe:
		return "invoice.payment_failed"
	case agentsv1alpha1.SenderSlack:
		return "app_mention"
	case agentsv1alpha1.SenderCloudEvents:
		return "com.example.order.refunded"
	default:
		return "order.refunded"
	}
}

// SampleBody is a small JSON body of the kind the sender sends, naming
// event and, for the senders that carry it in the body, the delivery ID id.
func SampleBody(t agentsv1alpha1.SenderType, event, id string) []byte {
	var v any
	switch t {
	case agentsv1alpha1.SenderGitHub:
		v = map[string]any{"action": "opened", "issue": map[string]any{"number": 7, "title": "Login fails"}}
	case agentsv1alpha1.SenderGitLab:
		v = map[string]any{"object_kind": "issue", "object_attributes": map[string]any{"iid": 42, "title": "Login fails", "action": "open"}}
	case agentsv1alpha1.SenderStandardWebhooks:
		v = map[string]any{"type": event, "timestamp": "2026-01-01T00:00:00Z", "data": map[string]any{"order": "A-1001", "reason": "arrived broken"}}
	case agentsv1alpha1.SenderStripe:
		v = map[string]any{"id": id, "object": "event", "type": event, "data": map[string]any{"object": map[string]any{"customer": "cus_123", "amount_due": 4200}}}
	case agentsv1alpha1.SenderSlack:
		v = map[string]any{"type": "event_callback", "event_id": id, "event": map[string]any{"type": event, "text": "<@U0BOT> is checkout down?", "channel": "C0123"}}
	case agentsv1alpha1.SenderBearer:
		v = map[string]any{"status": "firing", "alerts": []any{map[string]any{"labels": map[string]any{"alertname": "HighErrorRate", "service": "checkout"}}}}
	default:
		v = map[string]any{"service": "checkout", "version": "2.14.1", "status": "failed"}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return b
}

// BodyCarriesID tells whether the sender's delivery ID is a field of the
// body (Stripe's id, Slack's event_id) rather than a header.
func BodyCarriesID(t agentsv1alpha1.SenderType) bool {
	return t == agentsv1alpha1.SenderStripe || t == agentsv1alpha1.SenderSlack
}

// NeedsDeliveryID tells whether a call without a delivery ID would be
// refused or ambiguous: Standard Webhooks signs its webhook-id, a
// CloudEvent has an id.
func NeedsDeliveryID(t agentsv1alpha1.SenderType) bool {
	return t == agentsv1alpha1.SenderStandardWebhooks || t == agentsv1alpha1.SenderCloudEvents
}

// StructuredCloudEvent tells whether contentType is CloudEvents' structured
// (or batched) mode, whose body carries the attributes: then the call sends
// no ce-* headers.
func StructuredCloudEvent(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/cloudevents")
}

// NewDeliveryID is a delivery ID no sender has used: prefix and 16 random hex digits.
func NewDeliveryID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b)
}

// BuildCall makes the call the endpoint's sender would make with body:
// the credential (the secret itself, or a signature made with it at now),
// and the event type and delivery ID where the sender sends them in headers.
// secret is empty for an endpoint that allows unauthenticated calls.
func BuildCall(spec *agentsv1alpha1.WebhookEndpointSpec, secret string, body []byte, contentType string, d Delivery, now time.Time) (Call, error) {
	t := spec.SenderOf()
	c := Call{Body: body, ContentType: contentType}
	add := func(name, value string) {
		if value != "" {
			c.Headers = append(c.Headers, Header{name, value})
		}
	}
	if secret == "" && t != agentsv1alpha1.SenderHeader {
		return Call{}, fmt.Errorf("sender type %s needs the endpoint's secret", t)
	}
	switch t {
	case agentsv1alpha1.SenderHeader:
		add(agentsv1alpha1.SecretHeader, secret)
		add("Idempotency-Key", d.ID)
	case agentsv1alpha1.SenderBearer:
		add("Authorization", "Bearer "+secret)
		add("Idempotency-Key", d.ID)
	case agentsv1alpha1.SenderCloudEvents:
		add("Authorization", "Bearer "+secret)
		if StructuredCloudEvent(contentType) {
			break // the body is the whole event
		}
		if d.ID == "" || d.Event == "" {
			return Call{}, fmt.Errorf("a CloudEvents call in binary mode needs an event type and an id (ce-type, ce-id)")
		}
		source := d.Source
		if source == "" {
			source = DefaultCloudEventSource
		}
		add("ce-specversion", "1.0")
		add("ce-id", d.ID)
		add("ce-source", source)
		add("ce-type", d.Event)
	case agentsv1alpha1.SenderGitLab:
		add("X-Gitlab-Token", secret)
		add("X-Gitlab-Event", d.Event)
		add("X-Gitlab-Event-UUID", d.ID)
	case agentsv1alpha1.SenderGitHub:
		add("X-GitHub-Event", d.Event)
		add("X-GitHub-Delivery", d.ID)
		add("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac(sha256.New, []byte(secret), body)))
	case agentsv1alpha1.SenderHMAC:
		s := spec.Sender.HMAC
		if s == nil {
			return Call{}, fmt.Errorf("sender type HMAC without spec.sender.hmac")
		}
		sum := mac(hmacHash(s.Algorithm), []byte(secret), body)
		sig := hex.EncodeToString(sum)
		if s.Encoding == agentsv1alpha1.EncodingBase64 {
			sig = base64.StdEncoding.EncodeToString(sum)
		}
		add(s.Header, s.Prefix+sig)
		add("Idempotency-Key", d.ID)
	case agentsv1alpha1.SenderStandardWebhooks:
		if d.ID == "" {
			return Call{}, fmt.Errorf("a Standard Webhooks call needs a delivery ID: webhook-id is signed")
		}
		key, err := agentsv1alpha1.SigningKey(t, []byte(secret))
		if err != nil {
			return Call{}, fmt.Errorf("the endpoint's secret is %w", err)
		}
		ts := strconv.FormatInt(now.Unix(), 10)
		sum := mac(sha256.New, key, []byte(d.ID), []byte("."), []byte(ts), []byte("."), body)
		add("webhook-id", d.ID)
		add("webhook-timestamp", ts)
		add("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(sum))
		c.Expires = now.Add(spec.ToleranceOf())
	case agentsv1alpha1.SenderStripe:
		ts := strconv.FormatInt(now.Unix(), 10)
		sum := mac(sha256.New, []byte(secret), []byte(ts), []byte("."), body)
		add("Stripe-Signature", "t="+ts+",v1="+hex.EncodeToString(sum))
		c.Expires = now.Add(spec.ToleranceOf())
	case agentsv1alpha1.SenderSlack:
		ts := strconv.FormatInt(now.Unix(), 10)
		sum := mac(sha256.New, []byte(secret), []byte("v0:"+ts+":"), body)
		add("X-Slack-Request-Timestamp", ts)
		add("X-Slack-Signature", "v0="+hex.EncodeToString(sum))
		c.Expires = now.Add(spec.ToleranceOf())
	default:
		return Call{}, fmt.Errorf("unknown sender type %q", t)
	}
	return c, nil
}

func mac(h func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(h, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func hmacHash(a agentsv1alpha1.HMACAlgorithm) func() hash.Hash {
	switch a {
	case agentsv1alpha1.HMACSHA1:
		return sha1.New
	case agentsv1alpha1.HMACSHA512:
		return sha512.New
	default:
		return sha256.New
	}
}

// Setup says, in words, what the sender must be configured with.
func Setup(spec *agentsv1alpha1.WebhookEndpointSpec, name string) []string {
	t := spec.SenderOf()
	secret := "the secret (kubectl hookrun secret " + name + ")"
	if spec.SecretRef != nil {
		secret = fmt.Sprintf("the secret in Secret %s, key %s", spec.SecretRef.Name, spec.SecretRef.Key)
	}
	if token := TokenOf(spec); token != "" {
		secret = token
	}
	var lines []string
	switch t {
	case agentsv1alpha1.SenderHeader:
		if spec.AllowUnauthenticated {
			lines = []string{"POST to the URL; no secret (allowUnauthenticated: anyone with the URL can call it, runs get trust Low)"}
		} else {
			lines = []string{"POST to the URL with header " + agentsv1alpha1.SecretHeader + ": " + secret}
		}
	case agentsv1alpha1.SenderBearer:
		lines = []string{"POST to the URL with header Authorization: Bearer followed by " + secret}
	case agentsv1alpha1.SenderCloudEvents:
		lines = []string{"CloudEvents 1.0 over HTTP, binary or structured mode: sink URL = the URL, header Authorization: Bearer followed by " + secret,
			"the event's type is its event, source and id its delivery; batches are refused (415); OPTIONS with WebHook-Request-Origin is answered 200"}
	case agentsv1alpha1.SenderGitLab:
		lines = []string{"GitLab webhook: URL = the URL, Secret token = " + secret, "event types arrive in X-Gitlab-Event (Issues events: Issue Hook)"}
	case agentsv1alpha1.SenderGitHub:
		lines = []string{"GitHub webhook: Payload URL = the URL, Content type = application/json, Secret = " + secret,
			"GitHub's ping is answered 200 pong and starts no run"}
	case agentsv1alpha1.SenderHMAC:
		s := spec.Sender.HMAC
		lines = []string{fmt.Sprintf("the sender signs the raw body: %s: %s<%s of HMAC-%s(secret, body)>, with %s", s.Header, s.Prefix, strings.ToLower(string(s.Encoding)), s.Algorithm, secret)}
	case agentsv1alpha1.SenderStandardWebhooks:
		lines = []string{"Standard Webhooks (Svix) endpoint: URL = the URL, signing secret = " + secret + " (whsec_...)",
			fmt.Sprintf("signed timestamps must be within %s of the receiver's clock", spec.ToleranceOf())}
	case agentsv1alpha1.SenderStripe:
		lines = []string{"Stripe webhook endpoint: Endpoint URL = the URL; put its Signing secret (whsec_...) into " + secret,
			fmt.Sprintf("signed timestamps must be within %s of the receiver's clock", spec.ToleranceOf())}
	case agentsv1alpha1.SenderSlack:
		lines = []string{"Slack app: Event Subscriptions, Request URL = the URL; put the app's Signing Secret into " + secret,
			"Slack's url_verification is answered with its challenge and starts no run"}
	}
	if spec.Sender != nil && len(spec.Sender.Events) > 0 {
		lines = append(lines, "events that start runs: "+strings.Join(spec.Sender.Events, ", ")+" (others are answered 200 ignored)")
	}
	if o := spec.RotationOverlapOf(); o > 0 {
		lines = append(lines, fmt.Sprintf("after a rotation the previous secret still works for %s", o))
	}
	return lines
}
