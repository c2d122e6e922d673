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

package endpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// reconcileSecret keeps status.secretHash in step with the endpoint's
// authentication mode. Generated secrets are made once, when the endpoint
// becomes authenticated, and again only when the rotate-secret annotation
// takes a new value; they are never regenerated silently.
func (r *Reconciler) reconcileSecret(ctx context.Context, s *endpointScope) error {
	oldHash := s.ep.Status.SecretHash
	err := r.reconcileSecretSource(ctx, s)
	s.requeueWithin(trackPreviousSecret(&s.ep.Status, oldHash, s.ep.Spec.RotationOverlapOf(), r.Clock.Now()))
	return err
}

// reconcileSecretSource generates, reads or drops the secret as the spec says.
func (r *Reconciler) reconcileSecretSource(ctx context.Context, s *endpointScope) error {
	ep := s.ep
	switch {
	case ep.Spec.AllowUnauthenticated:
		ep.Status.AuthMode = agentsv1alpha1.AuthNone
		ep.Status.SecretHash, ep.Status.SecretName, ep.Status.SecretRotatedAt = "", "", nil
		s.setCondition(secretReadyCondition(secretAuthDisabled, "", "", 0))
		return r.deleteGeneratedSecret(ctx, s)
	case ep.Spec.OIDCOf() != nil:
		ep.Status.AuthMode = agentsv1alpha1.AuthOIDC
		ep.Status.SecretHash, ep.Status.SecretName, ep.Status.SecretRotatedAt = "", "", nil
		s.setCondition(secretReadyCondition(secretOIDC, "", "", 0))
		return r.deleteGeneratedSecret(ctx, s)
	case ep.Spec.SecretRef != nil:
		ep.Status.AuthMode = agentsv1alpha1.AuthSecret
		if err := r.reconcileSecretRef(ctx, s); err != nil {
			return err
		}
		return r.deleteGeneratedSecret(ctx, s)
	default:
		return r.reconcileGeneratedSecret(ctx, s)
	}
}

// reconcileGeneratedSecret reports on the generated Secret or, when a
// secret must be made (generatedSecretAction), makes one, writes it and
// puts its hash in status.
func (r *Reconciler) reconcileGeneratedSecret(ctx context.Context, s *endpointScope) error {
	ep := s.ep
	name := agentsv1alpha1.GeneratedSecretName(ep.Name)
	rotation := agentsv1alpha1.RotationValue(ep.Annotations[agentsv1alpha1.AnnotationRotateSecret])
	fresh, rotate := generatedSecretAction(ep)
	ep.Status.AuthMode = agentsv1alpha1.AuthSecret

	if !fresh && !rotate {
		return r.observeGeneratedSecret(ctx, s, name)
	}
	value, err := newSecretValue(r.Rand, ep.Spec.SenderOf())
	if err != nil {
		return fmt.Errorf("generating the secret: %w", err)
	}
	if written, err := r.writeGeneratedSecret(ctx, s, name, value, rotate); err != nil || !written {
		return err
	}
	r.useGeneratedSecret(s, name, value, rotation, rotate)
	return nil
}

// observeGeneratedSecret reports on a generated secret that stays as it is:
// its Secret deleted (warned once), rotated (said until the next change), or
// unchanged.
func (r *Reconciler) observeGeneratedSecret(ctx context.Context, s *endpointScope, name string) error {
	ep := s.ep
	exists, err := r.secretExists(ctx, ep.Namespace, name)
	if err != nil {
		return err
	}
	current := meta.FindStatusCondition(ep.Status.Conditions, agentsv1alpha1.ConditionSecretReady)
	switch {
	case !exists:
		if current == nil || current.Reason != agentsv1alpha1.ReasonGeneratedSecretDeleted {
			r.Recorder.Eventf(ep, nil, corev1.EventTypeWarning, agentsv1alpha1.EventGeneratedSecretDeleted, "Observe",
				"Secret %s was deleted; the endpoint keeps accepting its secret. Rotate to get a new one", name)
		}
		s.setCondition(secretReadyCondition(secretGeneratedDeleted, name, "", 0))
	case current != nil && current.Reason == agentsv1alpha1.ReasonSecretRotated:
		// keep saying it was rotated until the next change
	default:
		s.setCondition(secretReadyCondition(secretUnchanged, name, "", 0))
	}
	return nil
}

// writeGeneratedSecret writes value into the Secret called name: created
// for a fresh secret (one request; it fails if a Secret of that name
// exists), else, or when one exists, applied. It reports false, with status
// saying so, when a Secret of that name is not the endpoint's.
func (r *Reconciler) writeGeneratedSecret(ctx context.Context, s *endpointScope, name, value string, rotate bool) (bool, error) {
	ep := s.ep
	if !rotate {
		if created, err := r.createGeneratedSecret(ctx, ep, name, value); err != nil || created {
			return created, err
		}
		// Ours from an earlier try whose status write did not land, or
		// someone else's.
	}
	// Never take over a Secret of that name that is not the endpoint's.
	if taken, err := r.secretNameTaken(ctx, ep, name); err != nil || taken {
		if taken {
			ep.Status.SecretHash, ep.Status.SecretName = "", ""
			s.setCondition(secretReadyCondition(secretNameTaken, name, "", 0))
		}
		return false, err
	}
	if err := r.applyGeneratedSecret(ctx, ep, name, value); err != nil {
		return false, err
	}
	return true, nil
}

// useGeneratedSecret puts the hash of value, now in Secret name, in status.
// The events wait for the status write: until the hash is there, the new
// secret does not work.
func (r *Reconciler) useGeneratedSecret(s *endpointScope, name, value, rotation string, rotate bool) {
	ep := s.ep
	now := metav1.NewTime(r.Clock.Now())
	s.secretValue = []byte(value)
	ep.Status.SecretName = name
	ep.Status.SecretHash = agentsv1alpha1.SecretHash([]byte(value))
	ep.Status.SecretRotatedAt = &now
	ep.Status.LastHandledRotation = rotation
	if rotate {
		s.setCondition(secretReadyCondition(secretRotated, name, "", 0))
		s.afterStatusWritten(func() {
			r.Recorder.Eventf(ep, nil, corev1.EventTypeNormal, agentsv1alpha1.EventSecretRotated, "Rotate",
				"Rotated the secret in Secret %s; the old secret no longer works", name)
		})
	} else {
		s.setCondition(secretReadyCondition(secretGenerated, name, "", 0))
		s.afterStatusWritten(func() {
			r.Recorder.Eventf(ep, nil, corev1.EventTypeNormal, agentsv1alpha1.EventSecretGenerated, "Generate",
				"Generated the secret into Secret %s", name)
		})
	}
}

// generatedSecretApply is the Secret holding an endpoint's generated secret,
// owned by the endpoint.
func generatedSecretApply(ep *agentsv1alpha1.WebhookEndpoint, name, value string) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(name, ep.Namespace).
		WithLabels(map[string]string{
			agentsv1alpha1.LabelEndpoint: ep.Name,
			agentsv1alpha1.LabelAgent:    ep.Spec.AgentRef.Name,
		}).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(agentsv1alpha1.GroupVersion.String()).
			WithKind("WebhookEndpoint").
			WithName(ep.Name).
			WithUID(ep.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{agentsv1alpha1.WebhookSecretKey: []byte(value)})
}

// createGeneratedSecret creates the generated Secret; false without error
// means a Secret of that name exists already.
func (r *Reconciler) createGeneratedSecret(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, name, value string) (bool, error) {
	ac := generatedSecretApply(ep, name, value)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ep.Namespace, Name: name, Labels: ac.Labels},
		Type:       *ac.Type,
		Data:       ac.Data,
	}
	for _, ref := range ac.OwnerReferences {
		secret.OwnerReferences = append(secret.OwnerReferences, metav1.OwnerReference{
			APIVersion: *ref.APIVersion, Kind: *ref.Kind, Name: *ref.Name, UID: *ref.UID,
			Controller: ref.Controller, BlockOwnerDeletion: ref.BlockOwnerDeletion,
		})
	}
	err := r.Create(ctx, secret, client.FieldOwner(status.FieldOwner))
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("creating Secret %s: %w", name, err)
	}
	return true, nil
}

// applyGeneratedSecret creates or overwrites the generated Secret, owned by
// the endpoint, with server-side apply.
func (r *Reconciler) applyGeneratedSecret(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, name, value string) error {
	if err := r.Apply(ctx, generatedSecretApply(ep, name, value), client.FieldOwner(status.FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing Secret %s: %w", name, err)
	}
	return nil
}

// reconcileSecretRef hashes the user's own Secret (read uncached), if it is
// labelled for hookrun.
func (r *Reconciler) reconcileSecretRef(ctx context.Context, s *endpointScope) error {
	ep := s.ep
	ref := ep.Spec.SecretRef
	oldHash := ep.Status.SecretHash
	ep.Status.SecretName = ref.Name
	ep.Status.SecretHash = ""

	secret, err := secretref.Get(ctx, r.APIReader, ep.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		s.setCondition(secretReadyCondition(secretRefNotFound, ref.Name, ref.Key, 0))
		return nil
	case errors.Is(err, secretref.ErrNotReferable):
		s.setCondition(secretReadyCondition(secretRefNotReferable, ref.Name, ref.Key, 0))
		return nil
	case err != nil:
		ep.Status.SecretHash = oldHash
		return fmt.Errorf("reading Secret %s: %w", ref.Name, err)
	}
	value, ok := secret.Data[ref.Key]
	switch {
	case !ok:
		s.setCondition(secretReadyCondition(secretRefKeyMissing, ref.Name, ref.Key, 0))
	case len(value) < agentsv1alpha1.MinSecretBytes:
		s.setCondition(secretReadyCondition(secretRefTooShort, ref.Name, ref.Key, len(value)))
	case len(bytes.TrimSpace(value)) != len(value):
		// HTTP trims header values: a secret that starts or ends with
		// white space could never match what a sender sends.
		s.setCondition(secretReadyCondition(secretRefWhiteSpace, ref.Name, ref.Key, 0))
	default:
		s.secretValue = value
		ep.Status.SecretHash = agentsv1alpha1.SecretHash(value)
		if ep.Status.SecretHash != oldHash {
			now := metav1.NewTime(r.Clock.Now())
			ep.Status.SecretRotatedAt = &now
		}
		s.setCondition(secretReadyCondition(secretFromRef, ref.Name, ref.Key, 0))
	}
	return nil
}

// deleteGeneratedSecret removes a generated Secret the endpoint no longer
// uses, so no stale secret is left for someone to find.
func (r *Reconciler) deleteGeneratedSecret(ctx context.Context, s *endpointScope) error {
	ep := s.ep
	name := agentsv1alpha1.GeneratedSecretName(ep.Name)
	obj := cached.SecretMetadata(ep.Namespace, name)
	if err := r.MetadataReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, ep) {
		return nil // not ours: leave it alone
	}
	if err := r.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting unused Secret %s: %w", name, err)
	}
	return nil
}

// secretNameTaken tells whether a Secret called name exists and is not
// controlled by ep (read from the API server: the decision must not rest on
// a lagging cache).
func (r *Reconciler) secretNameTaken(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, name string) (bool, error) {
	obj := cached.SecretMetadata(ep.Namespace, name)
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	return !metav1.IsControlledBy(obj, ep), nil
}

// secretExists looks in the metadata cache and, when the cache says no,
// confirms with the API server (the cache may lag our own write).
func (r *Reconciler) secretExists(ctx context.Context, namespace, name string) (bool, error) {
	obj := cached.SecretMetadata(namespace, name)
	err := r.MetadataReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	return true, nil
}
