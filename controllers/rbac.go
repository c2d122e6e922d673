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

package controllers

// RBAC of the operator. `make manifests` turns these markers into the
// hookrun-operator ClusterRole in config/rbac/operator_role.yaml, and the
// namespaced ones (leader election, and reading and expiring the receiver
// replicas' rejection reports) into a Role of the same name. /readyz
// confirms a denied SubjectAccessReview (see package membership).

// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agents;webhookendpoints;agentthreads;agentruns,verbs=get;list;watch
// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agents/status;webhookendpoints/status;agentthreads/status;agentruns/status,verbs=patch
// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agentruns,verbs=delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:urls=/readyz,verbs=get
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete,namespace=hookrun-system
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;delete,namespace=hookrun-system
