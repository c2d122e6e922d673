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

package secretref

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// Secrets named by a user's reference (Agent.spec.a2a.authSecretRef,
// WebhookEndpoint.spec.secretRef) are read with the operator's rights, which
// reach every Secret. Only Secrets labelled for hookrun are used, so a
// reference cannot make the operator hand a Secret nobody meant for hookrun
// to an agent URL, or reveal its hash and length.

// ErrNotReferable: the Secret exists but is not labelled for hookrun.
var ErrNotReferable = errors.New("the Secret is not labelled " + agentsv1alpha1.LabelAllowReference + "=" + agentsv1alpha1.AllowReferenceTrue)

// referable tells whether a Secret's labels allow hookrun to use it.
func referable(o client.Object) bool {
	return o.GetLabels()[agentsv1alpha1.LabelAllowReference] == agentsv1alpha1.AllowReferenceTrue
}

// Get reads a referenced Secret from r (the API server): its
// metadata first, and its data only when it is labelled for hookrun. It
// returns the API server's not-found error, or ErrNotReferable.
func Get(ctx context.Context, r client.Reader, namespace, name string) (*corev1.Secret, error) {
	obj := cached.SecretMetadata(namespace, name)
	if err := r.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return nil, err
	}
	if !referable(obj) {
		return nil, ErrNotReferable
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(obj), secret); err != nil {
		return nil, err
	}
	if !referable(secret) { // the label went between the two reads
		return nil, ErrNotReferable
	}
	return secret, nil
}

// NotReferableMessage says that Secret name, named in field, is not used and
// how to mark it for hookrun.
func NotReferableMessage(field, name string) string {
	return fmt.Sprintf("Secret %q named in %s is not labelled for hookrun, so the operator does not read it. "+
		"If it is meant for this, label it: kubectl label secret %s %s=%s",
		name, field, name, agentsv1alpha1.LabelAllowReference, agentsv1alpha1.AllowReferenceTrue)
}
