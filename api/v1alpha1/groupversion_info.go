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

// Package v1alpha1 holds the hookrun API: Agent, WebhookEndpoint, AgentThread
// and AgentRun in group agents.hookrun.dev, together with the condition types,
// reasons, label and annotation keys and the small pure helpers (the secret
// hash format) that the operator, the receiver and users share.
// +kubebuilder:object:generate=true
// +groupName=agents.hookrun.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every hookrun kind.
	GroupVersion = schema.GroupVersion{Group: "agents.hookrun.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the hookrun kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the hookrun kinds to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Agent{}, &AgentList{},
		&WebhookEndpoint{}, &WebhookEndpointList{},
		&AgentThread{}, &AgentThreadList{},
		&AgentRun{}, &AgentRunList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
