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

package run

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// Dispatch metrics, on the operator's /metrics, by the run's Agent
// (namespace, agent). Agents are few (each is a deployed agent service), so
// these stay small: about 30 series per Agent. Endpoints, which may be
// thousands, label none of them. The series of a deleted Agent are removed
// (agentSeries).
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
	if agentSeries.isGone(run.Namespace, agent) {
		return
	}
	runsFinished.WithLabelValues(run.Namespace, agent, string(run.Status.State)).Inc()
	if run.Status.StartedAt != nil && run.Status.CompletedAt != nil {
		runDuration.WithLabelValues(run.Namespace, agent).Observe(run.Status.CompletedAt.Sub(run.Status.StartedAt.Time).Seconds())
	}
}

// observeRunStarted records how long a run that has just started waited
// since its call was accepted.
func observeRunStarted(run *agentsv1alpha1.AgentRun, now time.Time) {
	if agentSeries.isGone(run.Namespace, run.Spec.AgentRef.Name) {
		return
	}
	queueLatency.WithLabelValues(run.Namespace, run.Spec.AgentRef.Name).Observe(now.Sub(run.Spec.ReceivedAt.Time).Seconds())
}

// maxGoneAgents bounds how many deleted Agents agentSeries remembers. A
// mark matters only while the deleted Agent's last runs end or are
// collected (seconds), so the oldest go first.
const maxGoneAgents = 1024

// agentSeries removes the run metrics' series of an Agent once it is gone
// (DESIGN section 10), and keeps them from coming back: a run of the Agent
// may still end after it (the Agent was deleted while the run was running
// or queued, and the garbage collector has not deleted the run yet). The
// Agent reconciler tells it what it sees (follow); a live Agent of that
// name lifts the mark.
var agentSeries = &goneAgents{marked: map[agentKey]struct{}{}}

func init() {
	metrics.Registry.MustRegister(runsFinished, queueLatency, runDuration, queueDepth)
}

// ServeMetricsFrom points the gauges computed at scrape time (queued runs)
// at the manager's cache r; they report once elected is closed.
func ServeMetricsFrom(r client.Reader, elected <-chan struct{}) { queueDepth.Use(r, elected) }

// FollowAgent tells the run metrics what the Agent reconciler saw of agent
// (its FollowAgent): a deleted Agent's series go and stay gone, a live
// Agent of that name brings them back.
func FollowAgent(agent *agentsv1alpha1.Agent) { agentSeries.follow(agent) }

type agentKey struct{ namespace, name string }

type goneAgents struct {
	mu     sync.Mutex
	marked map[agentKey]struct{}
	order  []agentKey // oldest first
}

// follow notes what the Agent reconciler saw of agent: a live Agent lifts
// its name's mark; one being deleted that the cleanup finalizer no longer
// holds is gone: its series are deleted and its name marked.
func (g *goneAgents) follow(agent *agentsv1alpha1.Agent) {
	key := agentKey{agent.Namespace, agent.Name}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case agent.DeletionTimestamp.IsZero():
		if _, ok := g.marked[key]; ok {
			delete(g.marked, key)
			for i, k := range g.order {
				if k == key {
					g.order = append(g.order[:i], g.order[i+1:]...)
					break
				}
			}
		}
	case !controllerutil.ContainsFinalizer(agent, agentsv1alpha1.FinalizerCleanup):
		if _, ok := g.marked[key]; !ok {
			if len(g.order) == maxGoneAgents {
				delete(g.marked, g.order[0])
				g.order = g.order[1:]
			}
			g.marked[key] = struct{}{}
			g.order = append(g.order, key)
		}
		labels := prometheus.Labels{"namespace": key.namespace, "agent": key.name}
		runsFinished.DeletePartialMatch(labels)
		queueLatency.Delete(labels)
		runDuration.Delete(labels)
	}
}

// isGone tells whether the Agent namespace/name was deleted (and not
// created again since).
func (g *goneAgents) isGone(namespace, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.marked[agentKey{namespace, name}]
	return ok
}

// queueDepth counts queued runs from the operator's cache when scraped, on
// the leader.
var queueDepth = &cached.ScrapeGauge{
	Desc: prometheus.NewDesc("hookrun_runs_queued", "AgentRuns waiting to be sent, by namespace and agent.", []string{"namespace", "agent"}, nil),
	Gather: func(ctx context.Context, r client.Reader, emit func(n int, labels ...string)) error {
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
