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

package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// FieldOwner names the receiver in managedFields.
const FieldOwner = "hookrun-receiver"

// Kube writes runs and payloads to the API server, never an endpoint.
// Its reads (reader, not cached) are of a run named after a delivery ID and
// of the prompt of an endpoint whose run it stores, when it does not keep
// that prompt (promptCache): every other lookup the receiver makes is served
// from its informers.
type Kube struct {
	client client.Client
	reader client.Reader
	// prompts reads the prompts of endpoints through reader, and keeps
	// those of the endpoints called last.
	prompts *promptCache
}

// NewKube is the store of the receiver: c writes, reader reads past the
// informers.
func NewKube(c client.Client, reader client.Reader) *Kube {
	return &Kube{client: c, reader: reader, prompts: newPromptCache(reader)}
}

// Prompt returns ep's prompt at ep's generation or later (the informer
// keeps none), for the run of a call.
func (s *Kube) Prompt(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, error) {
	return s.prompts.promptOf(ctx, ep)
}

// Fields returns ep's spec.fields and spec.payload at ep's generation or
// later (the informer keeps no fields), and that generation.
func (s *Kube) Fields(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (FieldsSpec, error) {
	return s.prompts.fieldsOf(ctx, ep)
}

// Forget drops what the store keeps of a deleted endpoint.
func (s *Kube) Forget(uid types.UID) { s.prompts.forget(uid) }

// CreateRun stores run and then its payload Secret with data (the body
// under PayloadBodyKey, and the fields); if either write fails nothing
// remains and the error is returned. It reports a duplicate when a run of
// that name exists already (the same delivery, stored at the same moment
// through another replica): then nothing is created.
func (s *Kube) CreateRun(ctx context.Context, run *agentsv1alpha1.AgentRun, data map[string][]byte) (bool, error) {
	// The writes outlive a caller that hangs up: a write cut off half-way
	// would leave a run to undo, and a sender that gave up retries anyway.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := s.client.Create(ctx, run, client.FieldOwner(FieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) && run.Spec.Sender != nil && run.Spec.Sender.DeliveryID != "" {
			// The same delivery, through another replica at this moment.
			dup, err := s.Duplicate(ctx, run.Namespace, run.Name, data)
			if err == nil && !dup {
				err = fmt.Errorf("AgentRun %s/%s was there and is gone: its first writer gave up", run.Namespace, run.Name)
			}
			return dup, err
		}
		return false, fmt.Errorf("creating AgentRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	err := s.CreatePayload(ctx, run, data)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		// Once more: the first answer may have been lost, or a duplicate
		// delivery through another replica may have stored it meanwhile.
		err = s.CreatePayload(ctx, run, data)
	}
	if err == nil || apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	// Undo the run, unless someone made it whole meanwhile: a replica that
	// answered a duplicate of this delivery stores the payload and then
	// touches the run, so this delete, locked to the version created,
	// fails instead of taking that run away.
	undone := s.deleteRun(run, run.ResourceVersion)
	if apierrors.IsConflict(undone) {
		return false, nil
	}
	return false, errors.Join(err, undone)
}

// Duplicate tells whether the run named name exists (a delivery seen
// before). A queued run's payload is stored with data if its first writer
// has not stored it yet, so a 202 never names a run without one.
func (s *Kube) Duplicate(ctx context.Context, namespace, name string, data map[string][]byte) (bool, error) {
	run := &agentsv1alpha1.AgentRun{}
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, run)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading AgentRun %s/%s: %w", namespace, name, err)
	}
	if run.Status.State != "" || run.Spec.Payload == nil || run.Annotations[agentsv1alpha1.AnnotationPayloadStoredBy] != "" {
		return true, nil // dispatched, finished, or made whole by an earlier duplicate
	}
	// Queued and not yet confirmed: its first writer may still be storing
	// the payload, and would remove the run if that failed. Store it here
	// too (the same delivery, the same body), or find it stored, then
	// touch the run: the first writer's undo is a delete locked to the
	// version it created, so once the touch lands the run stays.
	if sum := sha256.Sum256(data[agentsv1alpha1.PayloadBodyKey]); run.Spec.Payload.SHA256 != hex.EncodeToString(sum[:]) {
		// Another body under the same delivery (a CloudEvent sent again in
		// the other mode, say, or with other data of the same length): it
		// is not this run's payload, so it is not stored; the run is whole
		// once its first writer's payload is there, which a dry run of the
		// create tells without reading Secrets. A run without the digest
		// (stored before it was recorded) is taken as another body.
		err := s.CreatePayload(ctx, run, data, client.DryRunAll)
		if err == nil {
			return false, fmt.Errorf("AgentRun %s/%s is queued without a stored payload yet, and this call's body differs from the first", namespace, name)
		}
		if !apierrors.IsAlreadyExists(err) {
			return false, err
		}
	} else if err := s.CreatePayload(ctx, run, data); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	metav1.SetMetaDataAnnotation(&run.ObjectMeta, agentsv1alpha1.AnnotationPayloadStoredBy, "duplicate-delivery")
	err = s.client.Patch(ctx, run, patch, client.FieldOwner(FieldOwner))
	if apierrors.IsConflict(err) {
		// Changed since it was read (the operator started it, or another
		// replica touched it): its version moved past the created one, so
		// the first writer cannot remove it any more, if it is still there.
		err = s.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &agentsv1alpha1.AgentRun{})
	}
	if err != nil {
		return false, fmt.Errorf("confirming AgentRun %s/%s: %w", namespace, name, err)
	}
	return true, nil
}

// CreatePayload stores data (the body, and the fields) as run's payload
// Secret, owned by the run.
func (s *Kube) CreatePayload(ctx context.Context, run *agentsv1alpha1.AgentRun, data map[string][]byte, opts ...client.CreateOption) error {
	payload := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: run.Namespace,
			Name:      run.Spec.Payload.SecretName,
			Labels:    map[string]string{agentsv1alpha1.LabelEndpoint: run.Spec.EndpointRef.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(),
				Kind:       "AgentRun",
				Name:       run.Name,
				UID:        run.UID,
			}},
		},
		Type: agentsv1alpha1.SecretTypeWebhookPayload,
		Data: data,
	}
	if err := s.client.Create(ctx, payload, append(opts, client.FieldOwner(FieldOwner))...); err != nil {
		return fmt.Errorf("creating payload Secret %s/%s: %w", payload.Namespace, payload.Name, err)
	}
	return nil
}

// deleteRun removes a run whose payload could not be stored, if it is
// still at resourceVersion (when not empty). It uses its own context: the
// caller's may be the reason the write failed.
func (s *Kube) deleteRun(run *agentsv1alpha1.AgentRun, resourceVersion string) error {
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	pre := client.Preconditions{UID: &run.UID}
	if resourceVersion != "" {
		pre.ResourceVersion = &resourceVersion
	}
	if err := s.client.Delete(ctx, run, pre); apierrors.IsConflict(err) {
		return err
	} else if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing AgentRun %s/%s after its payload failed: %w", run.Namespace, run.Name, err)
	}
	return nil
}

// RecordSkipped creates run and then writes its status: skipped, with
// message and its conditions, in one write.
func (s *Kube) RecordSkipped(ctx context.Context, run *agentsv1alpha1.AgentRun, message string) error {
	if err := s.client.Create(ctx, run, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("creating skipped AgentRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	patch := client.MergeFrom(run.DeepCopy())
	run.Status.State = agentsv1alpha1.RunSkipped
	run.Status.Message = message
	run.Status.CompletedAt = &run.Spec.ReceivedAt
	agentsv1alpha1.SetRunConditions(run)
	if err := s.client.Status().Patch(ctx, run, patch, client.FieldOwner(FieldOwner)); err != nil {
		// A run without its skipped state would look queued: remove it.
		return errors.Join(fmt.Errorf("marking AgentRun %s/%s skipped: %w", run.Namespace, run.Name, err), s.deleteRun(run, ""))
	}
	return nil
}
