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
	"io"
	"net/http"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// Bounds on what an issuer serves.
const (
	// MaxDocumentBytes bounds a discovery document and a key set.
	MaxDocumentBytes = 1 << 20
	// MaxKeys is the most keys of an issuer that are kept.
	MaxKeys = 64
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
		if !strings.HasPrefix(doc.JWKSURI, "https://") {
			return "", nil, fmt.Errorf("the jwks_uri of %s, %q, is not an https URL", issuer, doc.JWKSURI)
		}
		if b, err = getDocument(ctx, client, doc.JWKSURI); err != nil {
			return "", nil, err
		}
		keys, err := parseKeys(b)
		return issuer, keys, err
	}
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
// MaxKeys of them.
func parseKeys(b []byte) ([]jose.JSONWebKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("not a JWK set: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, min(len(set.Keys), MaxKeys))
	for _, k := range set.Keys {
		if len(keys) == MaxKeys {
			break
		}
		if k.IsPublic() && k.Valid() && (k.Use == "" || k.Use == "sig") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("the JWK set holds no public signing key")
	}
	return keys, nil
}
