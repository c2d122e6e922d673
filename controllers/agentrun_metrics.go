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

package controllers

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Dispatch metrics, on the operator's /metrics, by the run's Agent
// (namespace, agent). Agents are few (each is a deployed agent service), so
// these stay small: about 30 series per Agent. Endpoints, which may be
// thousands, label none of them. The series of a deleted Agent stay until
// the operator restarts.
var (
	runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hookrun_runs_finished_total",
		Help: "AgentRuns that reached a final state, by Agent (namespace, agent) and state (success, error).",
	}, []string{"namespace", "agent", "state"})
	queueLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hookrun_run_queue_seconds",
		Help:    "From the call's 202 (receivedAt) to the run being sent to the agent, by Agent (namespace, agent).",
		Buckets: []float64{.01, .025, .05, .1, .2, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"namespace", "agent"})
	runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hookrun_run_duration_seconds",
		Help:    "From sending a run to its final state, by Agent (namespace, agent).",
		Buckets: prometheus.ExponentialBuckets(0.1, 2.5, 12),
	}, []string{"namespace", "agent"})
)

// observeRunEnded counts a run that has just reached its final state and,
// when it was sent, how long it ran.
func observeRunEnded(run *agentsv1alpha1.AgentRun) {
	agent := run.Spec.AgentRef.Name
	runsFinished.WithLabelValues(run.Namespace, agent, string(run.Status.State)).Inc()
	if run.Status.StartedAt != nil && run.Status.CompletedAt != nil {
		runDuration.WithLabelValues(run.Namespace, agent).Observe(run.Status.CompletedAt.Sub(run.Status.StartedAt.Time).Seconds())
	}
}

// observeRunStarted records how long a run that has just started waited
// since its call was accepted.
func observeRunStarted(run *agentsv1alpha1.AgentRun, now time.Time) {
	queueLatency.WithLabelValues(run.Namespace, run.Spec.AgentRef.Name).Observe(now.Sub(run.Spec.ReceivedAt.Time).Seconds())
}

// queueDepth counts queued runs from the operator's cache when scraped, on
// the leader.
var queueDepth = &scrapeGauge{
	desc: prometheus.NewDesc("hookrun_runs_queued", "AgentRuns waiting to be sent, by namespace and agent.", []string{"namespace", "agent"}, nil),
	gather: func(ctx context.Context, r client.Reader, emit func(n int, labels ...string)) error {
		runs := &agentsv1alpha1.AgentRunList{}
		if err := r.List(ctx, runs, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		type key struct{ ns, agent string }
		counts := map[key]int{}
		for i := range runs.Items {
			if runs.Items[i].EffectiveState() == agentsv1alpha1.RunQueued {
				counts[key{runs.Items[i].Namespace, runs.Items[i].Spec.AgentRef.Name}]++
			}
		}
		for k, n := range counts {
			emit(n, k.ns, k.agent)
		}
		return nil
	},
}
