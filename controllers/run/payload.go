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

package run

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/lookup"
)

// A run's payload: the Secret the receiver wrote beside it, read when the
// run is sent and deleted after the payload TTL (the endpoint controller).

// payload reads the run's payload. Admission started the run only once the
// Secret existed: if it is gone now, the message can never be sent.
func (r *ExecutionReconciler) payload(ctx context.Context, run *agentsv1alpha1.AgentRun) ([]byte, error) {
	if run.Spec.Payload == nil {
		return nil, finalError{msg: "The run has no payload to send"}
	}
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, finalError{msg: fmt.Sprintf("The payload Secret %s is gone; the message cannot be sent", run.Spec.Payload.SecretName)}
		}
		return nil, fmt.Errorf("reading payload Secret %s: %w", run.Spec.Payload.SecretName, err)
	}
	if !isPayloadOf(s.Type, s.OwnerReferences, run) {
		return nil, finalError{reason: agentsv1alpha1.ReasonPayloadInvalid, msg: fmt.Sprintf(
			"Secret %s is not this run's payload (a Secret of type %s owned by the run); it was not sent",
			run.Spec.Payload.SecretName, agentsv1alpha1.SecretTypeWebhookPayload)}
	}
	return s.Data[agentsv1alpha1.PayloadBodyKey], nil
}

// isPayloadOf tells whether a Secret of type secretType with owners is
// run's payload, as the receiver writes it: of the payload type and owned
// by the run (by UID). Nothing else is sent to an agent or deleted as a
// payload, whatever a run names: a run written by someone else than the
// receiver could name any Secret of its namespace.
func isPayloadOf(secretType corev1.SecretType, owners []metav1.OwnerReference, run *agentsv1alpha1.AgentRun) bool {
	if secretType != agentsv1alpha1.SecretTypeWebhookPayload {
		return false
	}
	return lookup.OwnedBy(owners, run.UID)
}
