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

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// errNoSecret: the endpoint allows unauthenticated calls.
var errNoSecret = errors.New("it allows unauthenticated calls (spec.allowUnauthenticated) and has no secret; " +
	"set allowUnauthenticated to false and the operator generates one")

// secretWarning is the seed's warning, printed with every secret shown.
func secretWarning(ep *agentsv1alpha1.WebhookEndpoint) string {
	where := fmt.Sprintf("Secret %s/%s", ep.Namespace, secretLocation(ep).Name)
	if ep.Spec.SecretRef != nil {
		return fmt.Sprintf(`This secret is yours (spec.secretRef): it lives in %s, which hookrun
reads but never changes, and only its SHA-256 hash is in the endpoint's status. Keep it in your
secret store; to replace it, write a new value into that Secret (the operator follows it).
`, where)
	}
	return fmt.Sprintf(`Save this secret now, in the sender's settings or your secret store. hookrun keeps
only its SHA-256 hash in the endpoint's status; the plain value stays in %s,
which only users allowed to read Secrets there can see. A lost secret cannot be recovered
from hookrun: replace it with "kubectl hookrun rotate %s" (the old one stops working at once).
`, where, ep.Name)
}

// secretLocation is the Secret and key that hold the endpoint's secret.
func secretLocation(ep *agentsv1alpha1.WebhookEndpoint) client.ObjectKey {
	if ref := ep.Spec.SecretRef; ref != nil {
		return client.ObjectKey{Namespace: ep.Namespace, Name: ref.Name}
	}
	return client.ObjectKey{Namespace: ep.Namespace, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}
}

func secretKey(ep *agentsv1alpha1.WebhookEndpoint) string {
	if ref := ep.Spec.SecretRef; ref != nil {
		return ref.Key
	}
	return agentsv1alpha1.WebhookSecretKey
}

// secretOf reads the endpoint's plain secret, the one whose hash is in its
// status (the receiver accepts no other).
func (e *env) secretOf(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, error) {
	if ep.Spec.OIDCOf() != nil {
		return "", noSecretError(ep)
	}
	if ep.Status.AuthMode == agentsv1alpha1.AuthNone || (ep.Spec.AllowUnauthenticated && ep.Spec.SecretRef == nil) {
		return "", fmt.Errorf("endpoint %s/%s: %w", ep.Namespace, ep.Name, errNoSecret)
	}
	if ep.Status.SecretHash == "" {
		why := ""
		if c := meta.FindStatusCondition(ep.Status.Conditions, agentsv1alpha1.ConditionSecretReady); c != nil {
			why = fmt.Sprintf(" (SecretReady %s, %s: %s)", c.Status, c.Reason, c.Message)
		}
		return "", fmt.Errorf("endpoint %s/%s has no secret in use yet%s", ep.Namespace, ep.Name, why)
	}
	key := secretLocation(ep)
	s := &corev1.Secret{}
	if err := e.client.Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("the Secret %s that holds endpoint %s's secret does not exist", key, ep.Name)
		}
		return "", refused(err, fmt.Sprintf("read Secret %s, which holds endpoint %s's secret", key, ep.Name), roleSecrets)
	}
	value, ok := s.Data[secretKey(ep)]
	if !ok {
		return "", fmt.Errorf("the Secret %s has no key %q", key, secretKey(ep))
	}
	if agentsv1alpha1.SecretHash(value) != ep.Status.SecretHash {
		return "", fmt.Errorf("the Secret %s holds a value the receiver does not accept yet (its hash is not the endpoint's status.secretHash): "+
			"the operator has not published it; try again in a few seconds", key)
	}
	return string(value), nil
}

func newSecretCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:               "secret NAME",
		Short:             "Print an endpoint's secret, with the warning to save it",
		Long:              "Print an endpoint's plain secret on standard output (the warning goes to standard error). Needs get on Secrets in the endpoint's namespace.",
		Args:              exactlyOne("endpoint name"),
		ValidArgsFunction: e.completeEndpoints,
		RunE: e.onNamed(nil, func(cmd *cobra.Command, ns, name string) error {
			ep, err := e.endpoint(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			secret, err := e.secretOf(cmd.Context(), ep)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.out, secret)
			fmt.Fprint(e.errOut, "\n"+secretWarning(ep))
			return nil
		}),
	}
}

func newRotateCommand(e *env) *cobra.Command {
	var noWait bool
	cmd := &cobra.Command{
		Use:   "rotate NAME",
		Short: "Rotate an endpoint's secret, wait until the new one is in use, and print it once",
		Long: `Rotate an endpoint's generated secret: the operator makes a new one and publishes its
hash, and the old secret stops working as soon as the receiver sees it (after
spec.sender.rotationOverlap, if set). Only the endpoint's owner may rotate.
Prints the new secret on standard output once it is in use; with --no-wait it
only asks for the rotation.`,
		Args:              exactlyOne("endpoint name"),
		ValidArgsFunction: e.completeEndpoints,
		RunE: e.onNamed(nil, func(cmd *cobra.Command, ns, name string) error {
			return e.rotate(cmd.Context(), ns, name, noWait)
		}),
	}
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "Only ask for the rotation; print nothing secret.")
	return cmd
}

func (e *env) rotate(ctx context.Context, ns, name string, noWait bool) error {
	ep, err := e.endpoint(ctx, ns, name)
	if err != nil {
		return err
	}
	switch {
	case ep.Spec.SecretRef != nil:
		return fmt.Errorf("endpoint %s/%s uses its own secret (spec.secretRef names Secret %s): rotate it by writing a new value into that Secret; the operator follows it",
			ns, name, ep.Spec.SecretRef.Name)
	case ep.Spec.AllowUnauthenticated:
		return fmt.Errorf("endpoint %s/%s cannot be rotated: %w", ns, name, errNoSecret)
	case ep.Spec.OIDCOf() != nil:
		return noSecretError(ep)
	}
	oldHash := ep.Status.SecretHash
	value := e.now().UTC().Format(time.RFC3339Nano)
	patch := client.RawPatch(client.Merge.Type(), fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, agentsv1alpha1.AnnotationRotateSecret, value))
	if err := e.client.Patch(ctx, ep, patch); err != nil {
		return refused(err, fmt.Sprintf("rotate the secret of endpoint %s/%s", ns, name), roleMember)
	}
	if noWait {
		fmt.Fprintf(e.errOut, "Rotation of endpoint %s/%s requested (%s=%s). \"kubectl hookrun secret %s\" prints the new secret once the operator has made it.\n",
			ns, name, agentsv1alpha1.AnnotationRotateSecret, value, name)
		return nil
	}
	fmt.Fprintf(e.errOut, "Rotating the secret of endpoint %s/%s...\n", ns, name)
	var secret string
	err = e.waitFor(ctx, func(ctx context.Context) (bool, error) {
		cur, err := e.endpoint(ctx, ns, name)
		if err != nil {
			return false, err
		}
		if cur.Status.LastHandledRotation != agentsv1alpha1.RotationValue(value) || cur.Status.SecretHash == "" || cur.Status.SecretHash == oldHash {
			return false, nil
		}
		ep = cur
		secret, err = e.secretOf(ctx, cur)
		if apierrors.IsForbidden(err) {
			return false, err // rotated, but the new secret is not the user's to read
		}
		return err == nil, nil
	})
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("rotated: endpoint %s/%s has a new secret (hash %s) and the old one no longer works, but %w",
			ns, name, ep.Status.SecretHash, err)
	}
	if err != nil {
		return fmt.Errorf("the operator has not published a new secret for endpoint %s/%s within %s (kubectl describe webhookendpoint %s shows its conditions): %w",
			ns, name, e.timeout, name, err)
	}
	fmt.Fprintf(e.errOut, "New secret of endpoint %s/%s (hash %s):\n", ns, name, ep.Status.SecretHash)
	fmt.Fprintln(e.out, secret)
	if exp := ep.Status.PreviousSecretExpiresAt; exp != nil && exp.After(e.now()) {
		fmt.Fprintf(e.errOut, "\nThe previous secret still works until %s (spec.sender.rotationOverlap).\n", exp.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintln(e.errOut, "\nThe previous secret no longer works.")
	}
	fmt.Fprint(e.errOut, secretWarning(ep))
	return nil
}

// pollInterval is how often the plugin looks again while it waits.
const pollInterval = 200 * time.Millisecond

// waitFor polls done until it is true, it fails, or --wait-timeout passes.
func (e *env) waitFor(ctx context.Context, done wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, pollInterval, e.timeout, true, done)
}
