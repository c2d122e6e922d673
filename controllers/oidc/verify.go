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

package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"k8s.io/utils/clock"
)

const (
	// MaxTokenBytes is the longest token read: service account and CI
	// tokens are 1 to 2 KiB.
	MaxTokenBytes = 16 << 10
	// Leeway is how far exp and nbf may be off the receiver's clock.
	Leeway = 60 * time.Second
)

// algorithms are the signature algorithms a token may use: those of
// Kubernetes service account keys (RS256, ES256) and of common OIDC
// issuers. Never "none", nor an HMAC (the key set is public).
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// Why a token is refused; every error of Verify is one of them (wrapped).
var (
	ErrIssuerNotAllowed = errors.New("the endpoint's issuer is not among the receiver's --oidc-issuers")
	ErrMalformed        = errors.New("not a signed JWT")
	ErrSignature        = errors.New("the signature does not verify with the issuer's keys")
	ErrClaims           = errors.New("the token's iss, aud, exp or nbf do not hold")
)

// Token is what a verified token tells.
type Token struct {
	// Subject is the token's sub.
	Subject string
	// Namespace is a service account token's namespace (the claim
	// kubernetes.io.namespace); "" for other tokens.
	Namespace string
	// Cluster tells that the token is the cluster's own: of the issuer "",
	// or of a listed issuer that is the cluster's under its name.
	Cluster bool
	// Payload is its claims as JSON, for spec.sender.oidc.claims.
	Payload []byte
}

// Verifier verifies tokens of the cluster's issuer and of the listed ones.
type Verifier struct {
	sets         map[string]*keySet // by the issuer as endpoints name it; "" the cluster's
	clock        clock.PassiveClock
	maxLifetime  time.Duration
	apiAudiences []string
}

// Config is what a Verifier reads keys with.
type Config struct {
	// Cluster reads the cluster's issuer and keys; nil: no cluster tokens.
	Cluster Getter
	// Issuers are the other issuers, read with Client.
	Issuers Issuers
	Client  *http.Client
	// Clock is what exp and nbf are checked against and key reads paced
	// by; nil: the real clock.
	Clock clock.PassiveClock
	// MaxLifetime is the longest a token may live, exp − iat (nbf when it
	// has no iat); 0: no bound. A token that lives longer (or says
	// neither when it was issued) is refused: one made to outlive its
	// maker's membership, a year with `kubectl create token --duration`,
	// would keep starting runs as the endpoint's owner.
	MaxLifetime time.Duration
	// APIAudiences are the audiences the API server accepts (APIAudiences):
	// an endpoint's audience among them refuses every token
	// (ErrAPIAudience).
	APIAudiences []string
	// Failed, if not nil, is told of each read of an issuer's keys that
	// failed ("" the cluster's): at most one per RetryInterval and issuer,
	// whatever the calls.
	Failed func(issuer string, err error)
}

// NewVerifier returns a verifier of the cluster's tokens and of the listed
// issuers'.
func NewVerifier(c Config) *Verifier {
	v := &Verifier{sets: make(map[string]*keySet, len(c.Issuers)+1), clock: c.Clock, maxLifetime: c.MaxLifetime, apiAudiences: c.APIAudiences}
	if v.clock == nil {
		v.clock = clock.RealClock{}
	}
	if c.Cluster != nil {
		v.sets[""] = &keySet{fetch: clusterKeys(c.Cluster), clock: v.clock, failed: c.Failed}
	}
	for _, iss := range c.Issuers {
		v.sets[iss] = &keySet{name: iss, fetch: remoteKeys(c.Client, iss), clock: v.clock, failed: c.Failed}
	}
	return v
}

// claims are the registered claims Verify checks.
type claims struct {
	jwt.Claims
	Kubernetes struct {
		Namespace string `json:"namespace"`
	} `json:"kubernetes.io"`
}

// Verify checks raw, a compact JWS, as a token of issuer ("" the
// cluster's) for audience, at the verifier's clock: signed by one of the issuer's keys,
// iss the issuer's name, audience among aud, exp present and not passed,
// nbf reached (each within Leeway). It contacts no issuer that is not
// listed, and an issuer listed only to read its keys, at most once per
// RefreshInterval.
func (v *Verifier) Verify(ctx context.Context, issuer, audience, raw string) (Token, error) {
	set := v.sets[issuer]
	if set == nil {
		return Token{}, ErrIssuerNotAllowed
	}
	if IsAPIAudience(audience, v.apiAudiences) {
		return Token{}, ErrAPIAudience
	}
	if len(raw) > MaxTokenBytes {
		return Token{}, ErrMalformed
	}
	jws, err := jose.ParseSignedCompact(raw, algorithms)
	if err != nil || len(jws.Signatures) != 1 {
		return Token{}, ErrMalformed
	}
	header := jws.Signatures[0].Header
	name, keys, err := set.lookup(ctx, header.KeyID)
	if err != nil {
		return Token{}, err
	}
	payload, err := verifyWith(jws, header.Algorithm, keys)
	if err != nil {
		return Token{}, err
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Token{}, errors.Join(ErrMalformed, err)
	}
	if c.Expiry == nil {
		return Token{}, errors.Join(ErrClaims, errors.New("the token has no exp"))
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: name, AnyAudience: jwt.Audience{audience}, Time: v.clock.Now()}, Leeway); err != nil {
		return Token{}, errors.Join(ErrClaims, err)
	}
	if err := v.checkLifetime(&c.Claims); err != nil {
		return Token{}, errors.Join(ErrClaims, err)
	}
	tok := Token{Subject: c.Subject, Namespace: c.Kubernetes.Namespace, Payload: payload, Cluster: issuer == ""}
	if !tok.Cluster && tok.Namespace != "" {
		// A service account token of a listed issuer: the cluster's own,
		// listed under its name, is the cluster's (its namespace rule
		// holds), which takes the cluster's name.
		if tok.Cluster, err = v.isCluster(ctx, name); err != nil {
			return Token{}, err
		}
	}
	return tok, nil
}

// checkLifetime refuses a token that lives longer than the verifier's
// MaxLifetime, from its iat (else its nbf) to its exp.
func (v *Verifier) checkLifetime(c *jwt.Claims) error {
	if v.maxLifetime <= 0 {
		return nil
	}
	issued := c.IssuedAt
	if issued == nil {
		issued = c.NotBefore
	}
	if issued == nil {
		return fmt.Errorf("the token has no iat nor nbf, so its lifetime is unknown (at most %s is accepted)", v.maxLifetime)
	}
	if lifetime := c.Expiry.Time().Sub(issued.Time()); lifetime > v.maxLifetime {
		return fmt.Errorf("the token lives for %s, more than the %s the receiver accepts (--oidc-max-token-lifetime)", lifetime, v.maxLifetime)
	}
	return nil
}

// isCluster tells whether issuer is the name the cluster's service account
// tokens carry.
func (v *Verifier) isCluster(ctx context.Context, issuer string) (bool, error) {
	set := v.sets[""]
	if set == nil {
		return false, nil
	}
	name, _, err := set.lookup(ctx, "")
	return name == issuer, err
}

// verifyWith returns the payload of the first key that verifies jws, of
// the keys made for its algorithm alg (or for any).
func verifyWith(jws *jose.JSONWebSignature, alg string, keys []jose.JSONWebKey) ([]byte, error) {
	for i := range keys {
		if keys[i].Algorithm != "" && keys[i].Algorithm != alg {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, nil
		}
	}
	return nil, ErrSignature
}
