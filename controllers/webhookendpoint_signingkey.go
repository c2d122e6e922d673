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

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Signed senders (GitHub, HMAC, StandardWebhooks, Stripe, Slack) are
// verified with the secret itself as the HMAC key, so the receiver needs the
// key, not only its hash. The receiver may read Secrets only in its own
// namespace; the operator keeps one signing-key Secret per signed endpoint
// there (SigningKeySecretName(endpoint UID)), labelled with the endpoint's
// namespace, name and UID, annotated with the hashes of the keys it holds.
// The receiver uses a key only while its hash is the endpoint's
// status.secretHash (or, during a rotation overlap, previousSecretHash), so
// the endpoint's status stays the one source of truth. Owner references
// cannot cross namespaces: the operator deletes the Secret when the
// endpoint goes or stops signing.

// newSecretValue is a generated secret for sender type t: 32 random bytes,
// as unpadded base64url text, or for StandardWebhooks "whsec_" and standard
// base64 (the form Standard Webhooks senders take).
func newSecretValue(src io.Reader, t agentsv1alpha1.SenderType) (string, error) {
	if t != agentsv1alpha1.SenderStandardWebhooks {
		return randomToken(src)
	}
	b := make([]byte, tokenBytes)
	if _, err := io.ReadFull(src, b); err != nil {
		return "", err
	}
	return agentsv1alpha1.StandardWebhooksSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

var errNotStandardWebhooksSecret = errors.New("not a Standard Webhooks secret")

// signingKeyOf is the HMAC key a sender of type t signs with, given the
// secret: the secret's bytes, or for StandardWebhooks the base64 after "whsec_".
func signingKeyOf(t agentsv1alpha1.SenderType, secret []byte) ([]byte, error) {
	if t != agentsv1alpha1.SenderStandardWebhooks {
		return secret, nil
	}
	rest, ok := strings.CutPrefix(string(secret), agentsv1alpha1.StandardWebhooksSecretPrefix)
	if !ok {
		return nil, errNotStandardWebhooksSecret
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return nil, errNotStandardWebhooksSecret
	}
	return key, nil
}

// trackPreviousSecret keeps status.previousSecretHash: when the secret
// changed from oldHash, oldHash verifies for overlap more; a previous secret
// whose time is up is forgotten. It returns how long until it expires (0:
// none pending).
func trackPreviousSecret(st *agentsv1alpha1.WebhookEndpointStatus, oldHash string, overlap time.Duration, now time.Time) time.Duration {
	if overlap <= 0 || st.AuthMode == agentsv1alpha1.AuthNone {
		st.PreviousSecretHash, st.PreviousSecretExpiresAt = "", nil
		return 0
	}
	if oldHash != "" && st.SecretHash != "" && oldHash != st.SecretHash {
		until := metav1.NewTime(now.Add(overlap))
		st.PreviousSecretHash, st.PreviousSecretExpiresAt = oldHash, &until
	}
	if st.PreviousSecretExpiresAt == nil || !now.Before(st.PreviousSecretExpiresAt.Time) || st.PreviousSecretHash == st.SecretHash {
		st.PreviousSecretHash, st.PreviousSecretExpiresAt = "", nil
		return 0
	}
	return st.PreviousSecretExpiresAt.Sub(now)
}

// reconcileSigningKey keeps the endpoint's signing-key Secret in the
// receiver's namespace: present with the current (and during an overlap the
// previous) key for signed senders, absent otherwise. It writes only when
// the cached Secret's hashes differ from what status names.
func (r *WebhookEndpointReconciler) reconcileSigningKey(ctx context.Context, s *endpointScope) error {
	ep := s.ep
	kind := ep.Spec.SenderOf()
	name := agentsv1alpha1.SigningKeySecretName(string(ep.UID))
	cached := secretMetadata(r.Namespace, name)
	err := r.MetadataReader.Get(ctx, client.ObjectKeyFromObject(cached), cached)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, name, err)
	}
	exists := err == nil
	if !kind.Signed() || ep.Spec.AllowUnauthenticated || ep.Status.SecretHash == "" {
		if exists {
			if err := r.Delete(ctx, cached); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting signing-key Secret %s/%s: %w", r.Namespace, name, err)
			}
		}
		return nil
	}
	previousHash := ep.Status.PreviousSecretHash
	if exists && cached.Annotations[agentsv1alpha1.AnnotationKeyHash] == ep.Status.SecretHash &&
		cached.Annotations[agentsv1alpha1.AnnotationPreviousKeyHash] == previousHash {
		return nil
	}
	// About to write: first drop keys left by an earlier endpoint of this name.
	if err := r.deleteSigningKeys(ctx, ep.Namespace, ep.Name, ep.UID); err != nil {
		return err
	}
	secret, err := r.secretValue(ctx, s)
	if err != nil || secret == nil {
		return err
	}
	key, err := signingKeyOf(kind, secret)
	if err != nil {
		s.setCondition(secretReadyCondition(secretNotStandardWebhooks, ep.Status.SecretName, "", 0))
		return nil
	}
	data := map[string][]byte{agentsv1alpha1.SigningKeyCurrent: key}
	if previousHash != "" {
		previous, err := r.previousKey(ctx, name, previousHash)
		if err != nil {
			return err
		}
		if previous == nil {
			previousHash = "" // not kept anywhere: the overlap cannot be honoured
		} else {
			data[agentsv1alpha1.SigningKeyPrevious] = previous
		}
	}
	ac := corev1ac.Secret(name, r.Namespace).
		WithLabels(map[string]string{
			agentsv1alpha1.LabelSigningKey:        "true",
			agentsv1alpha1.LabelEndpointNamespace: ep.Namespace,
			agentsv1alpha1.LabelEndpoint:          ep.Name,
			agentsv1alpha1.LabelEndpointUID:       string(ep.UID),
		}).
		WithAnnotations(map[string]string{
			agentsv1alpha1.AnnotationKeyHash:         ep.Status.SecretHash,
			agentsv1alpha1.AnnotationPreviousKeyHash: previousHash,
		}).
		WithType(corev1.SecretTypeOpaque).
		WithData(data)
	if err := r.Apply(ctx, ac, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing signing-key Secret %s/%s: %w", r.Namespace, name, err)
	}
	return nil
}

// secretValue returns the endpoint's secret: the value this reconcile
// generated or read, else the generated Secret's (read from the API server)
// when its hash is status.secretHash. nil without error: the value is gone,
// and the condition says what to do.
func (r *WebhookEndpointReconciler) secretValue(ctx context.Context, s *endpointScope) ([]byte, error) {
	if s.secretValue != nil {
		return s.secretValue, nil
	}
	ep := s.ep
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ep.Namespace, Name: ep.Status.SecretName}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret %s: %w", ep.Status.SecretName, err)
	}
	key := agentsv1alpha1.WebhookSecretKey
	if ep.Spec.SecretRef != nil {
		key = ep.Spec.SecretRef.Key
	}
	value := secret.Data[key]
	if err != nil || agentsv1alpha1.SecretHash(value) != ep.Status.SecretHash {
		s.setCondition(secretReadyCondition(secretKeyLost, ep.Status.SecretName, key, 0))
		return nil, nil
	}
	return value, nil
}

// previousKey returns the key whose secret hashes to hash from the live
// signing-key Secret (its current key just before a rotation, or the
// previous one it kept), or nil.
func (r *WebhookEndpointReconciler) previousKey(ctx context.Context, name, hash string) ([]byte, error) {
	live := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, live)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, name, err)
	}
	switch hash {
	case live.Annotations[agentsv1alpha1.AnnotationKeyHash]:
		return live.Data[agentsv1alpha1.SigningKeyCurrent], nil
	case live.Annotations[agentsv1alpha1.AnnotationPreviousKeyHash]:
		return live.Data[agentsv1alpha1.SigningKeyPrevious], nil
	}
	return nil, nil
}

// deleteSigningKeys deletes the signing-key Secrets of the endpoint
// namespace/name, but the one of endpoint UID keep (if not empty).
func (r *WebhookEndpointReconciler) deleteSigningKeys(ctx context.Context, namespace, name string, keep types.UID) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := r.MetadataReader.List(ctx, list, client.InNamespace(r.Namespace),
		client.MatchingFields{indexSigningKeyEndpoint: namespace + "/" + name}); err != nil {
		return fmt.Errorf("listing signing-key Secrets of %s/%s: %w", namespace, name, err)
	}
	var errs []error
	for i := range list.Items {
		obj := &list.Items[i]
		if keep != "" && types.UID(obj.Labels[agentsv1alpha1.LabelEndpointUID]) == keep {
			continue
		}
		if err := r.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting signing-key Secret %s/%s: %w", obj.Namespace, obj.Name, err))
		}
	}
	return errors.Join(errs...)
}

// signingKeyEndpoint maps a signing-key Secret to its endpoint, so a
// deleted or changed key is put back and an orphan is removed.
func signingKeyEndpoint(o client.Object) (reconcile.Request, bool) {
	l := o.GetLabels()
	if l[agentsv1alpha1.LabelSigningKey] != "true" || l[agentsv1alpha1.LabelEndpointNamespace] == "" || l[agentsv1alpha1.LabelEndpoint] == "" {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{
		Namespace: l[agentsv1alpha1.LabelEndpointNamespace], Name: l[agentsv1alpha1.LabelEndpoint],
	}}, true
}
