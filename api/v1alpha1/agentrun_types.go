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

// Trust is how far an agent may trust a run's payload.
// +kubebuilder:validation:Enum=Standard;Low
type Trust string

const (
	// TrustStandard: the call carried the endpoint's secret.
	TrustStandard Trust = "Standard"
	// TrustLow: the call came to an unauthenticated endpoint; agents should
	// not act on it automatically (for example, not save memories).
	TrustLow Trust = "Low"
)

// RunState is where an AgentRun is in its life.
// +kubebuilder:validation:Enum=queued;running;success;error;skipped
type RunState string

const (
	// RunQueued: accepted and waiting to be sent to the agent (an empty state means the same).
	RunQueued RunState = "queued"
	// RunRunning: sent to the agent; the operator follows its task.
	RunRunning RunState = "running"
	// RunSuccess: the agent completed the task; status.output holds its answer.
	RunSuccess RunState = "success"
	// RunError: the run started and failed; status.message says why.
	RunError RunState = "error"
	// RunSkipped: the call was declined (rate limit, owner not a member); no run started.
	RunSkipped RunState = "skipped"
)

// IsFinished tells whether a run in this state will not change any more.
func (s RunState) IsFinished() bool {
	return s == RunSuccess || s == RunError || s == RunSkipped
}

// EffectiveState is the run's state, reading an empty status.state the way
// the receiver writes runs: a run without a payload was skipped (its state
// is written right after it is created), any other is queued.
func (r *AgentRun) EffectiveState() RunState {
	switch {
	case r.Status.State != "":
		return r.Status.State
	case r.Spec.Payload == nil:
		return RunSkipped
	default:
		return RunQueued
	}
}

// PayloadReference points to the Secret that holds a run's raw request body.
type PayloadReference struct {
	// secretName is the payload Secret (type agents.hookrun.dev/webhook-payload, key "body").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`

	// bytes is the size of the body.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048576
	Bytes int64 `json:"bytes"`

	// sha256 is the SHA-256 of the body, lower-case hex. A second call of
	// the same delivery stores its body as this run's payload only if it is
	// the same body (the receiver's duplicate check).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	SHA256 string `json:"sha256,omitempty"`

	// contentType is the request's Content-Type header, as sent.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	ContentType string `json:"contentType,omitempty"`

	// send is what the message's wrapper holds, the endpoint's
	// spec.payload at the time of the call: Body, or Fields (the Secret's
	// key "fields", the values of the endpoint's spec.fields).
	// +optional
	Send PayloadMode `json:"send,omitempty"`
}

// AgentRunSpec is the record of one call: a snapshot of the endpoint at the
// time of the call. It never changes after creation.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="AgentRun spec is immutable: it records a call as it was received"
// +kubebuilder:validation:XValidation:rule="self.threadStrategy != 'ContinueExisting' || has(self.targetThreadRef)",message="spec.targetThreadRef is required when threadStrategy is ContinueExisting"
// +kubebuilder:validation:XValidation:rule="self.threadStrategy == 'ContinueExisting' || !has(self.targetThreadRef)",message="spec.targetThreadRef is only allowed when threadStrategy is ContinueExisting"
// +kubebuilder:validation:XValidation:rule="self.threadStrategy == 'NewThreadEachRun' || !has(self.threadNamingHint) || size(self.threadNamingHint) == 0",message="spec.threadNamingHint is only allowed when threadStrategy is NewThreadEachRun"
type AgentRunSpec struct {
	// endpointRef names the WebhookEndpoint that received the call.
	// +required
	EndpointRef LocalObjectReference `json:"endpointRef"`

	// agentRef names the Agent the run is for.
	// +required
	AgentRef LocalObjectReference `json:"agentRef"`

	// prompt is the endpoint's prompt at the time of the call.
	// At most 32768 characters and 65536 bytes of UTF-8: every character
	// of the two-byte range counts once, while a prompt of four-byte
	// characters is bounded in bytes too.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	// +kubebuilder:validation:XValidation:rule="size(bytes(self)) <= 65536",message="spec.prompt may be at most 65536 bytes of UTF-8"
	Prompt string `json:"prompt"`

	// threadStrategy is the endpoint's strategy at the time of the call.
	// +required
	ThreadStrategy ThreadStrategy `json:"threadStrategy"`

	// targetThreadRef is the endpoint's thread at the time of the call (ContinueExisting).
	// +optional
	TargetThreadRef *LocalObjectReference `json:"targetThreadRef,omitempty"`

	// threadNamingHint is the endpoint's naming hint at the time of the call.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ThreadNamingHint string `json:"threadNamingHint,omitempty"`

	// model is the endpoint's model override at the time of the call.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model,omitempty"`

	// owner is the endpoint's owner at the time of the call.
	// +optional
	Owner *Owner `json:"owner,omitempty"`

	// trust is Low for calls to unauthenticated endpoints.
	// +optional
	// +kubebuilder:default=Standard
	Trust Trust `json:"trust,omitempty"`

	// payload points to the stored body; absent for skipped runs.
	// +optional
	Payload *PayloadReference `json:"payload,omitempty"`

	// sender is the sender type, event type and delivery ID of the call.
	// +optional
	Sender *RunSender `json:"sender,omitempty"`

	// receivedAt is when the receiver accepted the call.
	// +required
	ReceivedAt metav1.Time `json:"receivedAt"`
}

// RunThread is the thread a run worked in.
type RunThread struct {
	// name is the AgentThread (ContinueExisting), or empty for a new thread.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
	// uid is the UID of the AgentThread the run was appended to: a thread
	// deleted and created again under the same name is another thread.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	UID string `json:"uid,omitempty"`
	// contextId is the A2A context the run was sent in.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	ContextID string `json:"contextId,omitempty"`
	// title is the thread title sent to the agent; empty when a naming hint was sent instead.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Title string `json:"title,omitempty"`
}

// AgentRunStatus is the outcome of a run.
type AgentRunStatus struct {
	// observedGeneration is the generation the status was last computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, Succeeded once ended, and Reconciling or Stalled while True (kstatus).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// state is queued, running, success, error or skipped; empty means queued.
	// +optional
	State RunState `json:"state,omitempty"`

	// startedAt is when the run was sent to the agent.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// payloadDeadline is when a queued run whose payload Secret is still
	// missing fails. The operator sets it, a grace (30s) from the moment it
	// first finds the Secret missing past the grace after receivedAt, by its
	// own clock; until then the deadline is receivedAt plus the grace.
	// +optional
	PayloadDeadline *metav1.Time `json:"payloadDeadline,omitempty"`

	// completedAt is when the run finished.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// duration is completedAt - startedAt, for example "4.2s".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Duration string `json:"duration,omitempty"`

	// message says why the run failed or was skipped.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`

	// reason names why the run ended in error, in one word, where that is
	// more than Failed: PayloadInvalid. The conditions Ready and Succeeded
	// carry it as their reason.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Reason string `json:"reason,omitempty"`

	// retry is set while a running run waits to call its agent again: the
	// agent turned its last call away (HTTP 429 or 503, another 5xx, no
	// answer at all, or a call that outlasted its deadline). Cleared when a
	// call is taken and when the run ends.
	// +optional
	Retry *RunRetry `json:"retry,omitempty"`

	// thread is the thread the run worked in; it holds the full output.
	// +optional
	Thread *RunThread `json:"thread,omitempty"`

	// taskId is the agent's A2A task id for this run.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	TaskID string `json:"taskId,omitempty"`

	// output is the agent's final text, cut to 16 KiB (the cut is noted at its end).
	// +optional
	// +kubebuilder:validation:MaxLength=20480
	Output string `json:"output,omitempty"`

	// traceID is the W3C trace the run belongs to (32 lower-case hex
	// digits): the sender's trace when it called an authenticated endpoint
	// with a valid traceparent, else one the receiver started. The operator
	// records it when the run leaves the queue; every A2A request for the
	// run carries a traceparent of this trace.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{32}$`
	TraceID string `json:"traceID,omitempty"`
}

// RunRetry is why a running run waits, and until when: the agent's
// Retry-After (at most 5m) when its 429 or 503 gave one, otherwise a backoff
// from 1s doubling to 1m with jitter. The run ends at its Agent's
// runTimeout however it waits.
type RunRetry struct {
	// attempts counts the calls in a row the agent turned away.
	// +kubebuilder:validation:Minimum=1
	Attempts int32 `json:"attempts"`

	// notBefore is when the operator calls the agent again, by its own
	// clock (to the microsecond: a backoff's first waits are under a second).
	NotBefore metav1.MicroTime `json:"notBefore"`

	// message says what the agent answered and how long the run waits, for
	// example "The agent answered 429; sending again in 30s (Retry-After)".
	// The Ready condition (reason Retrying) carries it too.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// AgentRun is one call to a WebhookEndpoint: the invocation record and the
// queued run the operator dispatches to the agent. Its name is the runId the
// caller received.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ar;run,categories=hookrun
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.spec.endpointRef.name`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startedAt`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.completedAt`,priority=1
// +kubebuilder:printcolumn:name="Thread",type=string,JSONPath=`.status.thread.contextId`,priority=1,description="The A2A context (thread) the run worked in; the runs appended to one AgentThread share it"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1,description="Why the run failed or was skipped"
type AgentRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AgentRunSpec `json:"spec"`

	// Status is the observed state. A new object reads as observedGeneration
	// -1 until the operator has looked at it, so that kstatus (Flux) reads it
	// as InProgress, not as Current.
	// +kubebuilder:default={"observedGeneration":-1}
	Status AgentRunStatus `json:"status,omitempty"`
}

// AgentRunList is a list of AgentRuns.
// +kubebuilder:object:root=true
type AgentRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentRun `json:"items"`
}
