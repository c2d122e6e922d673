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

// A2AProtocolVersion is the version of the A2A protocol an Agent speaks.
// +kubebuilder:validation:Enum="0.3";"1.0"
type A2AProtocolVersion string

// A2AProtocolBinding is how A2A messages travel: JSON-RPC, or the HTTP+JSON
// binding of A2A 1.0.
// +kubebuilder:validation:Enum=JSONRPC;"HTTP+JSON"
type A2AProtocolBinding string

const (
	// A2ABindingJSONRPC is JSON-RPC 2.0 over HTTP POST (A2A 0.3 and 1.0).
	A2ABindingJSONRPC A2AProtocolBinding = "JSONRPC"
	// A2ABindingHTTPJSON is A2A 1.0's HTTP+JSON binding (POST {url}/message:send, GET {url}/tasks/{id}).
	A2ABindingHTTPJSON A2AProtocolBinding = "HTTP+JSON"
)

const (
	// A2AProtocolV03 is A2A 0.3 (JSON-RPC methods message/send, tasks/get, tasks/cancel).
	A2AProtocolV03 A2AProtocolVersion = "0.3"
	// A2AProtocolV10 is A2A 1.0 (SendMessage, GetTask, CancelTask, header A2A-Version: 1.0).
	A2AProtocolV10 A2AProtocolVersion = "1.0"
)

// A2AEndpoint says how the operator reaches an agent.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || (isURL(self.url) && url(self.url).getScheme() == 'https')",message="a2a.tls needs an https:// a2a.url"
type A2AEndpoint struct {
	// url is the agent's address, an absolute http:// or https:// URL. With
	// protocolVersion unset, the operator reads the agent card under it
	// (<url>/.well-known/agent-card.json, else at the URL's origin) and sends
	// where the card says; with protocolVersion set, url is the JSON-RPC
	// endpoint itself.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="a2a.url must be an absolute http:// or https:// URL, for example http://triage.team-a.svc:8080/"
	URL string `json:"url"`

	// protocolVersion, when set, is the A2A version the agent speaks over
	// JSON-RPC at url: "0.3" or "1.0", and no card is read. Unset (the
	// default): the operator reads the agent card and records what it chose
	// in status.a2a.
	// +optional
	ProtocolVersion A2AProtocolVersion `json:"protocolVersion,omitempty"`

	// authSecretRef selects a bearer token sent as "Authorization: Bearer
	// <token>" on every call to the agent.
	// +optional
	AuthSecretRef *SecretKeyReference `json:"authSecretRef,omitempty"`

	// tls is how the operator checks the agent's certificate and proves its
	// own over https: for card reads and every call of a run. Its Secrets
	// follow authSecretRef's rule (labelled for hookrun, and named only by
	// who may read them).
	// +optional
	TLS *A2ATLS `json:"tls,omitempty"`
}

// A2ATLS names the Secrets of an Agent's TLS: the CA that signs the
// agent's certificate, and the client certificate for mutual TLS. Both
// Secrets are in the Agent's namespace; the operator reads them at each
// call, so a renewed certificate is used without a restart.
// +kubebuilder:validation:XValidation:rule="has(self.caSecretRef) || has(self.clientCertSecretRef)",message="a2a.tls names caSecretRef, clientCertSecretRef or both"
type A2ATLS struct {
	// caSecretRef selects a PEM bundle of the CA certificates that sign the
	// agent's certificate (at most 64 KiB and 32 certificates). When set,
	// they are the only roots the agent's certificate is checked against,
	// as Flux's certSecretRef does with ca.crt; unset, the operator's
	// system roots.
	// +optional
	CASecretRef *SecretKeyReference `json:"caSecretRef,omitempty"`

	// clientCertSecretRef names a kubernetes.io/tls Secret (keys tls.crt and
	// tls.key) whose certificate the operator presents to the agent: mutual
	// TLS. tls.crt may hold the chain, leaf first (at most 8 certificates);
	// an RSA key has at most 4096 bits.
	// +optional
	ClientCertSecretRef *SecretReference `json:"clientCertSecretRef,omitempty"`
}

// AgentSpec describes an AI agent that webhook endpoints trigger over A2A.
type AgentSpec struct {
	// displayName is shown to people; the default thread title of runs is
	// "Webhook: {displayName or metadata.name}".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DisplayName string `json:"displayName,omitempty"`

	// a2a is how the operator reaches the agent.
	// +required
	A2A A2AEndpoint `json:"a2a"`

	// model is the default model passed to the agent; endpoints may override it.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model,omitempty"`

	// archived keeps the Agent and its endpoints but makes every call to
	// those endpoints answer 422 until it is set back to false.
	// +optional
	// +kubebuilder:default=false
	Archived bool `json:"archived,omitempty"`

	// runTimeout bounds one run from its start; a run still going then is
	// canceled at the agent and ends in state error. Between 1s and 24h.
	// +optional
	// +kubebuilder:default="15m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="runTimeout must be between 1s and 24h, for example 15m"
	RunTimeout *metav1.Duration `json:"runTimeout,omitempty"`

	// maxConcurrentRuns is how many runs of this Agent may run at once.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxConcurrentRuns int32 `json:"maxConcurrentRuns,omitempty"`
}

// A2AStatus is where and how the operator sends an Agent's runs.
type A2AStatus struct {
	// url is where messages are sent: spec.a2a.url, or the interface the
	// agent card lists.
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`

	// protocolBinding is JSONRPC or HTTP+JSON.
	ProtocolBinding A2AProtocolBinding `json:"protocolBinding"`

	// protocolVersion is "0.3" or "1.0".
	ProtocolVersion A2AProtocolVersion `json:"protocolVersion"`

	// tenant is the tenant the card's interface names (A2A 1.0), if any.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Tenant string `json:"tenant,omitempty"`

	// cardReadAt is when the agent card was last read; unset when
	// spec.a2a.protocolVersion is set and no card is read.
	// +optional
	CardReadAt *metav1.Time `json:"cardReadAt,omitempty"`
}

// AgentStatus is the observed state of an Agent.
type AgentStatus struct {
	// observedGeneration is the generation the status was last computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// a2a is where and how runs are sent, as of observedGeneration: read from
	// the agent card when spec.a2a.protocolVersion is unset. Empty while no
	// usable card was read (Ready=False, reason AgentCardInvalid).
	// +optional
	A2A *A2AStatus `json:"a2a,omitempty"`

	// conditions: Ready, and Reconciling or Stalled while True (kstatus).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Agent is an AI agent reachable over the A2A protocol. Deleting an Agent
// deletes its WebhookEndpoints.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ag,categories=hookrun
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Archived",type=boolean,JSONPath=`.spec.archived`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.a2a.url`
// +kubebuilder:printcolumn:name="Binding",type=string,JSONPath=`.status.a2a.protocolBinding`,priority=1
// +kubebuilder:printcolumn:name="A2A",type=string,JSONPath=`.status.a2a.protocolVersion`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters: it is used as a label value on runs"
type Agent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AgentSpec `json:"spec"`

	// Status is the observed state. A new object reads as observedGeneration
	// -1 until the operator has looked at it, so that kstatus (Flux) reads it
	// as InProgress, not as Current.
	// +kubebuilder:default={"observedGeneration":-1}
	Status AgentStatus `json:"status,omitempty"`
}

// AgentList is a list of Agents.
// +kubebuilder:object:root=true
type AgentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Agent `json:"items"`
}
