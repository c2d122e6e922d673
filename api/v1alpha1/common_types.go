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

// LocalObjectReference names an object of another hookrun kind in the same
// namespace. Names are limited to 63 characters because they are also used as
// label values on AgentRuns.
type LocalObjectReference struct {
	// name of the object in the same namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// SecretKeyReference selects one key of a Secret in the same namespace.
type SecretKeyReference struct {
	// name of the Secret in the same namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// SecretReference names a Secret in the same namespace.
type SecretReference struct {
	// name of the Secret in the same namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// Owner is the workspace member on whose behalf an endpoint's runs execute.
// A MutatingAdmissionPolicy fills it from the creating user when it is empty,
// where the API server serves one (Kubernetes 1.36 and later); elsewhere the
// creator must name themselves.
type Owner struct {
	// user is the Kubernetes user name of the owner, as the API server
	// authenticates it (for example alice@example.com or
	// system:serviceaccount:team-a:ci).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	User string `json:"user"`

	// groups are the owner's groups used for the membership check. The
	// admission policy only accepts groups the requesting user holds.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=512
	Groups []string `json:"groups,omitempty"`
}

// UserName is the owner's user name, or "(none)" for an endpoint without an owner.
func (o *Owner) UserName() string {
	if o == nil || o.User == "" {
		return "(none)"
	}
	return o.User
}

// ThreadStrategy says where the runs of an endpoint are written.
// +kubebuilder:validation:Enum=NewThreadEachRun;ContinueExisting
type ThreadStrategy string

const (
	// NewThreadEachRun starts every run in a new A2A context (thread) that
	// carries no history from earlier events.
	NewThreadEachRun ThreadStrategy = "NewThreadEachRun"
	// ContinueExisting appends every run to the endpoint's targetThreadRef.
	ContinueExisting ThreadStrategy = "ContinueExisting"
)
