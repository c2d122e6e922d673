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
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// The flood of the verdicts measurement: one namespace's two GitHub
// endpoints whose filter runs to its step limit (three comprehensions of
// 125,000 steps: tens of milliseconds of a core a call), called over 16
// connections; and another namespace's endpoint whose filter takes about a
// third of the limit and matches.
const (
	floodNamespace   = "flood"
	floodConnections = 16
	victimCalls      = 60
)

var (
	floodFilter  = filter.NestedAll(50, 3) + " && " + filter.NestedAll(50, 3) + " && " + filter.NestedAll(50, 3)
	victimFilter = `event == "issues" && ` + filter.NestedAll(40, 3)
)

// measureVerdicts sends the victim's matching calls one after another,
// alone and then under the flood, and counts the answers that are not 202
// (200 ignored would be a delivery GitHub never retries; 503 with
// Retry-After is retried) and the 202s' p99.
func measureVerdicts(ctx context.Context, c *devcluster.Cluster, logf func(string, ...any)) ([]row, error) {
	agent := &agentsv1alpha1.Agent{}
	if err := c.AdminClient.Get(ctx, client.ObjectKey{Namespace: "bench", Name: "triage"}, agent); err != nil {
		return nil, err
	}
	if err := client.IgnoreAlreadyExists(c.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floodNamespace}})); err != nil {
		return nil, err
	}
	flooderAgent := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: floodNamespace, Name: agent.Name}, Spec: agent.Spec}
	if err := client.IgnoreAlreadyExists(c.AdminClient.Create(ctx, flooderAgent)); err != nil {
		return nil, err
	}
	var floods []devcluster.Endpoint
	for _, name := range []string{"long-1", "long-2"} {
		ep, err := githubEndpointIn(ctx, c, floodNamespace, name, floodFilter, logf)
		if err != nil {
			return nil, err
		}
		floods = append(floods, ep)
	}
	victim, err := githubEndpointIn(ctx, c, "bench", "bench-verdicts", victimFilter, logf)
	if err != nil {
		return nil, err
	}
	// The operator would dispatch the victim's runs meanwhile.
	c.Kill(devcluster.Operator)

	alone := victimAnswers(ctx, victim, "alone")
	stop := make(chan struct{})
	var flooding sync.WaitGroup
	floodAnswers := make([]map[int]int, floodConnections)
	for i := range floodConnections {
		floodAnswers[i] = map[int]int{}
		flooding.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				floodAnswers[i][issueCall(ctx, floods[i%2], fmt.Sprintf("flood-%d-%d", i, n))]++
			}
		})
	}
	beside := victimAnswers(ctx, victim, "beside")
	close(stop)
	flooding.Wait()
	flooded := map[int]int{}
	for _, a := range floodAnswers {
		for status, n := range a {
			flooded[status] += n
		}
	}
	logf("verdicts: alone %s; beside the flood %s; the flood's answers %v", alone, beside, flooded)
	if err := c.AdminClient.DeleteAllOf(ctx, &agentsv1alpha1.AgentRun{}, client.InNamespace("bench")); err != nil {
		return nil, fmt.Errorf("deleting the runs the victim's calls stored: %w", err)
	}
	const under = "another namespace's matching filter (a third of the step limit) while one namespace floods two endpoints with evaluations that run to the limit (16 connections)"
	return []row{
		{under + ": answers not 202", "0 ignored", beside.answers(), beside.ignored == 0},
		{under + ": 202 p99", "< 1 s", fmt.Sprintf("%.1f ms (%.1f ms alone, %s)", ms(beside.p99), ms(alone.p99), alone.answers()), beside.p99 < time.Second && alone.ignored == 0},
	}, c.Start(ctx, devcluster.Operator)
}

// verdicts are the answers to the victim's calls.
type verdicts struct {
	accepted, ignored, retry, other int
	p99                             time.Duration
}

func (v verdicts) answers() string {
	return fmt.Sprintf("%d of %d accepted, %d ignored, %d 503 with Retry-After, %d other", v.accepted, victimCalls, v.ignored, v.retry, v.other)
}

func (v verdicts) String() string { return v.answers() + fmt.Sprintf(", p99 %.1f ms", ms(v.p99)) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// victimAnswers sends victimCalls matching calls to ep, one at a time.
func victimAnswers(ctx context.Context, ep devcluster.Endpoint, run string) verdicts {
	var v verdicts
	var took []time.Duration
	for i := range victimCalls {
		start := time.Now()
		switch issueCall(ctx, ep, fmt.Sprintf("verdicts-%s-%d-%d", run, time.Now().UnixNano(), i)) {
		case http.StatusAccepted:
			v.accepted++
			took = append(took, time.Since(start))
		case http.StatusOK:
			v.ignored++
		case http.StatusServiceUnavailable:
			v.retry++
		default:
			v.other++
		}
	}
	if len(took) > 0 {
		slices.Sort(took)
		v.p99 = took[min(len(took)-1, len(took)*99/100)]
	}
	return v
}

// issueCall sends a signed GitHub issues delivery to ep and returns the
// answer's status (0 when none came).
func issueCall(ctx context.Context, ep devcluster.Endpoint, delivery string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(senderBody))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", githubSignature(ep.Secret, senderBody))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
