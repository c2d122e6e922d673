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
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
)

// A2AClientFactory makes the client for one run: where the agent is sent
// to (a2aTarget), its bearer token (may be empty), its TLS Secrets' data
// (nil: the operator's defaults) and the run owner's user name. An error is
// TLS data that does not parse (a *secretref.TLSSecretError).
type A2AClientFactory func(target a2a.Interface, token string, tls *secretref.AgentTLS, userID string) (A2AClient, error)

// NewHTTPA2AClient is the production factory: its HTTP clients come from
// clients, one per namespace and TLS material.
func NewHTTPA2AClient(clients *a2a.Clients) A2AClientFactory {
	return func(target a2a.Interface, token string, t *secretref.AgentTLS, userID string) (A2AClient, error) {
		hc := clients.Plain()
		if t != nil {
			var err error
			if hc, err = clients.For(t.Namespace, t.ID, t.Config); err != nil {
				return nil, err
			}
		}
		return &a2a.Client{
			URL: target.URL, Version: target.Version, Binding: target.Binding, Tenant: target.Tenant,
			Token: token, HTTP: hc, Headers: map[string]string{"X-User-Id": userID},
		}, nil
	}
}

// clientFor builds the A2A client with the agent's bearer token, read
// around the cache, when target is at the origin of spec.a2a.url
// (tokenWithheld), and its TLS Secrets, read around the cache at each call
// (a renewed certificate is used at once), the client certificate only
// for spec.a2a.url's origin. A Secret or key that does not exist, or does
// not parse, is final.
func (r *ExecutionReconciler) clientFor(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, target a2a.Interface) (A2AClient, error) {
	var token string
	if ref := agent.Spec.A2A.AuthSecretRef; ref != nil && !tokenWithheld(agent, target) {
		s, err := secretref.Get(ctx, r.APIReader, agent.Namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			return nil, finalError{msg: fmt.Sprintf("The agent's token Secret %s does not exist; create it and send the call again", ref.Name)}
		case errors.Is(err, secretref.ErrNotReferable):
			return nil, finalError{msg: secretref.NotReferableMessage("the Agent's spec.a2a.authSecretRef", ref.Name) + "; then send the call again"}
		case err != nil:
			return nil, fmt.Errorf("reading the agent's token Secret %s: %w", ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return nil, finalError{msg: fmt.Sprintf("The agent's token Secret %s has no key %q", ref.Name, ref.Key)}
		}
		token = string(v)
	}
	t, err := secretref.ReadAgentTLS(ctx, r.APIReader, agent)
	if err != nil {
		return nil, tlsSecretFailure(err)
	}
	if t != nil && !sameOrigin(target.URL, agent.Spec.A2A.URL) {
		t = t.WithoutClientCertificate()
	}
	owner := ""
	if run.Spec.Owner != nil {
		owner = run.Spec.Owner.User
	}
	c, err := r.NewClient(target, token, t, owner)
	if err != nil {
		return nil, tlsSecretFailure(err)
	}
	return c, nil
}

// tlsSecretFailure is final for a TLS Secret that cannot be used, and
// err for the API server's errors.
func tlsSecretFailure(err error) error {
	var bad *secretref.TLSSecretError
	if errors.As(err, &bad) {
		return finalError{msg: "The agent's TLS " + bad.Error() + "; fix it and send the call again"}
	}
	return fmt.Errorf("reading the agent's TLS Secrets: %w", err)
}

// tlsRefusedMessage says why a call's TLS handshake failed for good, and
// which field of spec.a2a.tls mends it.
func tlsRefusedMessage(agent *agentsv1alpha1.Agent, target a2a.Interface, err error) string {
	spec := agent.Spec.A2A.TLS
	if spec == nil {
		spec = &agentsv1alpha1.A2ATLS{}
	}
	if a2a.TLSFailureOf(err) == a2a.TLSServerCertUntrusted {
		if spec.CASecretRef == nil {
			return fmt.Sprintf("The agent's certificate is not trusted (%v): set spec.a2a.tls.caSecretRef to the CA that signs it, then send the call again", err)
		}
		return fmt.Sprintf("The agent's certificate is not signed by a CA of spec.a2a.tls.caSecretRef (Secret %s), or is not for its host (%v); then send the call again", spec.CASecretRef.Name, err)
	}
	switch ref := spec.ClientCertSecretRef; {
	case ref == nil:
		return fmt.Sprintf("The agent requires a client certificate and refused the connection without one (%v): set spec.a2a.tls.clientCertSecretRef to a kubernetes.io/tls Secret whose certificate the agent trusts, then send the call again", err)
	case !sameOrigin(target.URL, agent.Spec.A2A.URL):
		return fmt.Sprintf("The agent refused the connection without a client certificate (%v): the certificate of spec.a2a.tls.clientCertSecretRef is presented only at spec.a2a.url's origin, and the agent card names %s: point spec.a2a.url at it, or set spec.a2a.protocolVersion", err, target.URL)
	default:
		return fmt.Sprintf("The agent refused the client certificate of spec.a2a.tls.clientCertSecretRef (Secret %s) (%v): renew it with a certificate the agent trusts, then send the call again", ref.Name, err)
	}
}
