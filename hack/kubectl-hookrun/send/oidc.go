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

package send

import (
	"context"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/senders"
)

// The token that test and redeliver call an endpoint with whose calls carry
// tokens (spec.sender.oidc) instead of a secret.

// tokenEnv is the environment variable --token defaults to.
const tokenEnv = "HOOKRUN_TOKEN"

// tokenSeconds is how long a token of --token-from lives: TokenRequest's
// least.
const tokenSeconds = int64(600)

// callToken is the token calls to an OIDC sender's endpoint carry: --token
// (or $HOOKRUN_TOKEN), or with --token-from one the API server issues for
// that service account of the endpoint's namespace.
func callToken(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint, o Options) (string, error) {
	spec := ep.Spec.OIDCOf()
	switch {
	case o.token != "" && o.tokenFrom != "":
		return "", errors.New("--token and --token-from: give one")
	case o.token != "":
		return o.token, nil
	case o.tokenFrom == "":
		return "", fmt.Errorf("%w. Call with --token (or $%s), or for the cluster's tokens --token-from SERVICE-ACCOUNT", senders.NoSecretError(ep), tokenEnv)
	case spec.Issuer != "":
		return "", fmt.Errorf("--token-from asks the cluster for a token, and endpoint %s/%s takes tokens of %s: call with --token", ep.Namespace, ep.Name, spec.Issuer)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ep.Namespace, Name: o.tokenFrom}}
	seconds := tokenSeconds
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{spec.Audience}, ExpirationSeconds: &seconds}}
	if err := e.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", cli.Refused(err, fmt.Sprintf("ask for a token of service account %s/%s", ep.Namespace, o.tokenFrom), cli.RoleTokens)
	}
	return tr.Status.Token, nil
}
