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

package endpoints

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// StripToUse is the receiver's cache transform: every object keeps only the
// fields the receiver reads. Each replica holds every endpoint, Agent and
// AgentThread of the cluster, and what a tenant may write into them
// (annotations and labels of up to 256 KiB, thread titles, agent URLs,
// conditions) would otherwise be held by every replica.
func StripToUse(obj any) (any, error) {
	switch o := obj.(type) {
	case *agentsv1alpha1.WebhookEndpoint:
		o.ObjectMeta = identity(&o.ObjectMeta)
		o.Spec.SecretRef = nil
		// The prompt is read when a run is stored (the store's promptCache), and the
		// filter compiled when a call needs it (Table.FilterOf).
		o.Spec.Prompt = ""
		// spec.fields are read and compiled when a call needs them
		// (Table.FieldsOf); what stays says that there are some.
		o.Spec.StripFields()
		s := &o.Status
		o.Status = agentsv1alpha1.WebhookEndpointStatus{
			EndpointID: s.EndpointID, EndpointIDSince: s.EndpointIDSince, Phase: s.Phase, PauseReason: s.PauseReason,
			SecretHash: s.SecretHash, PreviousSecretHash: s.PreviousSecretHash, PreviousSecretExpiresAt: s.PreviousSecretExpiresAt,
			Runs: s.Runs,
		}
	case *agentsv1alpha1.Agent:
		o.ObjectMeta = identity(&o.ObjectMeta)
		o.Spec = agentsv1alpha1.AgentSpec{Archived: o.Spec.Archived}
		o.Status = agentsv1alpha1.AgentStatus{}
	case *agentsv1alpha1.AgentThread:
		o.ObjectMeta = identity(&o.ObjectMeta)
		o.Spec = agentsv1alpha1.AgentThreadSpec{AgentRef: o.Spec.AgentRef}
		o.Status = agentsv1alpha1.AgentThreadStatus{}
	case *corev1.Secret: // signing keys: their label, hashes and secrets
		m := identity(&o.ObjectMeta)
		m.Labels = keep(o.Labels, agentsv1alpha1.LabelEndpointUID)
		m.Annotations = keep(o.Annotations, agentsv1alpha1.AnnotationKeyHash, agentsv1alpha1.AnnotationPreviousKeyHash)
		o.ObjectMeta = m
		o.Data = keep(o.Data, agentsv1alpha1.SigningKeySecret, agentsv1alpha1.SigningKeyPreviousSecret)
	case *corev1.ConfigMap: // the runtime switch
		o.ObjectMeta = identity(&o.ObjectMeta)
		o.Data = keep(o.Data, "triggering")
		o.BinaryData = nil
	}
	return obj, nil
}

// identity is what every cached object keeps of its metadata: what names
// it, what the informer needs, and its age (the older of two endpoints
// with one ID keeps it).
func identity(m *metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
	}
}

// keep returns the entries of m under keys, or nil if there are none.
func keep[V any](m map[string]V, keys ...string) map[string]V {
	var out map[string]V
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]V, len(keys))
			}
			out[k] = v
		}
	}
	return out
}
