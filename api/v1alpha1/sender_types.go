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

package v1alpha1

import (
	"encoding/base64"
	"errors"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SenderType names the scheme a sender authenticates its calls with.
// +kubebuilder:validation:Enum=Header;GitHub;GitLab;Bearer;HMAC;StandardWebhooks;Stripe;Slack;CloudEvents
type SenderType string

const (
	// SenderHeader sends the secret in X-Service-Webhook-Secret (the default).
	SenderHeader SenderType = "Header"
	// SenderGitHub signs the body: X-Hub-Signature-256: sha256=<hex HMAC-SHA256>.
	SenderGitHub SenderType = "GitHub"
	// SenderGitLab sends the secret in X-Gitlab-Token.
	SenderGitLab SenderType = "GitLab"
	// SenderBearer sends the secret as Authorization: Bearer <secret>.
	SenderBearer SenderType = "Bearer"
	// SenderHMAC signs the body as spec.sender.hmac describes.
	SenderHMAC SenderType = "HMAC"
	// SenderStandardWebhooks signs id.timestamp.body (webhook-id,
	// webhook-timestamp, webhook-signature), as Svix and its users do.
	SenderStandardWebhooks SenderType = "StandardWebhooks"
	// SenderStripe signs t.body in Stripe-Signature.
	SenderStripe SenderType = "Stripe"
	// SenderSlack signs v0:timestamp:body in X-Slack-Signature.
	SenderSlack SenderType = "Slack"
	// SenderCloudEvents sends CloudEvents 1.0 over HTTP (binary or
	// structured mode) with the secret as Authorization: Bearer <secret>.
	SenderCloudEvents SenderType = "CloudEvents"
)

// Signed tells whether the sender signs its calls with the secret as the
// key (the receiver needs the key), rather than sending the secret itself
// (the receiver needs only its SHA-256 digest).
func (t SenderType) Signed() bool {
	switch t {
	case SenderGitHub, SenderHMAC, SenderStandardWebhooks, SenderStripe, SenderSlack:
		return true
	}
	return false
}

// HMACAlgorithm is the hash function of a generic HMAC signature.
// +kubebuilder:validation:Enum=SHA1;SHA256;SHA512
type HMACAlgorithm string

const (
	HMACSHA1   HMACAlgorithm = "SHA1"
	HMACSHA256 HMACAlgorithm = "SHA256"
	HMACSHA512 HMACAlgorithm = "SHA512"
)

// SignatureEncoding is how a generic HMAC signature is written in its header.
// +kubebuilder:validation:Enum=Hex;Base64
type SignatureEncoding string

const (
	// EncodingHex is hex, either letter case.
	EncodingHex SignatureEncoding = "Hex"
	// EncodingBase64 is standard base64 with padding.
	EncodingBase64 SignatureEncoding = "Base64"
)

// Defaults of spec.sender.
const (
	// DefaultSenderTolerance is how far a signed timestamp may be from the
	// receiver's clock, either way.
	DefaultSenderTolerance = 5 * time.Minute
	// MaxRotationOverlap bounds spec.sender.rotationOverlap.
	MaxRotationOverlap = 24 * time.Hour
)

// HMACSettings describe a generic HMAC signature over the raw body:
// `<header>: <prefix><encoded HMAC(secret, body)>`.
type HMACSettings struct {
	// header is the request header that carries the signature.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`
	Header string `json:"header"`
	// algorithm is the hash function: SHA1, SHA256 (the default) or SHA512.
	// +optional
	// +kubebuilder:default=SHA256
	Algorithm HMACAlgorithm `json:"algorithm,omitempty"`
	// encoding is Hex (the default) or Base64 (standard, with padding).
	// +optional
	// +kubebuilder:default=Hex
	Encoding SignatureEncoding `json:"encoding,omitempty"`
	// prefix is a literal the header value starts with before the
	// signature, for example "sha256=": printable ASCII (space to "~"),
	// as a header value can carry it and a terminal can print it.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[ -~]*$`
	Prefix string `json:"prefix,omitempty"`
}

// Sender says how the system that calls an endpoint authenticates, which
// events it sends and how its duplicate deliveries are recognised. See
// docs/senders.md for each provider.
// +kubebuilder:validation:XValidation:rule="(self.type == 'HMAC') == has(self.hmac)",message="spec.sender.hmac is required when type is HMAC (the header, algorithm and encoding the sender signs with) and not allowed for other types"
// +kubebuilder:validation:XValidation:rule="!has(self.events) || size(self.events) == 0 || self.type in ['GitHub', 'GitLab', 'StandardWebhooks', 'Stripe', 'Slack', 'CloudEvents']",message="spec.sender.events needs a sender that names its events (GitHub, GitLab, StandardWebhooks, Stripe, Slack or CloudEvents): remove events or change the type"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerance) || self.type in ['StandardWebhooks', 'Stripe', 'Slack']",message="spec.sender.tolerance applies only to timestamped signatures (StandardWebhooks, Stripe, Slack): remove it"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerance) || (duration(self.tolerance) >= duration('1s') && duration(self.tolerance) <= duration('1h'))",message="spec.sender.tolerance must be between 1s and 1h"
// +kubebuilder:validation:XValidation:rule="!has(self.oidc) || self.type in ['Bearer', 'CloudEvents']",message="spec.sender.oidc needs type Bearer or CloudEvents: the token is sent as Authorization: Bearer <token>"
// +kubebuilder:validation:XValidation:rule="!has(self.oidc) || !has(self.rotationOverlap)",message="spec.sender.rotationOverlap applies to secrets; an endpoint with spec.sender.oidc has none: remove it"
// +kubebuilder:validation:XValidation:rule="!has(self.rotationOverlap) || (duration(self.rotationOverlap) >= duration('0s') && duration(self.rotationOverlap) <= duration('24h'))",message="spec.sender.rotationOverlap must be between 0s and 24h"
type Sender struct {
	// type is the sender's scheme: Header (the default: the secret in
	// X-Service-Webhook-Secret), GitHub, GitLab, Bearer, HMAC,
	// StandardWebhooks, Stripe, Slack or CloudEvents.
	// +optional
	// +kubebuilder:default=Header
	Type SenderType `json:"type,omitempty"`
	// events, if not empty, lists the event types that start runs; a call
	// with another event type (or none) is answered 200 {"status":"ignored"}
	// and starts nothing. Only for senders that name their events.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Events []string `json:"events,omitempty"`
	// hmac describes the signature of type HMAC; required for it, not
	// allowed otherwise.
	// +optional
	HMAC *HMACSettings `json:"hmac,omitempty"`
	// tolerance is how far the signed timestamp of StandardWebhooks, Stripe
	// and Slack calls may be from the receiver's clock, either way (1s to
	// 1h; default 5m). Older or newer calls are refused as replays.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	Tolerance *metav1.Duration `json:"tolerance,omitempty"`
	// rotationOverlap is how long the previous secret still verifies after
	// the secret changes (a rotation, or a new value in spec.secretRef's
	// Secret), so senders can be switched over without failed calls. 0 (the
	// default): the previous secret stops at once. At most 24h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	RotationOverlap *metav1.Duration `json:"rotationOverlap,omitempty"`
	// oidc, for types Bearer and CloudEvents, authenticates calls with a
	// signed token (a JWT) instead of a secret: a service account token of
	// the cluster, or one of another OpenID Connect issuer the receiver
	// trusts. No secret is generated. See docs/senders-cluster.md.
	// +optional
	OIDC *OIDCSender `json:"oidc,omitempty"`
}

// MaxClaimsLength bounds spec.sender.oidc.claims (the CRD's bound).
const MaxClaimsLength = 4096

// OIDCSender is what a call's bearer token must be: a JWT of issuer, for
// audience, whose claims pass claims.
// +kubebuilder:validation:XValidation:rule="!has(self.issuer) || size(self.issuer) == 0 || (has(self.claims) && size(self.claims) > 0)",message="spec.sender.oidc.claims is required with an issuer: every user of the issuer (any GitHub repository, for GitHub's) can get a token for any audience; say whose tokens to accept, for example claims.repository == \"org/repo\""
type OIDCSender struct {
	// issuer is the token's iss. Empty (the default): the cluster's own
	// service account tokens, whatever the API server names its issuer.
	// Any other issuer must be listed in the receiver's --oidc-issuers
	// (chart value receiver.oidcIssuers); until it is, the endpoint is
	// Ready=False OIDCIssuerNotAllowed and the issuer is never contacted.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^https://[^\s?#]+$`
	Issuer string `json:"issuer,omitempty"`
	// audience must be among the token's aud: a value only this endpoint's
	// senders ask for (a token for another service must not be accepted).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Audience string `json:"audience"`
	// claims is a CEL expression over the token's claims (the map claims)
	// that must be true, for example
	// claims.sub == "system:serviceaccount:team-a:nightly" or
	// claims.repository == "org/repo" && claims.ref == "refs/heads/main".
	// Required with an issuer; without one (the cluster's tokens, of the
	// endpoint's namespace only) every account of the namespace is accepted.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Claims string `json:"claims,omitempty"`
}

// OIDCOf returns spec.sender.oidc, nil when the endpoint authenticates
// otherwise.
func (s *WebhookEndpointSpec) OIDCOf() *OIDCSender {
	if s.Sender == nil {
		return nil
	}
	return s.Sender.OIDC
}

// SenderOf returns the endpoint's sender type: Header when spec.sender is absent.
func (s *WebhookEndpointSpec) SenderOf() SenderType {
	if s.Sender == nil || s.Sender.Type == "" {
		return SenderHeader
	}
	return s.Sender.Type
}

// ToleranceOf returns spec.sender.tolerance, or the default.
func (s *WebhookEndpointSpec) ToleranceOf() time.Duration {
	if s.Sender == nil || s.Sender.Tolerance == nil || s.Sender.Tolerance.Duration <= 0 {
		return DefaultSenderTolerance
	}
	return s.Sender.Tolerance.Duration
}

// RotationOverlapOf returns spec.sender.rotationOverlap, or 0.
func (s *WebhookEndpointSpec) RotationOverlapOf() time.Duration {
	if s.Sender == nil || s.Sender.RotationOverlap == nil || s.Sender.RotationOverlap.Duration < 0 {
		return 0
	}
	return min(s.Sender.RotationOverlap.Duration, MaxRotationOverlap)
}

// RunSender is what a run records of the call's sender; the agent receives
// it in the message metadata.
type RunSender struct {
	// type is the endpoint's sender type at the time of the call.
	// +required
	Type SenderType `json:"type"`
	// event is the event type the sender named, if any.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Event string `json:"event,omitempty"`
	// deliveryId is the sender's delivery ID (or Idempotency-Key), if any;
	// for CloudEvents the event's id, which identifies the delivery
	// together with source.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DeliveryID string `json:"deliveryId,omitempty"`
	// source is the CloudEvent's source attribute (CloudEvents only).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Source string `json:"source,omitempty"`
	// subject is the CloudEvent's subject attribute, when the event has one
	// (CloudEvents only).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Subject string `json:"subject,omitempty"`
	// tokenSubject is the sub of the sender's verified token (OIDC senders
	// only); the agent receives it as the metadata's sender.subject.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	TokenSubject string `json:"tokenSubject,omitempty"`
}

// ErrNotStandardWebhooksSecret: a StandardWebhooks sender's secret must be
// "whsec_" followed by standard base64.
var ErrNotStandardWebhooksSecret = errors.New("not a Standard Webhooks secret (whsec_ and base64)")

// SigningKey is the HMAC key a sender of type t signs with, given its
// secret: the secret's bytes, or for StandardWebhooks the base64 after
// "whsec_", decoded.
func SigningKey(t SenderType, secret []byte) ([]byte, error) {
	if t != SenderStandardWebhooks {
		return secret, nil
	}
	rest, ok := strings.CutPrefix(string(secret), StandardWebhooksSecretPrefix)
	if !ok {
		return nil, ErrNotStandardWebhooksSecret
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return nil, ErrNotStandardWebhooksSecret
	}
	return key, nil
}
