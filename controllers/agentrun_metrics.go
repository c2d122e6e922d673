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
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
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
	metrics.Registry.MustRegister(runsFinished, queueLatency, runDuration, queueDepth)
}

// queueDepth counts queued runs from the operator's cache when scraped.
var queueDepth = &queueDepthCollector{
	desc: prometheus.NewDesc("hookrun_runs_queued", "AgentRuns waiting to be sent, by namespace and agent.", []string{"namespace", "agent"}, nil),
}

type queueDepthCollector struct {
	desc   *prometheus.Desc
	reader atomic.Pointer[client.Reader]
}

// use points the collector at the manager's cache.
func (c *queueDepthCollector) use(r client.Reader) { c.reader.Store(&r) }

func (c *queueDepthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *queueDepthCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.reader.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	runs := &agentsv1alpha1.AgentRunList{}
	if err := (*r).List(ctx, runs, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	type key struct{ ns, agent string }
	counts := map[key]int{}
	for i := range runs.Items {
		if runs.Items[i].EffectiveState() == agentsv1alpha1.RunQueued {
			counts[key{runs.Items[i].Namespace, runs.Items[i].Spec.AgentRef.Name}]++
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k.ns, k.agent)
	}
}
