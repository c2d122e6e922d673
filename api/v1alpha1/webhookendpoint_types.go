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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EndpointPhase says whether an endpoint accepts calls.
// +kubebuilder:validation:Enum=Active;Paused
type EndpointPhase string

const (
	// EndpointActive endpoints accept calls.
	EndpointActive EndpointPhase = "Active"
	// EndpointPaused endpoints answer every call with 422; status.pauseReason says why.
	EndpointPaused EndpointPhase = "Paused"
)

// PauseReason says why an endpoint is paused.
// +kubebuilder:validation:Enum=Paused;OwnerNotMember;""
type PauseReason string

const (
	// PauseReasonNone: the endpoint is not paused.
	PauseReasonNone PauseReason = ""
	// PauseReasonPaused: the owner set spec.paused.
	PauseReasonPaused PauseReason = ReasonPaused
	// PauseReasonOwnerNotMember: a call arrived after the owner lost membership.
	PauseReasonOwnerNotMember PauseReason = ReasonOwnerNotMember
)

// AuthMode tells whether calls must carry the endpoint's secret.
// +kubebuilder:validation:Enum=Secret;None;OIDC
type AuthMode string

const (
	// AuthSecret: calls must carry the secret in X-Service-Webhook-Secret.
	AuthSecret AuthMode = "Secret"
	// AuthNone: anyone with the URL can call (spec.allowUnauthenticated).
	AuthNone AuthMode = "None"
	// AuthOIDC: calls must carry a token of spec.sender.oidc's issuer, for
	// its audience; the endpoint has no secret.
	AuthOIDC AuthMode = "OIDC"
)

// WebhookEndpointSpec is what the endpoint's owner declares.
// +kubebuilder:validation:XValidation:rule="self.threadStrategy != 'ContinueExisting' || has(self.targetThreadRef)",message="spec.targetThreadRef is required when threadStrategy is ContinueExisting: name an AgentThread of the same Agent"
// +kubebuilder:validation:XValidation:rule="self.threadStrategy == 'ContinueExisting' || !has(self.targetThreadRef)",message="spec.targetThreadRef is only allowed when threadStrategy is ContinueExisting"
// +kubebuilder:validation:XValidation:rule="self.threadStrategy == 'NewThreadEachRun' || !has(self.threadNamingHint) || size(self.threadNamingHint) == 0",message="spec.threadNamingHint is only allowed when threadStrategy is NewThreadEachRun"
// +kubebuilder:validation:XValidation:rule="!self.allowUnauthenticated || !has(self.secretRef)",message="spec.secretRef cannot be set when allowUnauthenticated is true: remove one of them"
// +kubebuilder:validation:XValidation:rule="!self.allowUnauthenticated || !has(self.sender) || self.sender.type == 'Header'",message="spec.sender.type needs a secret: remove allowUnauthenticated (a secret is then generated), or remove spec.sender"
// +kubebuilder:validation:XValidation:rule="!has(self.sender) || !has(self.sender.oidc) || !has(self.secretRef)",message="spec.secretRef cannot be set with spec.sender.oidc: calls authenticate with the issuer's tokens, and the endpoint has no secret"
// +kubebuilder:validation:XValidation:rule="!has(self.payload) || self.payload != 'Fields' || (has(self.fields) && size(self.fields) > 0)",message="spec.fields is required when spec.payload is Fields: name the values the agent is sent instead of the body"
// +kubebuilder:validation:XValidation:rule="!has(self.sender) || !(self.sender.type in ['Stripe', 'Slack']) || has(self.secretRef)",message="spec.secretRef is required when sender.type is Stripe or Slack: the provider issues the signing secret; store it in a Secret and name it in spec.secretRef"
type WebhookEndpointSpec struct {
	// agentRef names the Agent in the same namespace whose runs this endpoint starts.
	// +required
	AgentRef LocalObjectReference `json:"agentRef"`

	// prompt is the standing instruction sent before every payload.
	// At most 32768 characters and 65536 bytes of UTF-8: every character
	// of the two-byte range counts once, while a prompt of four-byte
	// characters is bounded in bytes too.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	// +kubebuilder:validation:XValidation:rule="size(bytes(self)) <= 65536",message="spec.prompt may be at most 65536 bytes of UTF-8"
	Prompt string `json:"prompt"`

	// threadStrategy is NewThreadEachRun (a new thread per call) or
	// ContinueExisting (every call appended to targetThreadRef).
	// +required
	ThreadStrategy ThreadStrategy `json:"threadStrategy"`

	// targetThreadRef names the AgentThread of the same Agent that every run
	// is appended to. Required with ContinueExisting, not allowed otherwise.
	// +optional
	TargetThreadRef *LocalObjectReference `json:"targetThreadRef,omitempty"`

	// threadNamingHint tells the agent how to title each new thread from the
	// payload (for example "use the issue number"). Only with NewThreadEachRun;
	// when empty the title is "Webhook: {agent displayName or name}".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ThreadNamingHint string `json:"threadNamingHint,omitempty"`

	// allowUnauthenticated lets anyone with the URL call the endpoint without
	// a secret. Such runs get trust Low, and a stricter pre-parse rate limit
	// applies. Setting it back to false generates a secret at once.
	// +optional
	// +kubebuilder:default=false
	AllowUnauthenticated bool `json:"allowUnauthenticated,omitempty"`

	// model overrides the Agent's model for this endpoint's runs.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model,omitempty"`

	// paused stops new runs; calls answer 422 "Endpoint is paused". URL,
	// secret, configuration and history are kept.
	// +optional
	// +kubebuilder:default=false
	Paused bool `json:"paused,omitempty"`

	// owner is the member whose account the runs use. Defaulted at admission
	// from the creating user where the API server serves
	// MutatingAdmissionPolicy; elsewhere the creator sets it to themselves.
	// Only the owner may change the spec.
	// +optional
	Owner *Owner `json:"owner,omitempty"`

	// secretRef brings your own secret (for GitOps) instead of a generated
	// one: the operator hashes this key (at least 32 bytes) and follows its
	// changes.
	// +optional
	SecretRef *SecretKeyReference `json:"secretRef,omitempty"`

	// endpointIDSecretRef pins the endpoint ID, and with it the URL, to the
	// value of this Secret key instead of a random one: an endpoint applied
	// again after a cluster rebuild, with the Secret restored (External
	// Secrets, Sealed Secrets), keeps the URL its senders know. The value
	// must be 43 characters of base64url without padding, the text form of
	// 32 bytes, as every endpoint ID is (make it from 32 random bytes: it is
	// the URL, and the only credential of an unauthenticated endpoint). The
	// Secret must carry the label agents.hookrun.dev/allow-reference: "true"
	// and the requester must be allowed to read it. It is read once, while
	// the endpoint has no ID: a later change of the Secret never changes the
	// ID. It can be set when the endpoint is created, or while it has no ID
	// yet. Until the value is read the endpoint has no URL.
	// +optional
	EndpointIDSecretRef *SecretKeyReference `json:"endpointIDSecretRef,omitempty"`

	// sender says how the calling system authenticates (the secret in a
	// header, a token, or a signature of the body), which of its events
	// start runs, and how long a previous secret still works after a
	// rotation. Absent: type Header, the X-Service-Webhook-Secret header.
	// +optional
	Sender *Sender `json:"sender,omitempty"`

	// filter is a CEL expression that decides whether a call starts a run.
	// It is evaluated after the call is authenticated and passed the checks
	// and sender.events; it sees headers (lower-case name to first value),
	// event (the sender's event type, or ""), body (the body parsed as JSON,
	// or null) and rawBody (the body as a string when it is UTF-8, else "").
	// false, or an evaluation error (a missing key, say), answers 200
	// {"status":"ignored"}: no run, nothing recorded, nothing taken from the
	// invocation rate limit. For example: event == "issues" &&
	// body.action == "opened". An expression that does not compile, is not
	// a bool or may cost too much makes the endpoint Ready=False
	// FilterInvalid, and calls answer 422 filter_invalid until it is fixed.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Filter string `json:"filter,omitempty"`

	// fields names values taken from each call, each a CEL expression over
	// the variables of spec.filter (headers, event, body, rawBody) and of
	// any type, evaluated once when the call is accepted and kept with its
	// run. The agent gets them in the message's metadata ("fields", and
	// "fieldErrors" naming those that failed), and in place of the body
	// when spec.payload is Fields. A field whose expression fails, or
	// whose JSON exceeds 4 KiB, is null and named in fieldErrors. At most
	// 32 names, each an identifier of up to 63 characters; the expressions
	// together within the cost limit of one filter. Fields that do not
	// compile make the endpoint Ready=False FieldsInvalid, and calls answer
	// 422 fields_invalid until they are fixed. For example:
	// title: body.issue.title, labels: body.issue.labels.map(l, l.name).
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-zA-Z_][a-zA-Z0-9_]{0,62}$'))",message="spec.fields names must be identifiers of at most 63 characters (letters, digits and _, not starting with a digit)"
	Fields map[string]FieldExpression `json:"fields,omitempty"`

	// payload is what the message's <webhook-payload> wrapper holds: Body
	// (the call's body, the default) or Fields (spec.fields as one JSON
	// object: fewer tokens for the agent).
	// +optional
	// +kubebuilder:default=Body
	Payload PayloadMode `json:"payload,omitempty"`
}

// fieldsStripped is the one name of the spec.fields a cache keeps of an
// endpoint that has some (StripFields): no field may have it (names are
// identifiers).
const fieldsStripped = ""

// StripFields replaces spec.fields, when there are some, with a mark that
// there are: the operator's and the receiver's caches keep no fields (32
// of 1,024 characters per endpoint) and read them when they compile them.
func (s *WebhookEndpointSpec) StripFields() {
	if len(s.Fields) > 0 {
		s.Fields = map[string]FieldExpression{fieldsStripped: ""}
	}
}

// FieldsStripped tells whether spec.fields is StripFields' mark.
func (s *WebhookEndpointSpec) FieldsStripped() bool {
	_, marked := s.Fields[fieldsStripped]
	return marked && len(s.Fields) == 1
}

// FieldExpression is the CEL expression of one of spec.fields.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=1024
type FieldExpression string

// PayloadMode is what a run's message wraps: the body, or the fields.
// +kubebuilder:validation:Enum=Body;Fields
type PayloadMode string

const (
	// PayloadBody sends the call's body.
	PayloadBody PayloadMode = "Body"
	// PayloadFields sends spec.fields as one JSON object instead.
	PayloadFields PayloadMode = "Fields"
)

// RunCounts summarises the AgentRuns of an endpoint that exist.
type RunCounts struct {
	// total is the number of AgentRuns of the endpoint, in any state.
	// +optional
	Total int64 `json:"total"`
	// running is the number of AgentRuns queued or running.
	// +optional
	Running int64 `json:"running"`
	// queued is the number of AgentRuns waiting to start. The receiver
	// refuses calls with 429 backlog_full while it is at the backlog cap.
	// +optional
	Queued int64 `json:"queued"`
	// lastRunTime is when the newest AgentRun was received.
	// +optional
	LastRunTime *metav1.Time `json:"lastRunTime,omitempty"`
}

// WebhookEndpointStatus is the observed state of a WebhookEndpoint.
type WebhookEndpointStatus struct {
	// observedGeneration is the generation the status was last computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, SecretReady, AgentReady, ThreadReady, and Reconciling or
	// Stalled while True (kstatus).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// endpointID is the 43-character base64url form of 32 random bytes that
	// forms the URL. Generated once; it never changes.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]{43}$`
	EndpointID string `json:"endpointID,omitempty"`

	// endpointIDSince is when the operator wrote endpointID, to the
	// microsecond. Of two endpoints with one ID, the one holding it longer
	// keeps it (see HoldsIDBefore). Absent on an ID written before the
	// field existed, which counts as held first.
	// +optional
	EndpointIDSince *metav1.MicroTime `json:"endpointIDSince,omitempty"`

	// url is the full receive URL: {public base URL}/api/webhooks/{endpointID}/receive.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url,omitempty"`

	// authMode is Secret when calls must carry the secret header and None
	// when the endpoint allows unauthenticated calls.
	// +optional
	AuthMode AuthMode `json:"authMode,omitempty"`

	// secretName is the generated Secret (key "secret") holding the plain
	// secret, or spec.secretRef's Secret.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`

	// secretHash is "sha256:" and the hex SHA-256 of the secret's bytes. The
	// receiver compares callers' secrets against it and reads nothing else.
	// +optional
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	SecretHash string `json:"secretHash,omitempty"`

	// secretRotatedAt is when the secret was last generated or rotated.
	// +optional
	SecretRotatedAt *metav1.Time `json:"secretRotatedAt,omitempty"`

	// previousSecretHash is the hash of the secret in use before the last
	// change; it still verifies until previousSecretExpiresAt
	// (spec.sender.rotationOverlap).
	// +optional
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	PreviousSecretHash string `json:"previousSecretHash,omitempty"`
	// previousSecretExpiresAt is when the previous secret stops verifying.
	// +optional
	PreviousSecretExpiresAt *metav1.Time `json:"previousSecretExpiresAt,omitempty"`
	// lastHandledRotation is the value of the rotate-secret annotation that
	// was last acted on; a value longer than 256 bytes is recorded as its
	// SHA-256 ("sha256:" and 64 hex digits).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	LastHandledRotation string `json:"lastHandledRotation,omitempty"`

	// phase is Active or Paused.
	// +optional
	Phase EndpointPhase `json:"phase,omitempty"`

	// pauseReason says why phase is Paused: Paused (by the owner) or
	// OwnerNotMember (the owner lost the right to trigger the Agent).
	// +optional
	PauseReason PauseReason `json:"pauseReason,omitempty"`

	// ownerNotMemberHandledUntil: the AgentRuns the receiver skipped because
	// the owner was not a member (label agents.hookrun.dev/skip-reason:
	// OwnerNotMember) that were received up to this time no longer pause the
	// endpoint. The operator moves it to the newest such run it has seen
	// whenever it finds the endpoint not paused for OwnerNotMember: the owner
	// those runs named is a member again, or no longer the owner.
	// +optional
	OwnerNotMemberHandledUntil *metav1.Time `json:"ownerNotMemberHandledUntil,omitempty"`

	// runs counts the AgentRuns of this endpoint that exist.
	// +optional
	Runs RunCounts `json:"runs,omitempty"`

	// rejections counts the calls the receiver refused in the last one to
	// two hours, by error code; absent when there were none. The operator
	// writes it from the receiver replicas' reports, about once a minute at
	// most.
	// +optional
	Rejections *EndpointRejections `json:"rejections,omitempty"`
}

// WebhookEndpoint is a URL that starts a run of an Agent for every accepted
// POST. The receiver answers 202 with the run's id; the AgentRun records it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=whe;hook,categories=hookrun
// +kubebuilder:selectablefield:JSONPath=`.spec.agentRef.name`
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=`.spec.agentRef.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The Ready condition: True once the endpoint is as its spec asks (also while paused or its Agent is archived: the reason says so); Phase stays Active while it is False"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="The Ready condition's reason (kubectl describe shows its message)"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Auth",type=string,JSONPath=`.status.authMode`
// +kubebuilder:printcolumn:name="Sender",type=string,JSONPath=`.spec.sender.type`
// +kubebuilder:printcolumn:name="Runs",type=integer,JSONPath=`.status.runs.total`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters: it is used as a label value on runs"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.endpointIDSecretRef) || (has(oldSelf.spec.endpointIDSecretRef) && oldSelf.spec.endpointIDSecretRef == self.spec.endpointIDSecretRef) || !has(oldSelf.status) || !has(oldSelf.status.endpointID)",message="spec.endpointIDSecretRef can be set only when the endpoint is created, or while it has no endpoint ID yet: the ID is read once and never changes. To pin this endpoint's ID, store its status.endpointID in a Secret and create an endpoint that names it (docs/user-guide.md)"
type WebhookEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec WebhookEndpointSpec `json:"spec"`

	// Status is the observed state. A new object reads as observedGeneration
	// -1 until the operator has looked at it, so that kstatus (Flux) reads it
	// as InProgress, not as Current.
	// +kubebuilder:default={"observedGeneration":-1}
	Status WebhookEndpointStatus `json:"status,omitempty"`
}

// WebhookEndpointList is a list of WebhookEndpoints.
// +kubebuilder:object:root=true
type WebhookEndpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebhookEndpoint `json:"items"`
}

// HoldsIDBefore tells whether ep keeps status.endpointID over other when both
// have it: the one that has held it longer, by status.endpointIDSince (an ID
// written before that field existed counts as held first); on a tie the
// older endpoint (by creationTimestamp, then UID). The receiver serves it and
// the operator marks the other EndpointIDConflict. The operator never writes
// an ID that another endpoint holds, so the order matters only for IDs
// written at the same moment, or written into status by hand.
func (ep *WebhookEndpoint) HoldsIDBefore(other *WebhookEndpoint) bool {
	mine, theirs := ep.Status.EndpointIDSince, other.Status.EndpointIDSince
	switch {
	case mine == nil && theirs != nil:
		return true
	case mine != nil && theirs == nil:
		return false
	case mine != nil && !mine.Equal(theirs):
		return mine.Before(theirs)
	}
	if !ep.CreationTimestamp.Equal(&other.CreationTimestamp) {
		return ep.CreationTimestamp.Before(&other.CreationTimestamp)
	}
	return ep.UID < other.UID
}
