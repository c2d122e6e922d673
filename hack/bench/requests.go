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
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/hack/loadgen"
)

type (
	measureFunc func(name string, next loadgen.Request) loadgen.Result
	postFunc    func(url, secret string, body func() io.Reader, length int64) loadgen.Request
)

func small() io.Reader { return strings.NewReader(`{"a":1}`) }

// measureRejections compares each rejection with the bare server answering
// the same request.
func measureRejections(ctx context.Context, hc *http.Client, measure measureFunc, post postFunc, bareURL string, ep, open devcluster.Endpoint, unknownURL string) []row {
	var rows []row
	baseline := measure("bare net/http 202", post(bareURL+"/api/webhooks/x/receive", "", small, 7))
	rows = append(rows, row{"baseline: bare net/http handler answering 202", "", baseline.String(), true})
	for _, s := range []struct {
		name, url, secret string
		body              func() io.Reader
		length            int64
		want              int
	}{
		{"unknown ID (401)", unknownURL, "", small, 7, http.StatusUnauthorized},
		{"wrong secret (403)", ep.URL, "not-the-secret", small, 7, http.StatusForbidden},
		// A body announced over 1 MiB, sent only on "100 Continue": the
		// receiver answers from the header alone, so it is never sent.
		{"413 by Content-Length", ep.URL, ep.Secret, func() io.Reader { return bytes.NewReader(bigBody) }, agentsv1alpha1.MaxPayloadBytes + 1, http.StatusRequestEntityTooLarge},
		{"429 (rate limited)", open.URL, "", small, 7, http.StatusTooManyRequests},
	} {
		if s.want == http.StatusTooManyRequests {
			// Fill the unauthenticated endpoint's one-per-minute window
			// (until a call gets 429); the runs that follow take under a
			// minute. A fresh client: a connection the 413s closed would
			// fail a POST without its reaching the receiver.
			fill := &http.Client{Timeout: 5 * time.Second}
			for range 10 {
				resp, err := fill.Post(open.URL, "application/json", small())
				if err == nil {
					_ = resp.Body.Close()
					if resp.StatusCode == http.StatusTooManyRequests {
						break
					}
				}
			}
		}
		base, baseName := baseline, "baseline"
		if s.length > agentsv1alpha1.MaxPayloadBytes {
			// No server can keep a connection whose announced body it
			// did not read: the bare server gets the same request.
			base = measure("bare, same request", post(bareURL+"/api/webhooks/x/receive", "", s.body, s.length))
			baseName = "the bare handler given the same request"
			rows = append(rows, row{"baseline: bare net/http handler answering 202 to the same announced 1 MiB + 1 body", "", base.String(), true})
		}
		r := measure(s.name, post(s.url, s.secret, s.body, s.length))
		rows = append(rows, rejectionRow(s.name, baseName, r, base, baseline, s.want, s.length > agentsv1alpha1.MaxPayloadBytes))
	}
	return rows
}

// rejectionRow is the row of rejection name: its throughput r as a ratio
// of the baseline base (named baseName), met at 0.8 if every answer had
// status want. A rejection of a body announced over the limit (announced)
// is also given as a ratio of the keep-alive baseline.
func rejectionRow(name, baseName string, r, base, keepAlive loadgen.Result, want int, announced bool) row {
	ratio := r.Throughput() / base.Throughput()
	figure := fmt.Sprintf("%.2f (%s)", ratio, r)
	if announced {
		figure = fmt.Sprintf("%.2f (%s; %.2f of the keep-alive baseline)", ratio, r, r.Throughput()/keepAlive.Throughput())
	}
	return row{"rejection: " + name, ">= 0.8 of " + baseName, figure, ratio >= 0.8 && r.Statuses[want] == r.Requests}
}

// measureAccepted measures accepted calls without the operator dispatching
// them, against the same two creates made straight through client-go, same
// concurrency, as the receiver's own service account.
func measureAccepted(ctx context.Context, c *devcluster.Cluster, o options, measure measureFunc, post postFunc, ep devcluster.Endpoint, logf func(string, ...any)) ([]row, error) {
	c.Kill(devcluster.Operator)
	accepted := measure("accepted (202)", post(ep.URL, ep.Secret, small, 7))
	direct, err := measureDirect(ctx, c.Kubeconfig(devcluster.Receiver), o, logf)
	if err != nil {
		return nil, err
	}
	rows := acceptedRows(accepted, direct)
	// The thousands of runs stored here would otherwise be dispatched
	// while the next measurements run, and be measured with them.
	if err := c.AdminClient.DeleteAllOf(ctx, &agentsv1alpha1.AgentRun{}, client.InNamespace(ep.Namespace)); err != nil {
		return nil, fmt.Errorf("deleting the runs the accepted calls stored: %w", err)
	}
	return rows, c.Start(ctx, devcluster.Operator)
}

// acceptedRows are the rows of accepted calls and of their baseline, the
// same creates made straight through client-go (direct): met at 0.7 of its
// throughput if every call was answered 202.
func acceptedRows(accepted, direct loadgen.Result) []row {
	ratio := accepted.Throughput() / direct.Throughput()
	return []row{
		{"baseline: AgentRun + Secret created with client-go", "", direct.String(), true},
		{"accepted calls (202, run and payload stored)", ">= 0.7 of baseline", fmt.Sprintf("%.2f (%s)", ratio, accepted), ratio >= 0.7 && accepted.Statuses[http.StatusAccepted] == accepted.Requests},
	}
}

var bigBody = make([]byte, agentsv1alpha1.MaxPayloadBytes+1)

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
