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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/oidc/oidctest"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/hack/loadgen"
)

// What an OIDC sender costs the receiver against a Bearer secret: accepted
// calls that store the same run (a Bearer endpoint with its generated
// secret, an OIDC endpoint with a service account token of the cluster,
// verified with the API server's keys and a claims expression), and a
// forged token (signed by another key under the cluster's key ID) refused
// against a wrong secret.

const (
	oidcBenchAudience = "hookrun-bench"
	oidcBenchAccount  = "bench-sender"
)

func measureOIDC(ctx context.Context, c *devcluster.Cluster, measure measureFunc, logf func(string, ...any)) ([]row, error) {
	bearer, err := benchEndpoint(ctx, c, "bench-bearer", nil)
	if err != nil {
		return nil, err
	}
	tokenEP, err := benchEndpoint(ctx, c, "bench-oidc", &agentsv1alpha1.OIDCSender{
		Audience: oidcBenchAudience, Claims: `claims["kubernetes.io"].serviceaccount.name == "` + oidcBenchAccount + `"`,
	})
	if err != nil {
		return nil, err
	}
	token, err := benchToken(ctx, c)
	if err != nil {
		return nil, err
	}
	forged, err := forgeToken(token)
	if err != nil {
		return nil, err
	}
	if err := servedWith(ctx, tokenEP.URL, "Bearer "+token, logf); err != nil {
		return nil, err
	}
	call := func(url, authorization string) loadgen.Request {
		return func(ctx context.Context, _, _ int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(senderBody))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", authorization)
			return req, nil
		}
	}
	wrong := measure("wrong secret (403)", call(bearer.URL, "Bearer "+strings.Repeat("w", 43)))
	bad := measure("forged token (403)", call(tokenEP.URL, "Bearer "+forged))
	// Accepted calls store runs; the operator would dispatch them meanwhile.
	c.Kill(devcluster.Operator)
	withSecret := measure("Bearer accepted (202)", call(bearer.URL, "Bearer "+bearer.Secret))
	withToken := measure("OIDC accepted (202)", call(tokenEP.URL, "Bearer "+token))
	acceptedRatio := withToken.Throughput() / withSecret.Throughput()
	refusedRatio := bad.Throughput() / wrong.Throughput()
	rows := []row{
		{"baseline: Bearer calls with the endpoint's secret accepted (1 KiB; the run and its payload stored)", "", withSecret.String(),
			withSecret.Statuses[http.StatusAccepted] == withSecret.Requests},
		{"OIDC: calls with a service account token accepted (signature, claims; the same run stored)", ">= 0.8 of Bearer's", fmt.Sprintf("%.2f (%s)", acceptedRatio, withToken),
			acceptedRatio >= 0.8 && withToken.Statuses[http.StatusAccepted] == withToken.Requests},
		{"baseline: Bearer calls with a wrong secret (403)", "", wrong.String(), wrong.Statuses[http.StatusForbidden] == wrong.Requests},
		{"OIDC: a forged token, the cluster's key ID with another key (403)", ">= 0.5 of the wrong secret's", fmt.Sprintf("%.2f (%s)", refusedRatio, bad),
			refusedRatio >= 0.5 && bad.Statuses[http.StatusForbidden] == bad.Requests},
	}
	if err := c.AdminClient.DeleteAllOf(ctx, &agentsv1alpha1.AgentRun{}, client.InNamespace("bench")); err != nil {
		return nil, fmt.Errorf("deleting the runs the Bearer and OIDC calls stored: %w", err)
	}
	return rows, c.Start(ctx, devcluster.Operator)
}

// benchEndpoint creates a Bearer endpoint in the bench namespace, with
// oidc when not nil, and waits until it has its URL (and secret).
func benchEndpoint(ctx context.Context, c *devcluster.Cluster, name string, o *agentsv1alpha1.OIDCSender) (devcluster.Endpoint, error) {
	ep := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Sender:         &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, OIDC: o},
		},
	}
	if err := c.AdminClient.Create(ctx, ep); client.IgnoreAlreadyExists(err) != nil {
		return devcluster.Endpoint{}, err
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := c.EndpointFor(ctx, ep.Namespace, ep.Name)
		if err == nil && out.URL != "" && (o != nil || out.Secret != "") {
			return out, nil
		}
	}
	return devcluster.Endpoint{}, fmt.Errorf("endpoint %s got no URL within 2 minutes", name)
}

// benchToken is a token of the bench's service account for the bench
// audience, valid for an hour.
func benchToken(ctx context.Context, c *devcluster.Cluster) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: oidcBenchAccount}}
	if err := c.AdminClient.Create(ctx, sa); client.IgnoreAlreadyExists(err) != nil {
		return "", err
	}
	hour := int64(3600)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{oidcBenchAudience}, ExpirationSeconds: &hour}}
	if err := c.AdminClient.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("asking for a token of %s: %w", oidcBenchAccount, err)
	}
	return tr.Status.Token, nil
}

// forgeToken signs token's claims with a key of its own under token's key
// ID: what someone who does not hold the cluster's key can make.
func forgeToken(token string) (string, error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		return "", err
	}
	var claims map[string]any
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &claims); err != nil {
		return "", err
	}
	return oidctest.Sign(oidctest.NewKey(jws.Signatures[0].Header.KeyID), claims), nil
}

// servedWith waits until the receiver answers a call with authorization
// with something else than 401 or 404 (it serves the endpoint).
func servedWith(ctx context.Context, url, authorization string, logf func(string, ...any)) error {
	logf("waiting for OIDC endpoint %s to be served", url)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(senderBody))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", authorization)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusAccepted {
			return nil
		}
	}
	return fmt.Errorf("the receiver did not accept a token at %s within 2 minutes", url)
}
