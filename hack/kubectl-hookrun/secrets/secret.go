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

package secrets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/senders"
)

// errNoSecret: the endpoint allows unauthenticated calls.
var errNoSecret = errors.New("it allows unauthenticated calls (spec.allowUnauthenticated) and has no secret; " +
	"kubectl hookrun add-secret gives it one")

// Warning is the seed's warning, printed with every secret shown.
func Warning(ep *agentsv1alpha1.WebhookEndpoint) string {
	where := fmt.Sprintf("Secret %s/%s", ep.Namespace, Location(ep).Name)
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

// Location is the Secret and key that hold the endpoint's secret.
func Location(ep *agentsv1alpha1.WebhookEndpoint) client.ObjectKey {
	if ref := ep.Spec.SecretRef; ref != nil {
		return client.ObjectKey{Namespace: ep.Namespace, Name: ref.Name}
	}
	return client.ObjectKey{Namespace: ep.Namespace, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}
}

func Key(ep *agentsv1alpha1.WebhookEndpoint) string {
	if ref := ep.Spec.SecretRef; ref != nil {
		return ref.Key
	}
	return agentsv1alpha1.WebhookSecretKey
}

// Of reads the endpoint's plain secret, the one whose hash is in its
// status (the receiver accepts no other).
func Of(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint) (string, error) {
	if ep.Spec.OIDCOf() != nil {
		return "", senders.NoSecretError(ep)
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
	key := Location(ep)
	s := &corev1.Secret{}
	if err := e.Client.Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("the Secret %s that holds endpoint %s's secret does not exist", key, ep.Name)
		}
		return "", cli.Refused(err, fmt.Sprintf("read Secret %s, which holds endpoint %s's secret", key, ep.Name), cli.RoleSecrets)
	}
	value, ok := s.Data[Key(ep)]
	if !ok {
		return "", fmt.Errorf("the Secret %s has no key %q", key, Key(ep))
	}
	if agentsv1alpha1.SecretHash(value) != ep.Status.SecretHash {
		return "", fmt.Errorf("the Secret %s holds a value the receiver does not accept yet (its hash is not the endpoint's status.secretHash): "+
			"the operator has not published it; try again in a few seconds", key)
	}
	return string(value), nil
}

func NewShowCommand(e *cli.Env) *cobra.Command {
	return &cobra.Command{
		Use:               "secret NAME",
		Short:             "Print an endpoint's secret, with the warning to save it",
		Long:              "Print an endpoint's plain secret on standard output (the warning goes to standard error). Needs get on Secrets in the endpoint's namespace.",
		Args:              cli.ExactlyOne("endpoint name"),
		ValidArgsFunction: e.CompleteEndpoints,
		RunE: e.OnNamed(nil, func(cmd *cobra.Command, ns, name string) error {
			ep, err := e.Endpoint(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			secret, err := Of(cmd.Context(), e, ep)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.Out, secret)
			fmt.Fprint(e.ErrOut, "\n"+Warning(ep))
			return nil
		}),
	}
}

func NewRotateCommand(e *cli.Env) *cobra.Command {
	var noWait bool
	cmd := &cobra.Command{
		Use:   "rotate NAME",
		Short: "Rotate an endpoint's secret, wait until the new one is in use, and print it once",
		Long: `Rotate an endpoint's generated secret: the operator makes a new one and publishes its
hash, and the old secret stops working as soon as the receiver sees it (after
spec.sender.rotationOverlap, if set). Only the endpoint's owner may rotate.
Prints the new secret on standard output once it is in use; with --no-wait it
only asks for the rotation.`,
		Args:              cli.ExactlyOne("endpoint name"),
		ValidArgsFunction: e.CompleteEndpoints,
		RunE: e.OnNamed(nil, func(cmd *cobra.Command, ns, name string) error {
			return rotate(cmd.Context(), e, ns, name, noWait)
		}),
	}
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "Only ask for the rotation; print nothing secret.")
	return cmd
}

func rotate(ctx context.Context, e *cli.Env, ns, name string, noWait bool) error {
	ep, value, err := RequestRotation(ctx, e, ns, name)
	if err != nil {
		return err
	}
	if noWait {
		fmt.Fprintf(e.ErrOut, "Rotation of endpoint %s/%s requested (%s=%s). \"kubectl hookrun secret %s\" prints the new secret once the operator has made it.\n",
			ns, name, agentsv1alpha1.AnnotationRotateSecret, value, name)
		return nil
	}
	fmt.Fprintf(e.ErrOut, "Rotating the secret of endpoint %s/%s...\n", ns, name)
	made, err := AwaitRotation(ctx, e, ep, value)
	if err != nil {
		return err
	}
	printNewSecret(e, made)
	return nil
}

// RequestRotation asks the operator for a new generated secret of the
// endpoint: the rotation annotation, with the value it returns.
func RequestRotation(ctx context.Context, e *cli.Env, ns, name string) (*agentsv1alpha1.WebhookEndpoint, string, error) {
	ep, err := e.Endpoint(ctx, ns, name)
	if err != nil {
		return nil, "", err
	}
	switch {
	case ep.Spec.SecretRef != nil:
		return nil, "", fmt.Errorf("endpoint %s/%s uses its own secret (spec.secretRef names Secret %s): rotate it by writing a new value into that Secret; the operator follows it",
			ns, name, ep.Spec.SecretRef.Name)
	case ep.Spec.AllowUnauthenticated:
		return nil, "", fmt.Errorf("endpoint %s/%s cannot be rotated: %w", ns, name, errNoSecret)
	case ep.Spec.OIDCOf() != nil:
		return nil, "", senders.NoSecretError(ep)
	}
	value := e.Now().UTC().Format(time.RFC3339Nano)
	patch := client.RawPatch(client.Merge.Type(), fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, agentsv1alpha1.AnnotationRotateSecret, value))
	if err := e.Client.Patch(ctx, ep, patch); err != nil {
		return nil, "", cli.Refused(err, fmt.Sprintf("rotate the secret of endpoint %s/%s", ns, name), cli.RoleMember)
	}
	return ep, value, nil
}

// AwaitRotation waits until the operator has handled the rotation asked
// for with value and published a new secret, and reads it.
func AwaitRotation(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint, value string) (*NewSecret, error) {
	oldHash := ep.Status.SecretHash
	made, err := awaitSecret(ctx, e, ep.Namespace, ep.Name, func(cur *agentsv1alpha1.WebhookEndpoint) bool {
		return cur.Status.LastHandledRotation == agentsv1alpha1.RotationValue(value) && cur.Status.SecretHash != "" && cur.Status.SecretHash != oldHash
	}, "rotated: endpoint %s/%s has a new secret (hash %s) and the old one no longer works")
	if err != nil {
		return nil, err
	}
	made.headline = fmt.Sprintf("New secret of endpoint %s/%s (hash %s)", made.Endpoint.Namespace, made.Endpoint.Name, made.Endpoint.Status.SecretHash)
	if exp := made.Endpoint.Status.PreviousSecretExpiresAt; exp != nil && exp.After(e.Now()) {
		made.after = fmt.Sprintf("The previous secret still works until %s (spec.sender.rotationOverlap).", exp.UTC().Format(time.RFC3339))
	} else {
		made.after = "The previous secret no longer works."
	}
	return made, nil
}

// NewSecret is a secret the operator made at the user's request (a
// rotation, or a secret added), read once the receiver accepts it.
type NewSecret struct {
	Endpoint *agentsv1alpha1.WebhookEndpoint
	Value    string
	// headline says whose secret it is; after, what it changed for calls.
	headline, after string
}

// Said is what the commands say around the secret, in one paragraph.
func (n *NewSecret) Said() string {
	return n.headline + ". " + n.after
}

// printNewSecret prints the secret on standard output, and what it is,
// what it changed and the warning to save it on standard error.
func printNewSecret(e *cli.Env, n *NewSecret) {
	fmt.Fprintf(e.ErrOut, "%s:\n", n.headline)
	fmt.Fprintln(e.Out, n.Value)
	fmt.Fprintf(e.ErrOut, "\n%s\n", n.after)
	fmt.Fprint(e.ErrOut, Warning(n.Endpoint))
}

// awaitSecret waits until made says the operator has made the secret the
// user asked for, and reads it. A user who may not read the endpoint's
// Secret is told what happened (done, of the namespace, name and new hash)
// and why the secret is not shown.
func awaitSecret(ctx context.Context, e *cli.Env, ns, name string, made func(*agentsv1alpha1.WebhookEndpoint) bool, done string) (*NewSecret, error) {
	var ep *agentsv1alpha1.WebhookEndpoint
	var secret string
	err := e.WaitFor(ctx, func(ctx context.Context) (bool, error) {
		cur, err := e.Endpoint(ctx, ns, name)
		if err != nil {
			return false, err
		}
		if !made(cur) {
			return false, nil
		}
		ep = cur
		secret, err = Of(ctx, e, cur)
		if apierrors.IsForbidden(err) {
			return false, err // made, but the new secret is not the user's to read
		}
		return err == nil, nil
	})
	if apierrors.IsForbidden(err) {
		return nil, fmt.Errorf(done+", but %w", ns, name, ep.Status.SecretHash, err)
	}
	if err != nil {
		return nil, fmt.Errorf("the operator has not published a new secret for endpoint %s/%s within %s (kubectl describe webhookendpoint %s shows its conditions): %w",
			ns, name, e.Timeout, name, err)
	}
	return &NewSecret{Endpoint: ep, Value: secret}, nil
}

func NewAddCommand(e *cli.Env) *cobra.Command {
	var noWait bool
	cmd := &cobra.Command{
		Use:   "add-secret NAME",
		Short: "Give an endpoint that allows unauthenticated calls a secret, and print it once",
		Long: `Give an endpoint that allows unauthenticated calls a generated secret: sets
spec.allowUnauthenticated to false, waits until the operator has made the
secret and published its hash, and prints it once. From then on calls without
the secret are refused (401), so give it to the endpoint's senders. Only the
endpoint's owner may; with --no-wait it only changes the spec.`,
		Args:              cli.ExactlyOne("endpoint name"),
		ValidArgsFunction: e.CompleteEndpoints,
		RunE: e.OnNamed(nil, func(cmd *cobra.Command, ns, name string) error {
			ep, err := RequestSecret(cmd.Context(), e, ns, name)
			if err != nil {
				return err
			}
			if noWait {
				fmt.Fprintf(e.ErrOut, "Endpoint %s/%s no longer allows unauthenticated calls. \"kubectl hookrun secret %s\" prints its secret once the operator has made it.\n", ns, name, name)
				return nil
			}
			fmt.Fprintf(e.ErrOut, "Adding a secret to endpoint %s/%s...\n", ns, name)
			made, err := AwaitAddedSecret(cmd.Context(), e, ep)
			if err != nil {
				return err
			}
			printNewSecret(e, made)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "Only change the spec; print nothing secret.")
	return cmd
}

// RequestSecret sets spec.allowUnauthenticated of an endpoint that allows
// unauthenticated calls to false: the operator then generates its secret
// (DESIGN §2, "Add a secret"). The patch holds only for the endpoint read
// (its resourceVersion), so a spec changed meanwhile is not overwritten.
func RequestSecret(ctx context.Context, e *cli.Env, ns, name string) (*agentsv1alpha1.WebhookEndpoint, error) {
	ep, err := e.Endpoint(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if !ep.Spec.AllowUnauthenticated {
		if ep.Spec.OIDCOf() != nil {
			return nil, senders.NoSecretError(ep)
		}
		return nil, fmt.Errorf("endpoint %s/%s already refuses calls without its secret: \"kubectl hookrun secret %s\" prints it, \"kubectl hookrun rotate %s\" replaces it", ns, name, name, name)
	}
	patch := client.RawPatch(client.Merge.Type(), fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q},"spec":{"allowUnauthenticated":false}}`, ep.ResourceVersion))
	if err := e.Client.Patch(ctx, ep, patch); err != nil {
		if apierrors.IsConflict(err) {
			return nil, fmt.Errorf("endpoint %s/%s changed while the secret was being added: run the command again", ns, name)
		}
		return nil, cli.Refused(err, fmt.Sprintf("add a secret to endpoint %s/%s", ns, name), cli.RoleMember)
	}
	return ep, nil
}

// AwaitAddedSecret waits until the operator has made the secret of an
// endpoint requestSecret changed (ep as it returned it), and reads it.
func AwaitAddedSecret(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint) (*NewSecret, error) {
	generation := ep.Generation
	made, err := awaitSecret(ctx, e, ep.Namespace, ep.Name, func(cur *agentsv1alpha1.WebhookEndpoint) bool {
		ready := meta.FindStatusCondition(cur.Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		return cur.Status.AuthMode == agentsv1alpha1.AuthSecret && cur.Status.SecretHash != "" &&
			ready != nil && ready.ObservedGeneration >= generation
	}, "added: endpoint %s/%s has a secret (hash %s) and refuses calls without it")
	if err != nil {
		return nil, err
	}
	made.headline = fmt.Sprintf("Secret of endpoint %s/%s (hash %s)", made.Endpoint.Namespace, made.Endpoint.Name, made.Endpoint.Status.SecretHash)
	made.after = "Calls without it are now refused (401): give it to the endpoint's senders."
	return made, nil
}
