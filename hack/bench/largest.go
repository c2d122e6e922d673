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
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// largestEndpoints is how many endpoints of the largest spec the schema
// allows the receiver must hold within its memory goal (DESIGN.md
// section 11, "Bounded memory").
const largestEndpoints = 2000

// maxFilterLength is spec.filter's schema bound.
const maxFilterLength = 4096

// largestSpec is a WebhookEndpoint spec as large as the schema allows where
// a tenant would make it large: a prompt of 32,768 two-byte characters
// (65,536 bytes), 64 event names of 256 characters, a 4,096-character
// filter that compiles (a list of 300-odd event names: many nodes, the
// most a compiled program holds), 32 fields of 63-character names and
// 1,024-character expressions, and an OIDC sender (CloudEvents, which
// takes events and oidc) with a 256-character issuer and audience and
// 4,096-character claims.
func largestSpec(i int) agentsv1alpha1.WebhookEndpointSpec {
	events := make([]string, 64)
	for j := range events {
		events[j] = fmt.Sprintf("%05d-%02d-", i, j) + strings.Repeat("e", 256-10)
	}
	var names []string
	expr := func() string { return "event in [" + strings.Join(names, ",") + "]" }
	for len(expr()) < maxFilterLength-14 {
		names = append(names, fmt.Sprintf(`"e%05d-%04d"`, i, len(names)))
	}
	fields := map[string]agentsv1alpha1.FieldExpression{}
	for j := range filter.MaxFields {
		fields[fmt.Sprintf("f%02d_", j)+strings.Repeat("n", 63-4)] = agentsv1alpha1.FieldExpression(fmt.Sprintf(`"%05d-%02d`, i, j) + strings.Repeat("x", 1024-10) + `"`)
	}
	return agentsv1alpha1.WebhookEndpointSpec{
		AgentRef:       agentsv1alpha1.LocalObjectReference{Name: "triage"},
		Prompt:         fmt.Sprintf("%05d ", i) + strings.Repeat("é", 32768-6),
		ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
		Owner:          &agentsv1alpha1.Owner{User: "owner@example.com"},
		Sender: &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents, Events: events, OIDC: &agentsv1alpha1.OIDCSender{
			Issuer:   fmt.Sprintf("https://%05d.", i) + strings.Repeat("i", 256-len("https://00000.")-len(".example")) + ".example",
			Audience: fmt.Sprintf("%05d-", i) + strings.Repeat("a", 256-6),
			Claims:   "claims.sub in [" + strings.Join(names[:len(names)-1], ",") + "]",
		}},
		Filter:  expr(),
		Fields:  fields,
		Payload: agentsv1alpha1.PayloadFields,
	}
}

// measureLargest creates largestEndpoints endpoints of largestSpec in a
// namespace of their own and reports the receiver's resident memory once
// it serves them all. Run alone (--only largest) it measures them alone;
// in a full run it comes last, after the scale measurement's endpoints.
func measureLargest(ctx context.Context, c *devcluster.Cluster, o options, logf func(string, ...any)) (row, error) {
	const ns = "largest"
	if err := c.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return row{}, err
	}
	if err := c.AdminClient.Create(ctx, &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage"},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/", ProtocolVersion: agentsv1alpha1.A2AProtocolV10}},
	}); err != nil {
		return row{}, err
	}
	logf("creating %d endpoints of the largest spec", largestEndpoints)
	start := time.Now()
	err := inParallel(o.workers, largestEndpoints, func(i int) error {
		return c.AdminClient.Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("ep-%05d", i)},
			Spec:       largestSpec(i),
		})
	})
	if err != nil {
		return row{}, err
	}
	logf("created in %s; waiting until the receiver serves the last", time.Since(start).Round(time.Millisecond))
	// The receiver serves an endpoint once the operator has given it an ID
	// and its informer has it: the last one created is served last, or
	// nearly. The probe's Header credential is not a CloudEvents
	// sender's token: a served endpoint answers 401, an unknown ID 404.
	served := func(url string) bool {
		code, err := devcluster.Probe(ctx, url)
		return err == nil && code != http.StatusNotFound
	}
	for i := largestEndpoints; i > largestEndpoints-10; i-- {
		ep := &agentsv1alpha1.WebhookEndpoint{}
		for ep.Status.URL == "" || !served(ep.Status.URL) {
			if ctx.Err() != nil {
				return row{}, ctx.Err()
			}
			if time.Since(start) > 20*time.Minute {
				return row{}, fmt.Errorf("endpoint %s/ep-%05d not served after 20 minutes", ns, i)
			}
			time.Sleep(500 * time.Millisecond)
			if err := c.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("ep-%05d", i)}, ep); err != nil {
				return row{}, err
			}
		}
	}
	rss, err := residentMiB(c.PID(devcluster.Receiver))
	if err != nil {
		return row{}, err
	}
	logf("receiver resident memory %.1f MiB", rss)
	return row{fmt.Sprintf("%d endpoints of the largest spec (64 KiB prompt, 64 events of 256 characters, a 4,096-character filter, 32 fields of 1,024 characters, an OIDC sender with 4,096-character claims): receiver resident memory", largestEndpoints),
		"< 200 MiB", fmt.Sprintf("%.1f MiB", rss), rss < 200}, nil
}
