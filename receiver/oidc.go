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

package receiver

import (
	"context"
	"errors"
	"net/http"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/controllers/oidc"
)

// OIDC senders (spec.sender.oidc): the bearer token is a JWT verified with
// its issuer's keys, kept in memory (package oidc); no secret.

// Why an OIDC sender's call was refused.
const (
	reasonOIDCIssuerNotAllowed = "token issuer not in --oidc-issuers"
	reasonOIDCMalformed        = "token not a signed JWT"
	reasonOIDCUnknownKey       = "token key ID unknown to the issuer"
	reasonOIDCSignature        = "token signature mismatch"
	reasonOIDCClaims           = "token iss, aud, exp or nbf wrong"
	reasonOIDCNamespace        = "service account token of another namespace"
	reasonOIDCClaimsRefused    = "token claims refused by spec.sender.oidc.claims"
	reasonOIDCClaimsInvalid    = "spec.sender.oidc.claims does not compile"
	reasonOIDCKeysUnavailable  = "issuer keys could not be read"
)

// clusterGetter reads paths of mgr's API server with the receiver's
// credentials: the cluster's issuer discovery.
func clusterGetter(mgr ctrl.Manager) (oidc.Getter, error) {
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	rc := dc.RESTClient()
	return func(ctx context.Context, path string) ([]byte, error) {
		return rc.Get().AbsPath(path).DoRaw(ctx)
	}, nil
}

// checkToken verifies an OIDC sender's bearer token: its issuer's
// signature, iss, aud, exp and nbf; a cluster token's namespace, which must
// be the endpoint's; then spec.sender.oidc.claims. Every
// refusal is 403 forbidden, as a wrong secret's; an issuer whose keys
// cannot be read answers 503 with Retry-After (the sender may try again).
func (h *Handler) checkToken(c *callState, value string) int {
	raw, ok := c.snd.secretOf(value)
	if !ok {
		return c.reject(answerForbidden, reasonNotBearer)
	}
	spec := c.snd.oidc
	tok, err := h.oidc.Verify(c.r.Context(), spec.Issuer, spec.Audience, raw, h.tokenClock.Now())
	if err != nil {
		if errors.Is(err, oidc.ErrKeysUnavailable) {
			h.log.Error(err, "reading an issuer's keys", "issuer", spec.Issuer, "endpoint", c.ep.Namespace+"/"+c.ep.Name)
			return h.unavailable(c, reasonOIDCKeysUnavailable)
		}
		return c.reject(answerForbidden, tokenRefusal(err))
	}
	if spec.Issuer == "" && tok.Namespace != c.ep.Namespace {
		// Any account of the cluster may ask for a token of any audience:
		// only the endpoint's namespace's accounts call it.
		return c.reject(answerForbidden, reasonOIDCNamespace)
	}
	if spec.Claims != "" {
		claims := h.table.claimsOf(c.e)
		if claims.err != nil {
			return c.reject(answerForbidden, reasonOIDCClaimsInvalid)
		}
		if allowed, err := claims.program.Allow(c.r.Context(), tok.Payload); err != nil || !allowed {
			return c.reject(answerForbidden, reasonOIDCClaimsRefused)
		}
	}
	c.tokenSubject = recordable(tok.Subject, maxDeliveryIDBytes)
	return notAnswered
}

// tokenRefusal is the reason of a refused token, for the log line.
func tokenRefusal(err error) string {
	switch {
	case errors.Is(err, oidc.ErrIssuerNotAllowed):
		return reasonOIDCIssuerNotAllowed
	case errors.Is(err, oidc.ErrUnknownKey):
		return reasonOIDCUnknownKey
	case errors.Is(err, oidc.ErrSignature):
		return reasonOIDCSignature
	case errors.Is(err, oidc.ErrClaims):
		return reasonOIDCClaims
	}
	return reasonOIDCMalformed
}

// endpointClaims is an endpoint's spec.sender.oidc.claims compiled.
type endpointClaims struct {
	expr    string
	program *filter.Claims
	err     error
}

// claimsKey is the key of an endpoint's compiled claims among the compiled
// filters (filterCacheEntries bounds them all together).
type claimsKey types.UID

// claimsOf returns e's claims compiled, as filterOf does its filter: when a
// call first needs them, kept among the entries compiled last. Only a call
// whose token verified gets here.
func (t *table) claimsOf(e *endpoint) *endpointClaims {
	expr := e.sender.oidc.Claims
	if v, ok := t.filters.Get(claimsKey(e.obj.UID)); ok {
		if f := v.(*endpointClaims); f.expr == expr { //nolint:errcheck // only *endpointClaims is stored under a claimsKey
			return f
		}
	}
	p, err := filter.CompileClaims(expr)
	f := &endpointClaims{expr: expr, program: p, err: err}
	t.filters.Add(claimsKey(e.obj.UID), f)
	return f
}

// oidcClient is the HTTP client that reads the listed issuers' keys.
func oidcClient() *http.Client {
	return &http.Client{Timeout: oidc.FetchTimeout}
}
