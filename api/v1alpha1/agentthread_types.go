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

// AgentThreadSpec declares a long-lived conversation (A2A context) with an
// Agent that ContinueExisting endpoints append their runs to.
type AgentThreadSpec struct {
	// agentRef names the Agent in the same namespace the thread belongs to.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.agentRef is immutable: a thread cannot move to another Agent"
	AgentRef LocalObjectReference `json:"agentRef"`

	// title is the thread's title, shown to people and sent to the agent.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Title string `json:"title,omitempty"`

	// contextId attaches an existing A2A context. When empty, the operator
	// creates one on the thread's first run and records it in status.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	ContextID string `json:"contextId,omitempty"`
}

// AgentThreadStatus is the observed state of an AgentThread.
type AgentThreadStatus struct {
	// observedGeneration is the generation the status was last computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, and Reconciling or Stalled while True (kstatus).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// contextId is the A2A context the thread's runs are sent in, once it exists.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	ContextID string `json:"contextId,omitempty"`

	// lastRunName is the AgentRun most recently appended to the thread.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	LastRunName string `json:"lastRunName,omitempty"`
}

// AgentThread is a conversation with an Agent that runs can be appended to.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ath,categories=hookrun
// +kubebuilder:selectablefield:JSONPath=`.spec.agentRef.name`
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=`.spec.agentRef.name`
// +kubebuilder:printcolumn:name="Context",type=string,JSONPath=`.status.contextId`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters: it is used as a label value on runs"
type AgentThread struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AgentThreadSpec `json:"spec"`

	// Status is the observed state. A new object reads as observedGeneration
	// -1 until the operator has looked at it, so that kstatus (Flux) reads it
	// as InProgress, not as Current.
	// +kubebuilder:default={"observedGeneration":-1}
	Status AgentThreadStatus `json:"status,omitempty"`
}

// AgentThreadList is a list of AgentThreads.
// +kubebuilder:object:root=true
type AgentThreadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentThread `json:"items"`
}
