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
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/status"
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
	b := make([]byte, TokenBytes)
	if _, err := io.ReadFull(src, b); err != nil {
		return "", err
	}
	return agentsv1alpha1.StandardWebhooksSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
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
// previous) secret for signed senders, absent otherwise. It writes only when
// the cached Secret's annotations differ from what status and spec name.
func (r *Reconciler) reconcileSigningKey(ctx context.Context, s *endpointScope) error {
	ep := s.ep
	kind := ep.Spec.SenderOf()
	if r.Namespace == "" {
		return nil // no receiver namespace: nothing to hand over
	}
	if !kind.Signed() || ep.Spec.AllowUnauthenticated || ep.Status.SecretHash == "" {
		return r.deleteSigningKeys(ctx, ep.Namespace, ep.Name, "")
	}
	name := agentsv1alpha1.SigningKeySecretName(string(ep.UID))
	cached := cached.SecretMetadata(r.Namespace, name)
	err := r.MetadataReader.Get(ctx, client.ObjectKeyFromObject(cached), cached)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, name, err)
	}
	if err == nil && cached.Annotations[agentsv1alpha1.AnnotationKeyHash] == ep.Status.SecretHash &&
		cached.Annotations[agentsv1alpha1.AnnotationPreviousKeyHash] == ep.Status.PreviousSecretHash &&
		cached.Annotations[agentsv1alpha1.AnnotationSenderType] == string(kind) {
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
	if _, err := agentsv1alpha1.SigningKey(kind, secret); err != nil {
		s.setCondition(secretReadyCondition(secretNotStandardWebhooks, ep.Status.SecretName, "", 0))
		return nil
	}
	previousHash, previous, err := r.previousSecret(ctx, s, name)
	if err != nil {
		return err
	}
	data := map[string][]byte{agentsv1alpha1.SigningKeySecret: secret}
	if previous != nil {
		data[agentsv1alpha1.SigningKeyPreviousSecret] = previous
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
			agentsv1alpha1.AnnotationSenderType:      string(kind),
		}).
		WithType(corev1.SecretTypeOpaque).
		WithData(data)
	if err := r.Apply(ctx, ac, client.FieldOwner(status.FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing signing-key Secret %s/%s: %w", r.Namespace, name, err)
	}
	return nil
}

// previousSecret returns the secret to keep beside the current one, from
// the live signing-key Secret: the one status.previousSecretHash names
// (rotation overlap), or else, while the secret is changing, the one the
// Secret held until now. Until the status write lands the receiver still
// verifies with the old hash, and must find its secret. A previous secret
// that status names but nothing holds any more is dropped from status: the
// overlap cannot be honoured.
func (r *Reconciler) previousSecret(ctx context.Context, s *endpointScope, name string) (string, []byte, error) {
	st := &s.ep.Status
	live := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, live)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return "", nil, fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, name, err)
	}
	hash := st.PreviousSecretHash
	if hash == "" && live != nil && live.Annotations[agentsv1alpha1.AnnotationKeyHash] != st.SecretHash {
		hash = live.Annotations[agentsv1alpha1.AnnotationKeyHash]
	}
	var value []byte
	if live != nil && hash != "" {
		switch hash {
		case live.Annotations[agentsv1alpha1.AnnotationKeyHash]:
			value = live.Data[agentsv1alpha1.SigningKeySecret]
		case live.Annotations[agentsv1alpha1.AnnotationPreviousKeyHash]:
			value = live.Data[agentsv1alpha1.SigningKeyPreviousSecret]
		}
	}
	if value == nil || agentsv1alpha1.SecretHash(value) != hash {
		st.PreviousSecretHash, st.PreviousSecretExpiresAt = "", nil
		return "", nil, nil
	}
	return hash, value, nil
}

// secretValue returns the endpoint's secret: the value this reconcile
// generated or read, else the generated Secret's (read from the API server)
// when its hash is status.secretHash. nil without error: the value is gone,
// and the condition says what to do.
func (r *Reconciler) secretValue(ctx context.Context, s *endpointScope) ([]byte, error) {
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

// deleteSigningKeys deletes the signing-key Secrets of the endpoint
// namespace/name, but the one of endpoint UID keep (if not empty).
func (r *Reconciler) deleteSigningKeys(ctx context.Context, namespace, name string, keep types.UID) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := r.MetadataReader.List(ctx, list, client.InNamespace(r.Namespace),
		client.MatchingFields{cached.IndexSigningKeyEndpoint: namespace + "/" + name}); err != nil {
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
