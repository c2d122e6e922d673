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

package receiver

// RBAC of the receiver. `make manifests` turns these markers into the
// hookrun-receiver ClusterRole in config/rbac/receiver_role.yaml. The
// receiver reads Secrets only in its own namespace (a Role): the signing
// keys the operator copies there for signed senders. Elsewhere it only
// creates payload Secrets. It reads an AgentRun by name to recognise a
// duplicate delivery, and patches one (an annotation) when it stored that
// run's payload for a duplicate. A run whose
// payload could not be stored is deleted (its Secret, if any, goes with it).
// /readyz confirms a denied SubjectAccessReview (see package membership).
// In its own namespace it writes its rejection report, a ConfigMap per
// replica (report.go): create, and update to replace it. It reads the
// cluster's service account issuer and keys (OIDC senders; the URLs of
// ClusterRole system:service-account-issuer-discovery).

// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=webhookendpoints;agents;agentthreads,verbs=get;list;watch
// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agentruns,verbs=get;create;patch;delete
// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agentruns/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update,namespace=hookrun-system
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch,namespace=hookrun-system
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:urls=/readyz,verbs=get
// +kubebuilder:rbac:urls=/.well-known/openid-configuration;/openid/v1/jwks,verbs=get
