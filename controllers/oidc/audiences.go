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
	"os"
	"slices"

	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// ErrAPIAudience refuses every token of an endpoint whose audience is one
// the API server itself accepts: a token the sender holds for it would
// also be an API credential, and every Pod's default token would call it.
var ErrAPIAudience = errors.New("the endpoint's audience is one the Kubernetes API server accepts")

// APIAudiences are the audiences the API server accepts tokens for
// (--api-audiences, by default its service account issuer): the aud of a
// token it issued for no audience in particular. That is the token the
// process authenticates with when it is one (a Pod's projected service
// account token: cfg.BearerToken or BearerTokenFile); else a token the API
// server issues for ServiceAccount default of namespace (TokenRequest,
// which a process out of the cluster with an administrator's credentials
// may ask for); else its service account issuer, the default of
// --api-audiences (a bare API server without the ServiceAccount). The API
// server publishes its audiences nowhere else.
func APIAudiences(ctx context.Context, cfg *rest.Config, namespace string) ([]string, error) {
	token := cfg.BearerToken
	if token == "" && cfg.BearerTokenFile != "" {
		b, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading the process's token: %w", err)
		}
		token = string(b)
	}
	if aud, err := audiencesOf(token); err == nil && len(aud) > 0 {
		return aud, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err == nil {
		if aud, err := audiencesOf(tr.Status.Token); err == nil && len(aud) > 0 {
			return aud, nil
		}
	}
	issuer, ierr := clusterIssuer(ctx, cs.Discovery().RESTClient())
	if ierr != nil {
		return nil, fmt.Errorf("learning the API server's audiences: a token of ServiceAccount %s/default: %w; its issuer: %w", namespace, err, ierr)
	}
	return []string{issuer}, nil
}

// clusterIssuer is the issuer of the cluster's service account tokens, as
// its discovery document names it.
func clusterIssuer(ctx context.Context, rc rest.Interface) (string, error) {
	b, err := rc.Get().AbsPath(DiscoveryPath).DoRaw(ctx)
	if err != nil {
		return "", err
	}
	var doc discoveryDocument
	if err := json.Unmarshal(b, &doc); err != nil || doc.Issuer == "" {
		return "", fmt.Errorf("the discovery document names no issuer: %w", err)
	}
	return doc.Issuer, nil
}

// audiencesOf is the aud of a JWT, read without verifying it: it is the
// process's own credential, or came from the API server over its TLS.
func audiencesOf(token string) ([]string, error) {
	if token == "" {
		return nil, errors.New("no token")
	}
	t, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return nil, err
	}
	var c jwt.Claims
	if err := t.UnsafeClaimsWithoutVerification(&c); err != nil {
		return nil, err
	}
	return c.Audience, nil
}

// IsAPIAudience tells whether audience is one of the API server's.
func IsAPIAudience(audience string, apiAudiences []string) bool {
	return slices.Contains(apiAudiences, audience)
}
