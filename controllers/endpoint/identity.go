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
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// An endpoint's ID is random, or pinned: read once from the Secret key that
// spec.endpointIDSecretRef names, so that an endpoint applied again after a
// cluster rebuild keeps its URL. The pure decisions are table-tested in
// webhookendpoint_identity_test.go.

// pinnedIDOutcome is what reading spec.endpointIDSecretRef found.
type pinnedIDOutcome int

const (
	pinnedIDValid pinnedIDOutcome = iota
	pinnedIDSecretNotFound
	pinnedIDSecretNotReferable
	pinnedIDKeyMissing
	pinnedIDMalformed
	// pinnedIDReadFailed: a transient error; the reconcile returns it.
	pinnedIDReadFailed
)

// validEndpointID tells whether id has the form of an endpoint ID: 43
// characters of base64url without padding that decode to 32 bytes, as an
// encoder writes them (the unused low bits zero).
func validEndpointID(id string) bool {
	if len(id) != base64.RawURLEncoding.EncodedLen(TokenBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(id)
	return err == nil && len(b) == TokenBytes
}

// pinnedID decides the ID that key of secret pins, from what reading the
// Secret (getReferableSecret) returned.
func pinnedID(secret *corev1.Secret, key string, readErr error) (string, pinnedIDOutcome) {
	switch {
	case apierrors.IsNotFound(readErr):
		return "", pinnedIDSecretNotFound
	case errors.Is(readErr, secretref.ErrNotReferable):
		return "", pinnedIDSecretNotReferable
	case readErr != nil:
		return "", pinnedIDReadFailed
	}
	value, ok := secret.Data[key]
	switch {
	case !ok:
		return "", pinnedIDKeyMissing
	case !validEndpointID(string(value)):
		return "", pinnedIDMalformed
	}
	return string(value), pinnedIDValid
}

// pinnedIDSummary is the endpoint's summary while its pinned ID cannot be
// used: it has no ID and no URL, and only a change of the Secret helps
// (Stalled). size is the length of a malformed value.
func pinnedIDSummary(outcome pinnedIDOutcome, ref *agentsv1alpha1.SecretKeyReference, size int) status.Summary {
	const noURL = "The endpoint has no ID and no URL until then (the value is read once)"
	switch outcome {
	case pinnedIDSecretNotFound:
		return status.Stalled(agentsv1alpha1.ReasonSecretNotFound,
			fmt.Sprintf("Secret %q named in spec.endpointIDSecretRef does not exist. %s", ref.Name, noURL))
	case pinnedIDSecretNotReferable:
		return status.Stalled(agentsv1alpha1.ReasonSecretNotReferable, secretref.NotReferableMessage("spec.endpointIDSecretRef", ref.Name)+". "+noURL)
	case pinnedIDKeyMissing:
		return status.Stalled(agentsv1alpha1.ReasonSecretKeyMissing,
			fmt.Sprintf("Secret %q has no key %q (spec.endpointIDSecretRef.key). %s", ref.Name, ref.Key, noURL))
	default: // pinnedIDMalformed
		return status.Stalled(agentsv1alpha1.ReasonEndpointIDInvalid,
			fmt.Sprintf("Key %q of Secret %q holds %d bytes that are not an endpoint ID: it must be 43 characters of base64url without padding "+
				"(A-Z a-z 0-9 - _, no newline), the text form of 32 random bytes, for example from "+
				"head -c 32 /dev/urandom | basenc --base64url | tr -d '=\\n'. %s",
				ref.Key, ref.Name, size, noURL))
	}
}

// newEndpointID is the ID an endpoint without one gets: the value of
// spec.endpointIDSecretRef, or random. It returns "" while a pinned ID
// cannot be used; s.idProblem then says why.
func (r *Reconciler) newEndpointID(ctx context.Context, s *endpointScope) (string, error) {
	ref := s.ep.Spec.EndpointIDSecretRef
	if ref == nil {
		id, err := randomToken(r.Rand)
		if err != nil {
			return "", fmt.Errorf("generating the endpoint ID: %w", err)
		}
		return id, nil
	}
	secret, err := secretref.Get(ctx, r.APIReader, s.ep.Namespace, ref.Name)
	id, outcome := pinnedID(secret, ref.Key, err)
	switch outcome {
	case pinnedIDValid:
		return id, nil
	case pinnedIDReadFailed:
		return "", fmt.Errorf("reading Secret %s (spec.endpointIDSecretRef): %w", ref.Name, err)
	}
	size := 0
	if secret != nil {
		size = len(secret.Data[ref.Key])
	}
	problem := pinnedIDSummary(outcome, ref, size)
	s.idProblem = &problem
	return "", nil
}

// reconcileIdentity gives the endpoint its ID once (random, or pinned by
// spec.endpointIDSecretRef), derives the URL and finds out whether another
// endpoint holds the same ID (the receiver serves that one).
func (r *Reconciler) reconcileIdentity(ctx context.Context, s *endpointScope) error {
	if s.ep.Status.EndpointID == "" {
		id, err := r.newEndpointID(ctx, s)
		if err != nil || id == "" {
			return err
		}
		// A pinned ID that another endpoint holds is never written: the
		// first to hold an ID keeps it, whenever a copy of it appears. The
		// endpoint waits for the ID before it looks for a holder, so that
		// a holder deleted in between still wakes it.
		r.idWaiters.wait(id, client.ObjectKeyFromObject(s.ep))
		holders, err := r.endpointsWithID(ctx, id, s.ep)
		if err != nil {
			return err
		}
		if len(holders) > 0 {
			first := &holders[0]
			for i := range holders {
				if holders[i].HoldsIDBefore(first) {
					first = &holders[i]
				}
			}
			r.idWaiters.sawHolder(id, first.Namespace)
			problem := status.Stalled(agentsv1alpha1.ReasonEndpointIDConflict, fmt.Sprintf(
				"Another WebhookEndpoint holds the endpoint ID that Secret %q pins and receives its calls. "+
					"This one gets no ID and no URL until that endpoint is deleted", s.ep.Spec.EndpointIDSecretRef.Name))
			s.idProblem = &problem
			return nil
		}
		if until, reserved := r.idWaiters.reservedFor(id, s.ep.Namespace, r.Clock.Now()); reserved {
			// Time, not a change from outside, ends this wait: reconciling.
			problem := status.Reconciling(agentsv1alpha1.ReasonEndpointIDConflict, fmt.Sprintf(
				"The WebhookEndpoint that held the endpoint ID that Secret %q pins was deleted; until %s only an endpoint of its namespace may take it. "+
					"This one gets no ID and no URL until then", s.ep.Spec.EndpointIDSecretRef.Name, until.UTC().Format(time.RFC3339)))
			s.idProblem = &problem
			s.requeueWithin(until.Sub(r.Clock.Now()))
			return nil
		}
		if !r.idWaiters.claim(id, client.ObjectKeyFromObject(s.ep), r.CacheClock.Now()) {
			problem := status.Reconciling(agentsv1alpha1.ReasonEndpointIDConflict, fmt.Sprintf(
				"Another WebhookEndpoint is taking the endpoint ID that Secret %q pins right now; this one looks again in a second", s.ep.Spec.EndpointIDSecretRef.Name))
			s.idProblem = &problem
			s.requeueWithin(time.Second)
			return nil
		}
		// As stored: to the microsecond.
		now := metav1.NewMicroTime(r.Clock.Now().Truncate(time.Microsecond))
		s.ep.Status.EndpointID, s.ep.Status.EndpointIDSince = id, &now
	}
	r.idWaiters.forget(client.ObjectKeyFromObject(s.ep))
	s.ep.Status.URL = EndpointURL(r.PublicBaseURL, s.ep.Status.EndpointID)
	same, err := r.endpointsWithID(ctx, s.ep.Status.EndpointID, s.ep)
	if err != nil {
		return err
	}
	for i := range same {
		if same[i].HoldsIDBefore(s.ep) {
			s.idHeldElsewhere = true
		}
	}
	return nil
}

// endpointsWithID lists the endpoints other than ep whose status has id.
func (r *Reconciler) endpointsWithID(ctx context.Context, id string, ep *agentsv1alpha1.WebhookEndpoint) ([]agentsv1alpha1.WebhookEndpoint, error) {
	same := &agentsv1alpha1.WebhookEndpointList{}
	if err := r.List(ctx, same, client.MatchingFields{cached.IndexEndpointID: id}); err != nil {
		return nil, fmt.Errorf("listing endpoints with this endpoint ID: %w", err)
	}
	others := same.Items[:0]
	for i := range same.Items {
		if same.Items[i].UID != ep.UID {
			others = append(others, same.Items[i])
		}
	}
	return others, nil
}

// randomToken returns TokenBytes bytes from src as unpadded base64url text.
func randomToken(src io.Reader) (string, error) {
	if src == nil {
		src = rand.Reader
	}
	b := make([]byte, TokenBytes)
	if _, err := io.ReadFull(src, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// EndpointURL is the receive URL of an endpoint ID under base (a trailing
// slash of base is ignored).
func EndpointURL(base, endpointID string) string {
	return strings.TrimRight(base, "/") + "/api/webhooks/" + endpointID + "/receive"
}
