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
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// Bounds on what an issuer serves.
const (
	// MaxDocumentBytes bounds a discovery document and a key set.
	MaxDocumentBytes = 1 << 20
	// MaxKeys is the most keys of an issuer that are kept.
	MaxKeys = 64
	// MaxRSABits is the largest RSA key kept: a token without a key ID is
	// tried against every key, and an RSA verification's cost grows with
	// the key's size (a listed issuer's 64 keys of 16,384 bits would make
	// each such token cost seconds).
	MaxRSABits = 4096
)

// fetchFunc reads an issuer's name (as its tokens spell iss) and its
// signing keys.
type fetchFunc func(ctx context.Context) (issuer string, keys []jose.JSONWebKey, err error)

// Getter reads a path of the API server with the caller's credentials (the
// receiver's client): the cluster's issuer is read through it.
type Getter func(ctx context.Context, path string) ([]byte, error)

// The API server's issuer discovery (KEP-1393): its discovery document
// names the issuer; its keys are served at JWKSPath whatever jwks_uri says
// (jwks_uri is the address outsiders use, which the cluster itself may not
// reach). ClusterRole system:service-account-issuer-discovery grants both.
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/openid/v1/jwks"
)

type discoveryDocument struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// clusterKeys reads the cluster's issuer and keys through get.
func clusterKeys(get Getter) fetchFunc {
	return func(ctx context.Context) (string, []jose.JSONWebKey, error) {
		b, err := get(ctx, DiscoveryPath)
		if err != nil {
			return "", nil, fmt.Errorf("reading the API server's %s: %w", DiscoveryPath, err)
		}
		var doc discoveryDocument
		if err := json.Unmarshal(b, &doc); err != nil {
			return "", nil, fmt.Errorf("the API server's %s is not JSON: %w", DiscoveryPath, err)
		}
		if doc.Issuer == "" {
			return "", nil, fmt.Errorf("the API server's %s names no issuer", DiscoveryPath)
		}
		if b, err = get(ctx, JWKSPath); err != nil {
			return "", nil, fmt.Errorf("reading the API server's %s: %w", JWKSPath, err)
		}
		keys, err := parseKeys(b)
		return doc.Issuer, keys, err
	}
}

// remoteKeys reads issuer's discovery document and then its jwks_uri over
// HTTPS with client. The document must name issuer exactly (OpenID
// Connect Discovery 1.0, section 4.3): a document that names another
// issuer is refused, and so are its keys.
func remoteKeys(client *http.Client, issuer string) fetchFunc {
	return func(ctx context.Context) (string, []jose.JSONWebKey, error) {
		b, err := getDocument(ctx, client, strings.TrimSuffix(issuer, "/")+DiscoveryPath)
		if err != nil {
			return "", nil, err
		}
		var doc discoveryDocument
		if err := json.Unmarshal(b, &doc); err != nil {
			return "", nil, fmt.Errorf("the discovery document of %s is not JSON: %w", issuer, err)
		}
		if doc.Issuer != issuer {
			return "", nil, fmt.Errorf("the discovery document of %s names issuer %q", issuer, doc.Issuer)
		}
		if err := sameHost(issuer, doc.JWKSURI); err != nil {
			return "", nil, err
		}
		if b, err = getDocument(ctx, client, doc.JWKSURI); err != nil {
			return "", nil, err
		}
		keys, err := parseKeys(b)
		return issuer, keys, err
	}
}

// sameHost checks that jwksURI is an https URL on issuer's host (and
// port): the document of a listed issuer may not send every receiver
// replica to an address of its choosing, in the cluster or link-local.
// The issuers hookrun documents (GitHub Actions, GitLab, Google, the
// clouds' clusters) serve their keys on their own host.
func sameHost(issuer, jwksURI string) error {
	u, err := url.Parse(jwksURI)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("the jwks_uri of %s, %q, is not an https URL", issuer, jwksURI)
	}
	iss, err := url.Parse(issuer)
	if err != nil || !strings.EqualFold(u.Host, iss.Host) {
		return fmt.Errorf("the jwks_uri of %s, %q, is not on the issuer's host", issuer, jwksURI)
	}
	return nil
}

func getDocument(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if len(b) > MaxDocumentBytes {
		return nil, fmt.Errorf("GET %s: more than %d bytes", url, MaxDocumentBytes)
	}
	return b, nil
}

// parseKeys reads a JWK set, keeping the public signing keys, at most
// MaxKeys of them. Each key is read alone: one the set cannot hold (an RSA
// key over MaxRSABits, a type go-jose does not know) is left out, and the
// others are kept.
func parseKeys(b []byte) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("not a JWK set: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, min(len(set.Keys), MaxKeys))
	for _, raw := range set.Keys {
		if len(keys) == MaxKeys {
			break
		}
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			continue
		}
		if k.IsPublic() && k.Valid() && (k.Use == "" || k.Use == "sig") && !tooLarge(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the JWK set holds no public signing key (RSA keys of at most %d bits)", MaxRSABits)
	}
	return keys, nil
}

// tooLarge tells an RSA key over MaxRSABits.
func tooLarge(k jose.JSONWebKey) bool {
	rsaKey, ok := k.Key.(*rsa.PublicKey)
	return ok && rsaKey.N.BitLen() > MaxRSABits
}
