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

package devcluster

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/utils/clock"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/membership"
)

// Serves tells whether the receiver at rawURL's host knows the endpoint
// rawURL names (Probe answered 403, 413 or 429). It counts as a refusal in
// the endpoint's history; Cluster.ReceiverServes does not.
func Serves(ctx context.Context, rawURL string) bool {
	code, err := Probe(ctx, rawURL)
	return err == nil && servedCode(code)
}

// servedCode tells whether a Probe answer needs the endpoint known.
func servedCode(code int) bool {
	switch code {
	case http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return true
	}
	return false
}

// Probe asks the receiver at rawURL's host about the endpoint rawURL names
// and returns the status code. Nothing is stored, for any kind of endpoint:
// the probe carries a wrong secret and announces a body over the 1 MiB limit
// without sending it. An unknown ID answers 404; a known endpoint answers 403
// (wrong secret), or, if it takes unauthenticated calls, 413 (or 429 once its
// pre-parse limit is spent, which also needs the endpoint known).
func Probe(ctx context.Context, rawURL string) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%s: not-the-secret\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		u.RequestURI(), u.Host, agentsv1alpha1.SecretHeader, agentsv1alpha1.MaxPayloadBytes+1)
	if err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// ReceiverReadyz is the URL of the receiver's /readyz.
func (c *Cluster) ReceiverReadyz() string { return "http://" + c.receiverHealth + "/readyz" }

// ReceiverServes asks the receiver's health probe port whether it serves the
// endpoint ID (GET /readyz/endpoint?id=ID answers 200): unlike Probe, this
// leaves no refusal in the endpoint's history.
func (c *Cluster) ReceiverServes(ctx context.Context, id string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.receiverHealth+"/readyz/endpoint?id="+url.QueryEscape(id), nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

// ownerMayTrigger asks the API server, as the receiver does, whether ep's
// owner may trigger its Agent now.
func (c *Cluster) ownerMayTrigger(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (bool, error) {
	fresh := membership.NewSubjectAccessReviewChecker(c.AdminClient, func(context.Context) error { return nil }, clock.RealClock{}, 0)
	return fresh.IsMember(ctx, ep.Namespace, ep.Spec.AgentRef.Name, ep.Spec.Owner)
}

// ReceiverMetric is the sum of the receiver's samples of metric (a counter
// or gauge, all its label sets), read from its /metrics.
func (c *Cluster) ReceiverMetric(ctx context.Context, metric string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.MetricsURL(Receiver), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	sum := 0.0
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		end := strings.IndexAny(line, "{ ")
		if end < 0 || line[:end] != metric {
			continue
		}
		// The value is the last field (client_golang writes no timestamps).
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", metric, line, err)
		}
		sum += v
	}
	return sum, lines.Err()
}
