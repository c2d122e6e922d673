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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/hack/loadgen"
)

// senderBody is the 1 KiB JSON body of the sender measurements.
var senderBody = []byte(`{"action":"opened","issue":{"number":7,"body":"` + strings.Repeat("x", 1024-46) + `"}}`)

// senderFilter is the spec.filter of the filtered GitHub endpoint: it turns
// senderBody (an issue that was opened) down.
const senderFilter = `event == "issues" && body.action == "closed"`

// measureSenders measures a GitHub endpoint: a wrong signature on a 1 KiB
// body, and a call its spec.filter turns down, against the bare handler
// reading the same body, and duplicate deliveries against accepted calls
// with new delivery IDs.
func measureSenders(ctx context.Context, c *devcluster.Cluster, measure measureFunc, bareURL string, logf func(string, ...any)) ([]row, error) {
	ep, err := githubEndpoint(ctx, c, "bench-github", "", logf)
	if err != nil {
		return nil, err
	}
	filtered, err := githubEndpoint(ctx, c, "bench-github-filtered", senderFilter, logf)
	if err != nil {
		return nil, err
	}
	good, goodFiltered := githubSignature(ep.Secret, senderBody), githubSignature(filtered.Secret, senderBody)
	wrong := "sha256=" + strings.Repeat("0", 64)
	signed := func(url, signature string, delivery func(w, i int) string) loadgen.Request {
		return func(ctx context.Context, w, i int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(senderBody))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issues")
			if signature != "" {
				req.Header.Set("X-Hub-Signature-256", signature)
			}
			if delivery != nil {
				req.Header.Set("X-GitHub-Delivery", delivery(w, i))
			}
			return req, nil
		}
	}
	base := measure("bare, reading 1 KiB", signed(bareURL+"/read/api/webhooks/x/receive", "", nil))
	bad := measure("wrong signature (403)", signed(ep.URL, wrong, nil))
	ignored := measure("filtered out (200)", signed(filtered.URL, goodFiltered, nil))
	ratio := bad.Throughput() / base.Throughput()
	ignoredRatio := ignored.Throughput() / base.Throughput()
	rows := []row{
		{"baseline: bare net/http handler reading the same 1 KiB body, answering 202", "", base.String(), true},
		{"rejection: wrong GitHub signature on a 1 KiB body (403)", ">= 0.5 of baseline", fmt.Sprintf("%.2f (%s)", ratio, bad),
			ratio >= 0.5 && bad.Statuses[http.StatusForbidden] == bad.Requests},
		{"filter: a 1 KiB GitHub call that spec.filter turns down on body.action (200 ignored)", ">= 0.5 of baseline", fmt.Sprintf("%.2f (%s)", ignoredRatio, ignored),
			ignoredRatio >= 0.5 && ignored.Statuses[http.StatusOK] == ignored.Requests},
	}

	// Accepted calls store runs; the operator would dispatch them meanwhile.
	c.Kill(devcluster.Operator)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	fresh := measure("GitHub accepted (202)", signed(ep.URL, good, func(w, i int) string { return fmt.Sprintf("%s-%d-%d", run, w, i) }))
	dup := measure("GitHub duplicates (202)", signed(ep.URL, good, func(int, int) string { return run + "-dup" }))
	dupRatio := dup.Throughput() / fresh.Throughput()
	rows = append(rows,
		row{"baseline: GitHub calls accepted (new delivery IDs: a read, then the run and its payload stored)", "", fresh.String(),
			fresh.Statuses[http.StatusAccepted] == fresh.Requests},
		row{"duplicate deliveries (202 with the first runId, nothing stored)", ">= 1.0 of accepted", fmt.Sprintf("%.2f (%s)", dupRatio, dup),
			dupRatio >= 1 && dup.Statuses[http.StatusAccepted] == dup.Requests})
	if err := c.AdminClient.DeleteAllOf(ctx, &agentsv1alpha1.AgentRun{}, client.InNamespace(ep.Namespace)); err != nil {
		return nil, fmt.Errorf("deleting the runs the GitHub calls stored: %w", err)
	}
	return rows, c.Start(ctx, devcluster.Operator)
}

// githubSignature is the X-Hub-Signature-256 of body with secret.
func githubSignature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// githubEndpoint creates a GitHub endpoint named name, with spec.filter
// filter, in the bench namespace and waits until the receiver verifies its
// signatures (a signed ping gets its pong).
func githubEndpoint(ctx context.Context, c *devcluster.Cluster, name, filter string, logf func(string, ...any)) (devcluster.Endpoint, error) {
	return githubEndpointIn(ctx, c, "bench", name, filter, logf)
}

// githubEndpointIn is githubEndpoint in namespace ns, whose Agent triage it
// calls.
func githubEndpointIn(ctx context.Context, c *devcluster.Cluster, ns, name, filter string, logf func(string, ...any)) (devcluster.Endpoint, error) {
	ep := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this issue.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Sender:         &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub},
			Filter:         filter,
		},
	}
	if err := c.AdminClient.Create(ctx, ep); client.IgnoreAlreadyExists(err) != nil {
		return devcluster.Endpoint{}, err
	}
	logf("waiting for GitHub endpoint %s to be served", ep.Name)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		out, err := c.EndpointFor(ctx, ep.Namespace, ep.Name)
		if err == nil && out.Secret != "" && pong(ctx, out) {
			return out, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return devcluster.Endpoint{}, fmt.Errorf("GitHub endpoint %s was not served within 2 minutes", ep.Name)
}

// pong tells whether a signed GitHub ping to ep is answered 200.
func pong(ctx context.Context, ep devcluster.Endpoint) bool {
	body := []byte(`{"zen":"bench"}`)
	mac := hmac.New(sha256.New, []byte(ep.Secret))
	mac.Write(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
