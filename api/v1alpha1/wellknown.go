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
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Label keys. Their values are object names in the labelled object's namespace.
const (
	// LabelEndpoint names the WebhookEndpoint an AgentRun or a generated
	// Secret belongs to. List an endpoint's history with
	// `kubectl get agentruns -l agents.hookrun.dev/endpoint=NAME`.
	LabelEndpoint = "agents.hookrun.dev/endpoint"
	// LabelAgent names the Agent an AgentRun was started for.
	LabelAgent = "agents.hookrun.dev/agent"
	// LabelThread names the AgentThread an AgentRun is appended to.
	LabelThread = "agents.hookrun.dev/thread"
)

// LabelSkipReason says, as a value selectors and the operator can match,
// why the receiver recorded a call as a skipped AgentRun (status.message
// says it in words). The receiver sets it only to SkipReasonOwnerNotMember:
// the endpoint's owner could no longer trigger its Agent. The operator, the
// only writer of WebhookEndpoint status, pauses the endpoint for such a run
// (status.pauseReason OwnerNotMember) while its owner is still not a member.
// List them with `kubectl get agentruns -l agents.hookrun.dev/skip-reason=OwnerNotMember`.
const (
	LabelSkipReason          = "agents.hookrun.dev/skip-reason"
	SkipReasonOwnerNotMember = ReasonOwnerNotMember
)

// LabelAllowReference marks a Secret that hookrun may use when an Agent's
// spec.a2a.authSecretRef or a WebhookEndpoint's spec.secretRef names it
// (value AllowReferenceTrue). The operator reads no other Secret's data for
// a reference, so a reference cannot turn the operator's rights on a Secret
// nobody meant for hookrun: `kubectl label secret NAME
// agents.hookrun.dev/allow-reference=true`.
const (
	LabelAllowReference = "agents.hookrun.dev/allow-reference"
	AllowReferenceTrue  = "true"
)

// The signing-key Secrets: for every endpoint whose sender signs its calls
// (GitHub, HMAC, StandardWebhooks, Stripe, Slack), the operator keeps one
// Secret in the receiver's namespace holding the endpoint's secret, named
// SigningKeySecretName(endpoint UID). The receiver reads only these, and
// derives the HMAC key from the secret for the endpoint's sender type.
const (
	// LabelSigningKey marks a signing-key Secret (value "true").
	LabelSigningKey = "agents.hookrun.dev/signing-key"
	// LabelEndpointNamespace is the namespace of the endpoint a signing-key
	// Secret belongs to (its name is in LabelEndpoint).
	LabelEndpointNamespace = "agents.hookrun.dev/endpoint-namespace"
	// LabelEndpointUID is the UID of the endpoint a signing-key Secret belongs to.
	LabelEndpointUID = "agents.hookrun.dev/endpoint-uid"
	// AnnotationKeyHash is the secretHash of the secret in SigningKeySecret:
	// the receiver uses it only while it equals the endpoint's
	// status.secretHash (or previousSecretHash), and only if the secret
	// hashes to it.
	AnnotationKeyHash = "agents.hookrun.dev/secret-hash"
	// AnnotationPreviousKeyHash is the hash of the secret in
	// SigningKeyPreviousSecret (rotation overlap).
	AnnotationPreviousKeyHash = "agents.hookrun.dev/previous-secret-hash"
	// AnnotationSenderType is the sender type the operator checked the
	// secret's form for.
	AnnotationSenderType = "agents.hookrun.dev/sender-type"
	// SigningKeySecret and SigningKeyPreviousSecret are the data keys of
	// the current and the previous secret.
	SigningKeySecret         = "secret"
	SigningKeyPreviousSecret = "previousSecret"
	// StandardWebhooksSecretPrefix starts a Standard Webhooks secret; the
	// key is the base64 text after it, decoded.
	StandardWebhooksSecretPrefix = "whsec_"
)

// SigningKeySecretName is the signing-key Secret of the endpoint with uid.
func SigningKeySecretName(uid string) string {
	return "hookrun-signing-key-" + uid
}

// FinalizerCleanup is the operator's finalizer on every Agent. WebhookEndpoints
// and AgentThreads are applied by their users (often through GitOps, and Argo
// CD does not prune objects that carry owner references), so they carry no
// owner reference to their Agent: when an Agent is deleted the operator
// deletes the endpoints and threads whose spec.agentRef names it, waits until
// they are gone, and then removes this finalizer.
const FinalizerCleanup = "agents.hookrun.dev/cleanup"

// Annotation keys.
const (
	// AnnotationRotateSecret rotates an endpoint's generated secret whenever
	// its value changes (any value different from status.lastHandledRotation,
	// for example a timestamp).
	AnnotationRotateSecret = "agents.hookrun.dev/rotate-secret"
	// AnnotationPayloadStoredBy is set on a queued AgentRun by a receiver
	// replica that stored its payload for a duplicate delivery: the change
	// of resourceVersion stops the first writer from removing the run.
	AnnotationPayloadStoredBy = "agents.hookrun.dev/payload-stored-by"
	// AnnotationTraceparent is set on an AgentRun by the receiver that
	// created it: the W3C traceparent of its receive span, which the
	// operator's spans of the run (admission, send, poll) continue.
	AnnotationTraceparent = "agents.hookrun.dev/traceparent"
	// AnnotationTracestate is the W3C tracestate that came with the
	// sender's traceparent (authenticated endpoints only, at most
	// MaxTracestateBytes), passed on to the agent.
	AnnotationTracestate = "agents.hookrun.dev/tracestate"
)

// The keys hookrun defines: the operator's cache keeps these labels and
// annotations of every object and no other, whatever their prefix. Every
// namespace writes labels and annotations under agents.hookrun.dev/ (on its
// Secrets, watched cluster-wide), so a prefix would let one tenant fill the
// leader's memory; a fixed list of keys bounds what one object keeps.
var (
	hookrunLabels = map[string]bool{
		LabelEndpoint: true, LabelAgent: true, LabelThread: true, LabelSkipReason: true,
		LabelAllowReference: true, LabelSigningKey: true, LabelEndpointNamespace: true,
		LabelEndpointUID: true, LabelRejectionReport: true,
	}
	hookrunAnnotations = map[string]bool{
		AnnotationKeyHash: true, AnnotationPreviousKeyHash: true, AnnotationSenderType: true,
		AnnotationRotateSecret: true, AnnotationPayloadStoredBy: true, AnnotationTraceparent: true,
		AnnotationTracestate: true, AnnotationReportWrittenAt: true,
	}
)

// IsHookrunLabel tells whether key is a label key hookrun defines.
func IsHookrunLabel(key string) bool { return hookrunLabels[key] }

// IsHookrunAnnotation tells whether key is an annotation key hookrun defines.
func IsHookrunAnnotation(key string) bool { return hookrunAnnotations[key] }

// MaxKeptAnnotationBytes is the longest annotation value the operator keeps
// as it is (label values are at most 63 bytes). A longer value of a hookrun
// annotation is kept as its SHA-256 (KeptAnnotationValue): no value hookrun
// writes is that long, and a user's rotate-secret value, which may be, is
// compared only for equality.
const MaxKeptAnnotationBytes = 256

// KeptAnnotationValue is the value of annotation key as the operator keeps
// it: the value itself up to MaxKeptAnnotationBytes (MaxTracestateBytes for
// the tracestate, which the receiver writes up to that length), else
// "sha256:" and the lower-case hex SHA-256 of the value. It is idempotent:
// a hash is short enough to be kept as it is.
func KeptAnnotationValue(key, value string) string {
	limit := MaxKeptAnnotationBytes
	if key == AnnotationTracestate {
		limit = MaxTracestateBytes
	}
	if len(value) <= limit {
		return value
	}
	sum := sha256.Sum256([]byte(value))
	return SecretHashPrefix + hex.EncodeToString(sum[:])
}

// RotationValue is the form of a rotate-secret annotation value that
// status.lastHandledRotation records and is compared with: the value up to
// MaxKeptAnnotationBytes, else its SHA-256, as the operator's cache keeps it.
func RotationValue(annotation string) string {
	return KeptAnnotationValue(AnnotationRotateSecret, annotation)
}

// MaxTracestateBytes bounds the tracestate a run keeps (W3C Trace Context
// asks to propagate at least 512 characters): list members beyond it are
// dropped from the end.
const MaxTracestateBytes = 512

// Secrets written by hookrun.
const (
	// WebhookSecretKey is the key of the plain secret in a generated
	// endpoint Secret (named GeneratedSecretName(endpoint)).
	WebhookSecretKey = "secret"
	// SecretTypeWebhookPayload is the type of the Secret that holds a run's
	// raw request body.
	SecretTypeWebhookPayload = "agents.hookrun.dev/webhook-payload"
	// PayloadBodyKey is the key of the raw body in a payload Secret.
	PayloadBodyKey = "body"
	// PayloadFieldsKey is the key of a run's fields (the endpoint's
	// spec.fields evaluated on the call) in its payload Secret: one JSON
	// object, a field that failed null.
	PayloadFieldsKey = "fields"
	// PayloadFieldErrorsKey is the key of the names of the fields that
	// failed, a JSON array in byte order, when any did.
	PayloadFieldErrorsKey = "fieldErrors"
	// MinSecretBytes is the least number of bytes an endpoint secret has;
	// generated secrets are made of exactly this many random bytes.
	MinSecretBytes = 32
	// MaxPayloadBytes is the largest request body the receiver accepts (1 MiB).
	MaxPayloadBytes = 1 << 20
)

// PayloadGrace is how long the operator lets a queued run wait for its
// payload Secret (the receiver writes it right after the run) before the run
// fails. The receiver finishes storing a call, or removes its run, sooner.
const PayloadGrace = 30 * time.Second

// SecretHeader is the request header that carries an endpoint's secret.
const SecretHeader = "X-Service-Webhook-Secret"

// GeneratedSecretName is the name of the Secret the operator generates for
// the endpoint named endpointName.
func GeneratedSecretName(endpointName string) string {
	return endpointName + "-webhook-secret"
}
