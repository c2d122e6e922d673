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
	"fmt"
	"net/http"

	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/senders"
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
	reasonOIDCSubject          = "token sub holds control characters"
	reasonOIDCClaimsRefused    = "token claims refused by spec.sender.oidc.claims"
	reasonOIDCAPIAudience      = "audience is one the API server accepts"
	reasonOIDCClaimsInvalid    = "spec.sender.oidc.claims does not compile"
	reasonOIDCKeysUnavailable  = "issuer keys could not be read"
	reasonOIDCGone             = "call ended while the issuer's keys were read"
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
	raw, ok := c.snd.SecretOf(value)
	if !ok {
		return c.reject(answer.Forbidden, reasonNotBearer)
	}
	spec := c.snd.OIDC
	tok, err := h.oidc.Verify(c.r.Context(), spec.Issuer, spec.Audience, raw)
	switch {
	case errors.Is(err, oidc.ErrKeysUnavailable):
		// Logged once per failed read (Setup), not per call.
		return h.unavailable(c, reasonOIDCKeysUnavailable)
	case err != nil:
		return c.reject(answer.Forbidden, tokenRefusal(err))
	case tok.Cluster && tok.Namespace != c.ep.Namespace:
		// Any account of the cluster may ask for a token of any audience:
		// only the endpoint's namespace's accounts call it.
		return c.reject(answer.Forbidden, reasonOIDCNamespace)
	case !senders.CEString(tok.Subject):
		// sub reaches the agent's metadata outside the payload wrapper.
		return c.reject(answer.Forbidden, reasonOIDCSubject)
	}
	if spec.Claims != "" {
		if code := h.checkClaims(c, tok.Payload); code != notAnswered {
			return code
		}
	}
	c.tokenSubject = senders.Recordable(tok.Subject, senders.MaxDeliveryIDBytes)
	return notAnswered
}

// checkClaims evaluates spec.sender.oidc.claims on a verified token's
// payload, within the endpoint's evaluation slots (filterGate): anyone
// who can get a token of a listed issuer for the audience (any GitHub
// user, for GitHub's) makes it evaluate.
func (h *Handler) checkClaims(c *callState, payload []byte) int {
	// Compiled within the turn too, as filters and fields are: compiling
	// 4096 characters costs about what an evaluation does.
	if !h.filterGate.Enter(c.r.Context(), c.ep.Namespace, c.ep.UID) {
		c.w.Header()["Retry-After"] = answer.BusyRetryAfter
		return c.reject(answerFilterBusy, reasonFilterBusy)
	}
	defer h.filterGate.Leave(c.ep.Namespace, c.ep.UID)
	claims := h.table.ClaimsOf(c.e)
	if claims.Err != nil {
		return c.reject(answer.Forbidden, reasonOIDCClaimsInvalid)
	}
	allowed, err := claims.Program.Allow(c.r.Context(), payload)
	if errors.Is(err, filter.ErrTimeout) {
		return h.evaluationTimedOut(c)
	}
	if err != nil || !allowed {
		return c.reject(answer.Forbidden, reasonOIDCClaimsRefused)
	}
	return notAnswered
}

// tokenRefusal is the reason of a refused token, for the log line.
func tokenRefusal(err error) string {
	switch {
	case errors.Is(err, oidc.ErrIssuerNotAllowed):
		return reasonOIDCIssuerNotAllowed
	case errors.Is(err, oidc.ErrAPIAudience):
		return reasonOIDCAPIAudience
	case errors.Is(err, oidc.ErrUnknownKey):
		return reasonOIDCUnknownKey
	case errors.Is(err, oidc.ErrSignature):
		return reasonOIDCSignature
	case errors.Is(err, oidc.ErrClaims):
		return reasonOIDCClaims
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return reasonOIDCGone
	}
	return reasonOIDCMalformed
}

// oidcClient is the HTTP client that reads the listed issuers' keys. It
// follows at most three redirects, each to an https URL: a redirect must
// not take the read to plain HTTP.
func oidcClient() *http.Client {
	return &http.Client{Timeout: oidc.FetchTimeout, CheckRedirect: httpsRedirectsOnly}
}

func httpsRedirectsOnly(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "https" || len(via) >= 3 {
		return fmt.Errorf("redirected to %s: an issuer's keys are read over https, through at most three redirects", req.URL.Redacted())
	}
	return nil
}
