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

// Condition types. Every kind has Ready, and Reconciling and Stalled as
// kstatus (sigs.k8s.io/cli-utils) reads them; WebhookEndpoints add the others.
const (
	// ConditionReady is True once the object is reconciled as its spec asks:
	// usable, or paused or archived as asked (the reason says which). False
	// while it is not, with the reason of the first thing that is wrong.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the operator is still working
	// towards the spec (a transient error it retries, a run queued or
	// running) and absent otherwise. kstatus reads it as InProgress.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the object cannot become Ready without a
	// change from outside (a missing Agent or Secret, a refused URL, an
	// endpoint ID conflict), or, for an AgentRun, once it ended without
	// success; absent otherwise. kstatus reads it as Failed.
	ConditionStalled = "Stalled"
	// ConditionSecretReady tells whether an endpoint's secret hash is known.
	ConditionSecretReady = "SecretReady"
	// ConditionAgentReady tells whether an endpoint's Agent exists and is not archived.
	ConditionAgentReady = "AgentReady"
	// ConditionThreadReady tells whether a ContinueExisting endpoint's thread
	// exists and belongs to the endpoint's Agent.
	ConditionThreadReady = "ThreadReady"
	// ConditionSucceeded says how a finished AgentRun ended: True for
	// success, False for error or skipped. Absent while it has not ended.
	ConditionSucceeded = "Succeeded"
)

// Condition reasons. They are part of the API: users and tools match on them.
const (
	// ReasonAvailable: the object is ready to be used.
	ReasonAvailable = "Available"
	// ReasonReconcileFailed: a transient error stopped reconciliation; the
	// message names it and the operator retries.
	ReasonReconcileFailed = "ReconcileFailed"

	// ReasonPaused: the owner paused the endpoint (spec.paused).
	ReasonPaused = "Paused"
	// ReasonOwnerNotMember: a call arrived after the endpoint's owner lost
	// the right to trigger the Agent; the endpoint stays paused until the
	// owner is a member again or another member takes ownership.
	ReasonOwnerNotMember = "OwnerNotMember"
	// ReasonEndpointIDConflict: another, older endpoint has the same
	// status.endpointID; it keeps the ID and this one is not served.
	ReasonEndpointIDConflict = "EndpointIDConflict"
	// ReasonEndpointIDInvalid: the value in the Secret of
	// spec.endpointIDSecretRef is not an endpoint ID (43 characters of
	// base64url, the text form of 32 bytes); the endpoint gets no ID.
	ReasonEndpointIDInvalid = "EndpointIDInvalid"
	// ReasonFilterInvalid: spec.filter does not compile, is not of type
	// bool, or may cost more than the limit; calls answer 422 filter_invalid.
	ReasonFilterInvalid = "FilterInvalid"
	// ReasonFieldsInvalid: spec.fields names a field whose expression does
	// not compile, or together they may cost more than the limit; calls
	// answer 422 fields_invalid.
	ReasonFieldsInvalid = "FieldsInvalid"
	// ReasonOIDCIssuerNotAllowed: spec.sender.oidc.issuer is not among the
	// issuers the receiver trusts (--oidc-issuers); no call can
	// authenticate, and the issuer is never contacted.
	ReasonOIDCIssuerNotAllowed = "OIDCIssuerNotAllowed"
	// ReasonOIDCClaimsInvalid: spec.sender.oidc.claims does not compile;
	// every call is refused 403.
	ReasonOIDCClaimsInvalid = "OIDCClaimsInvalid"
	// ReasonOIDCAudienceInvalid: spec.sender.oidc.audience is one the
	// Kubernetes API server accepts, so a sender's token would also be an
	// API credential (and every Pod's default token would call the
	// endpoint); every call is refused 403.
	ReasonOIDCAudienceInvalid = "OIDCAudienceInvalid"

	// ReasonSecretGenerated: the operator generated the endpoint's secret.
	ReasonSecretGenerated = "SecretGenerated"
	// ReasonSecretRotated: the secret was rotated through the rotate-secret annotation.
	ReasonSecretRotated = "SecretRotated"
	// ReasonSecretFromRef: the hash comes from the Secret named in spec.secretRef.
	ReasonSecretFromRef = "SecretFromRef"
	// ReasonSecretNotFound: the Secret named in spec.secretRef does not exist.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretKeyMissing: the Secret of spec.secretRef has no such key.
	ReasonSecretKeyMissing = "SecretKeyMissing"
	// ReasonSecretTooShort: the value of spec.secretRef is shorter than MinSecretBytes.
	ReasonSecretTooShort = "SecretTooShort"
	// ReasonSecretNameTaken: a Secret named like the generated one exists and
	// is not the endpoint's; the operator will not overwrite it.
	ReasonSecretNameTaken = "SecretNameTaken"
	// ReasonGeneratedSecretDeleted: the generated Secret was deleted; the
	// endpoint keeps accepting the secret it had (its hash is in status).
	ReasonGeneratedSecretDeleted = "GeneratedSecretDeleted"
	// ReasonAuthenticationDisabled: the endpoint allows unauthenticated calls
	// and needs no secret.
	ReasonAuthenticationDisabled = "AuthenticationDisabled"
	// ReasonOIDCTokens: calls authenticate with an issuer's tokens
	// (spec.sender.oidc) and the endpoint needs no secret.
	ReasonOIDCTokens = "OIDCTokens"
	// ReasonSecretNotStandardWebhooks: the sender type is StandardWebhooks
	// but the secret is not of the form whsec_<base64>.
	ReasonSecretNotStandardWebhooks = "SecretNotStandardWebhooks"
	// ReasonSigningKeyLost: a signed sender's key must be copied for the
	// receiver, but the Secret no longer holds the secret whose hash is in status.
	ReasonSigningKeyLost = "SigningKeyLost"
	// ReasonSecretHasWhiteSpace: the secretRef value starts or ends with
	// white space or a newline, which no HTTP header value can carry.
	ReasonSecretHasWhiteSpace = "SecretHasWhiteSpace"

	// ReasonAgentFound: the endpoint's Agent exists and is usable.
	ReasonAgentFound = "AgentFound"
	// ReasonAgentNotFound: the Agent named in agentRef does not exist.
	ReasonAgentNotFound = "AgentNotFound"
	// ReasonAgentCardInvalid: spec.a2a.protocolVersion is unset and the
	// agent card could not be read or lists no interface the operator speaks.
	ReasonAgentCardInvalid = "AgentCardInvalid"
	// ReasonAgentArchived: the Agent is archived; its endpoints answer 422.
	ReasonAgentArchived = "AgentArchived"

	// ReasonThreadFound: the target thread exists and belongs to the Agent.
	ReasonThreadFound = "ThreadFound"
	// ReasonThreadNotRequired: NewThreadEachRun endpoints need no thread.
	ReasonThreadNotRequired = "ThreadNotRequired"
	// ReasonThreadNotFound: the AgentThread named in targetThreadRef does not exist.
	ReasonThreadNotFound = "ThreadNotFound"
	// ReasonThreadOfAnotherAgent: the target thread belongs to another Agent.
	ReasonThreadOfAnotherAgent = "ThreadOfAnotherAgent"

	// ReasonAuthSecretNotFound: an Agent's a2a.authSecretRef names a missing Secret or key.
	ReasonAuthSecretNotFound = "AuthSecretNotFound"

	// ReasonTLSSecretNotFound: a Secret of an Agent's a2a.tls
	// (caSecretRef or clientCertSecretRef) or its key does not exist; the
	// message names it.
	ReasonTLSSecretNotFound = "TLSSecretNotFound"
	// ReasonTLSSecretInvalid: a Secret of an Agent's a2a.tls holds no
	// usable PEM (no certificate, a key that does not match, over the size
	// or count bounds); the message names it and says what is wrong.
	ReasonTLSSecretInvalid = "TLSSecretInvalid"

	// ReasonSecretNotReferable: the Secret named in an Agent's
	// a2a.authSecretRef or a2a.tls, or an endpoint's secretRef, does not carry the label
	// LabelAllowReference "true", so the operator does not read it.
	ReasonSecretNotReferable = "SecretNotReferable"

	// ReasonQueued: the run waits to be sent.
	ReasonQueued = "Queued"
	// ReasonWaitingForPayload: the run is past its payload's grace and its
	// payload Secret does not exist; it fails if none appears by its
	// status.payloadDeadline.
	ReasonWaitingForPayload = "WaitingForPayload"
	// ReasonRunning: the run was sent and its task has not ended.
	ReasonRunning = "Running"
	// ReasonRetrying: the agent turned the run's last call away (HTTP 429
	// or 503, another 5xx, no answer); the run calls again at
	// status.retry.notBefore, whose message says why and when.
	ReasonRetrying = "Retrying"
	// ReasonSucceeded: the agent finished the run's task.
	ReasonSucceeded = "Succeeded"
	// ReasonFailed: the run ended in error; the message says why.
	ReasonFailed = "Failed"
	// ReasonPayloadInvalid: the run ended in error because the Secret it
	// names as its payload is not a payload Secret
	// (SecretTypeWebhookPayload) owned by the run. The operator neither
	// sends that Secret nor deletes it.
	ReasonPayloadInvalid = "PayloadInvalid"
	// ReasonSkipped: the call was recorded without running (a limit, or an
	// owner who is no longer a member).
	ReasonSkipped = "Skipped"
	// ReasonAgentURLNotAllowed: the host of the Agent's spec.a2a.url is not
	// on the operator's agent allow-list; runs are not sent.
	ReasonAgentURLNotAllowed = "AgentURLNotAllowed"
)

// Event reasons recorded by the operator and the receiver.
const (
	// EventSecretGenerated is recorded when an endpoint's secret is generated.
	EventSecretGenerated = "SecretGenerated"
	// EventSecretRotated is recorded when an endpoint's secret is rotated.
	EventSecretRotated = "SecretRotated"
	// EventOwnerNotMember is recorded (Warning) when the operator pauses an
	// endpoint for a call the receiver skipped because the owner lost
	// membership.
	EventOwnerNotMember = "OwnerNotMember"
	// EventMembershipRestored is recorded when an OwnerNotMember pause is
	// lifted because the endpoint's owner may trigger the Agent again.
	EventMembershipRestored = "MembershipRestored"
	// EventPaused is recorded when an active endpoint is paused by its
	// owner (spec.paused set to true).
	EventPaused = "Paused"
	// EventResumed is recorded when an endpoint paused by its owner is
	// active again (spec.paused set to false).
	EventResumed = "Resumed"
	// EventGeneratedSecretDeleted is recorded when the generated Secret of
	// an endpoint disappears.
	EventGeneratedSecretDeleted = "GeneratedSecretDeleted"
	// EventRunFailed is recorded (Warning) when a run ends in error.
	EventRunFailed = "RunFailed"
	// EventFilterInvalid is recorded (Warning) when an endpoint's
	// spec.filter becomes one that does not compile.
	EventFilterInvalid = "FilterInvalid"
	// EventFieldsInvalid is recorded (Warning) when an endpoint's
	// spec.fields become ones that do not compile.
	EventFieldsInvalid = "FieldsInvalid"
)
