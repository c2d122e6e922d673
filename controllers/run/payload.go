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
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// A run's payload: the Secret the receiver wrote beside it, read when the
// run is sent and deleted after the payload TTL (the endpoint controller).

// payload is what a run's payload Secret holds: the body, and the fields
// (spec.fields evaluated on the call) when its endpoint named some.
type payload struct {
	body []byte
	// fields is the JSON object of the fields, fieldErrors the names of
	// those that failed; nil without.
	fields      json.RawMessage
	fieldErrors []string
}

// payload reads the run's payload. Admission started the run only once the
// Secret existed: if it is gone now, the message can never be sent.
func (r *ExecutionReconciler) payload(ctx context.Context, run *agentsv1alpha1.AgentRun) (payload, error) {
	if run.Spec.Payload == nil {
		return payload{}, finalError{msg: "The run has no payload to send"}
	}
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return payload{}, finalError{msg: fmt.Sprintf("The payload Secret %s is gone; the message cannot be sent", run.Spec.Payload.SecretName)}
		}
		return payload{}, fmt.Errorf("reading payload Secret %s: %w", run.Spec.Payload.SecretName, err)
	}
	if !isPayloadOf(s.Type, s.OwnerReferences, run) {
		return payload{}, finalError{reason: agentsv1alpha1.ReasonPayloadInvalid, msg: fmt.Sprintf(
			"Secret %s is not this run's payload (a Secret of type %s owned by the run); it was not sent",
			run.Spec.Payload.SecretName, agentsv1alpha1.SecretTypeWebhookPayload)}
	}
	return payloadOf(run, s.Data)
}

// payloadOf reads a payload Secret's data. Fields that are not one JSON
// object, or errors that are not a list of names, fail the run: the
// receiver writes neither.
func payloadOf(run *agentsv1alpha1.AgentRun, data map[string][]byte) (payload, error) {
	p := payload{body: data[agentsv1alpha1.PayloadBodyKey]}
	invalid := func(what string) error {
		return finalError{reason: agentsv1alpha1.ReasonPayloadInvalid, msg: fmt.Sprintf(
			"The payload Secret %s holds %s; it was not sent", run.Spec.Payload.SecretName, what)}
	}
	if fields, ok := data[agentsv1alpha1.PayloadFieldsKey]; ok {
		if len(fields) == 0 || fields[0] != '{' || !json.Valid(fields) {
			return payload{}, invalid(fmt.Sprintf("under %q something else than a JSON object", agentsv1alpha1.PayloadFieldsKey))
		}
		p.fields = fields
	}
	if names, ok := data[agentsv1alpha1.PayloadFieldErrorsKey]; ok {
		if err := json.Unmarshal(names, &p.fieldErrors); err != nil || p.fields == nil {
			return payload{}, invalid(fmt.Sprintf("under %q something else than the names of fields that failed", agentsv1alpha1.PayloadFieldErrorsKey))
		}
	}
	if run.Spec.Payload.Send == agentsv1alpha1.PayloadFields && p.fields == nil {
		return payload{}, invalid(fmt.Sprintf("no fields (key %q), and the run sends its fields", agentsv1alpha1.PayloadFieldsKey))
	}
	return p, nil
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
	return cached.OwnedBy(owners, run.UID)
}
