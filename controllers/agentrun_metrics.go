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
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Dispatch metrics, on the operator's /metrics.
var (
	runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hookrun_runs_finished_total",
		Help: "AgentRuns that reached a final state, by state (success, error).",
	}, []string{"state"})
	queueLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hookrun_run_queue_seconds",
		Help:    "From the call's 202 (receivedAt) to the run being sent to the agent.",
		Buckets: []float64{.01, .025, .05, .1, .2, .5, 1, 2.5, 5, 10, 30, 60},
	})
	runDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hookrun_run_duration_seconds",
		Help:    "From sending a run to its final state.",
		Buckets: prometheus.ExponentialBuckets(0.1, 2.5, 12),
	})
)

func init() {
	metrics.Registry.MustRegister(runsFinished, queueLatency, runDuration)
}
