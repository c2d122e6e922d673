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

package oidctest

import (
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is an OIDC issuer on loopback; its name (iss) is its URL.
type Issuer struct {
	*httptest.Server

	mu      sync.Mutex
	keys    []jose.JSONWebKey // private; the last one signs
	rotated int

	// Requests counts every request served: discovery and keys.
	Requests atomic.Int64
	// Claims, when set, is the issuer its discovery document names
	// instead of its URL (an issuer that is not what it claims). Set it
	// before the first request.
	Claims string
	// JWKSURI, when set, is the jwks_uri its discovery document names
	// instead of its own /keys. Set it before the first request.
	JWKSURI string
	// Extra are public keys its key set serves besides its own. Set them
	// before the first request.
	Extra []jose.JSONWebKey
}

// NewIssuer starts an issuer with one RSA key. Close it when done; its
// Client trusts its certificate.
func NewIssuer() *Issuer {
	i := &Issuer{}
	i.Server = httptest.NewTLSServer(http.HandlerFunc(i.serve))
	i.Rotate(false)
	return i
}

func (i *Issuer) serve(w http.ResponseWriter, r *http.Request) {
	i.Requests.Add(1)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": cmp.Or(i.Claims, i.URL), "jwks_uri": cmp.Or(i.JWKSURI, i.URL+"/keys"),
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	case "/keys":
		i.mu.Lock()
		set := jose.JSONWebKeySet{}
		for _, k := range i.keys {
			set.Keys = append(set.Keys, k.Public())
		}
		set.Keys = append(set.Keys, i.Extra...)
		i.mu.Unlock()
		_ = json.NewEncoder(w).Encode(set)
	default:
		http.NotFound(w, r)
	}
}

// Rotate makes a new key the signing key; the JWK set keeps the older ones
// only with keepOld.
func (i *Issuer) Rotate(keepOld bool) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.rotated++
	k := jose.JSONWebKey{Key: priv, KeyID: fmt.Sprintf("key-%d", i.rotated), Algorithm: string(jose.RS256), Use: "sig"}
	if !keepOld {
		i.keys = nil
	}
	i.keys = append(i.keys, k)
}

// Sign returns claims signed with the current key, as a compact JWS with
// the key's ID.
func (i *Issuer) Sign(claims any) string {
	i.mu.Lock()
	k := i.keys[len(i.keys)-1]
	i.mu.Unlock()
	return Sign(k, claims)
}

// Sign signs claims with k (RS256, its key ID in the header).
func Sign(k jose.JSONWebKey, claims any) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		panic(err)
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		panic(err)
	}
	return raw
}

// NewKey is an RSA signing key of ID kid that no issuer publishes: what a
// forger holds.
func NewKey(kid string) jose.JSONWebKey {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"}
}

// SigningKey is the current signing key, private.
func (i *Issuer) SigningKey() jose.JSONWebKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[len(i.keys)-1]
}

// KeyID is the ID of the current signing key.
func (i *Issuer) KeyID() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[len(i.keys)-1].KeyID
}

// GitHubActions are the claims of a GitHub Actions OIDC token of the
// workflow .github/workflows/deploy.yml in repo, run for ref, for
// audience, issued at now for ten minutes: the claim names GitHub
// documents ("About security hardening with OpenID Connect").
func (i *Issuer) GitHubActions(repo, ref, audience string, now time.Time) map[string]any {
	owner := repo
	for j := range repo {
		if repo[j] == '/' {
			owner = repo[:j]
			break
		}
	}
	return map[string]any{
		"iss": i.URL, "aud": audience,
		"sub":                "repo:" + repo + ":ref:" + ref,
		"repository":         repo,
		"repository_owner":   owner,
		"ref":                ref,
		"ref_type":           "branch",
		"workflow":           "deploy",
		"workflow_ref":       repo + "/.github/workflows/deploy.yml@" + ref,
		"job_workflow_ref":   repo + "/.github/workflows/deploy.yml@" + ref,
		"event_name":         "push",
		"actor":              "octocat",
		"run_id":             "4242",
		"runner_environment": "github-hosted",
		"iat":                now.Unix(),
		"nbf":                now.Unix(),
		"exp":                now.Add(10 * time.Minute).Unix(),
	}
}
