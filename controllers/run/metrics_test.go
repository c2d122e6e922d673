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
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// metricsRun is a run of Agent agent in namespace ns.
func metricsRun(ns, agent string) *agentsv1alpha1.AgentRun {
	return &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"},
		Spec:       agentsv1alpha1.AgentRunSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent}},
	}
}

// Run metrics carry the run's Agent: one Agent's runs do not show under
// another's, nor under the same name in another namespace.
func TestRunMetricsByAgent(t *testing.T) {
	const ns = "metrics-by-agent"
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ended := func(agent string, state agentsv1alpha1.RunState, ran time.Duration) {
		run := metricsRun(ns, agent)
		run.Status.State = state
		started, completed := metav1.NewTime(start), metav1.NewTime(start.Add(ran))
		run.Status.StartedAt, run.Status.CompletedAt = &started, &completed
		runEnded(nil, run)
	}
	ended("triage", agentsv1alpha1.RunSuccess, 3*time.Second)
	ended("triage", agentsv1alpha1.RunError, 70*time.Second)
	ended("triage", agentsv1alpha1.RunSuccess, time.Second)
	ended("review", agentsv1alpha1.RunError, 0)
	unsent := metricsRun(ns, "review") // failed before it was sent: counted, no duration
	unsent.Status.State = agentsv1alpha1.RunError
	runEnded(nil, unsent)
	started := metricsRun("other-namespace", "triage")
	started.Spec.ReceivedAt = metav1.NewTime(start)
	observeRunStarted(started, start.Add(1500*time.Millisecond))

	for _, c := range []struct {
		agent, state string
		want         float64
	}{{"triage", "success", 2}, {"triage", "error", 1}, {"review", "error", 2}, {"review", "success", 0}} {
		if got := testutil.ToFloat64(runsFinished.WithLabelValues(ns, c.agent, c.state)); got != c.want {
			t.Errorf("hookrun_runs_finished_total{namespace=%q,agent=%q,state=%q} = %v, want %v", ns, c.agent, c.state, got, c.want)
		}
	}
	// Other tests of the package observe runs too: look at this test's series only.
	durations := histograms(t, runDuration)
	if h := durations[`namespace="metrics-by-agent",agent="triage"`]; h.GetSampleCount() != 3 || h.GetSampleSum() != 74 ||
		bucket(h, 3.90625) != 2 {
		t.Errorf("triage's run durations: %v", h)
	}
	if h := durations[`namespace="metrics-by-agent",agent="review"`]; h.GetSampleCount() != 1 {
		t.Errorf("review's run durations: %v, want the one run that was sent", h)
	}
	latency := histograms(t, queueLatency)[`namespace="other-namespace",agent="triage"`]
	if latency.GetSampleCount() != 1 || latency.GetSampleSum() != 1.5 || bucket(latency, 1) != 0 || bucket(latency, 2.5) != 1 {
		t.Errorf("queue latency: %v", latency)
	}
}

// histograms collects a histogram vector by its namespace and agent labels.
func histograms(t *testing.T, c prometheus.Collector) map[string]*dto.Histogram {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	c.Collect(ch)
	close(ch)
	out := map[string]*dto.Histogram{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		out[fmt.Sprintf("namespace=%q,agent=%q", labels["namespace"], labels["agent"])] = d.GetHistogram()
	}
	return out
}

// bucket is a histogram's cumulative count at upper bound le.
func bucket(h *dto.Histogram, le float64) uint64 {
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == le {
			return b.GetCumulativeCount()
		}
	}
	return 1 << 63
}

// A deleted Agent's mark keeps a late run from bringing its series back; a
// live Agent of that name lifts it, and only the latest maxGoneAgents
// deletions are remembered.
func TestGoneAgents(t *testing.T) {
	g := &goneAgents{marked: map[agentKey]struct{}{}}
	agent := func(name string, deleting, held bool) *agentsv1alpha1.Agent {
		a := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "gone-agents", Name: name}}
		if deleting {
			now := metav1.Now()
			a.DeletionTimestamp = &now
		}
		if held {
			a.Finalizers = []string{agentsv1alpha1.FinalizerCleanup}
		}
		return a
	}
	runsFinished.WithLabelValues("gone-agents", "a", "success").Inc()
	g.follow(agent("a", true, true))
	if g.isGone("gone-agents", "a") || testutil.ToFloat64(runsFinished.WithLabelValues("gone-agents", "a", "success")) != 1 {
		t.Fatal("an Agent its finalizer still holds is not gone")
	}
	g.follow(agent("a", true, false))
	if !g.isGone("gone-agents", "a") {
		t.Fatal("a deleted Agent the finalizer let go is not marked")
	}
	if got := testutil.ToFloat64(runsFinished.WithLabelValues("gone-agents", "a", "success")); got != 0 {
		t.Errorf("its series were not deleted: %v", got)
	}
	g.follow(agent("a", false, false))
	if g.isGone("gone-agents", "a") || len(g.order) != 0 {
		t.Fatalf("a live Agent of that name did not lift the mark: %v", g.order)
	}
	for i := range maxGoneAgents + 1 {
		g.follow(agent(fmt.Sprintf("n-%d", i), true, false))
	}
	if g.isGone("gone-agents", "n-0") || !g.isGone("gone-agents", "n-1") || len(g.marked) != maxGoneAgents || len(g.order) != maxGoneAgents {
		t.Errorf("marks beyond %d: %d marked, n-0 %v, n-1 %v", maxGoneAgents, len(g.marked), g.isGone("gone-agents", "n-0"), g.isGone("gone-agents", "n-1"))
	}
}
