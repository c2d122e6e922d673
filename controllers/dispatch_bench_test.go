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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
	"github.com/hookrun/hookrun/test/testenv"
)

// BenchmarkQueueToSend measures, with free capacity, the time from a run and
// its payload being stored (the moment the receiver answers 202) to the agent
// receiving the message, through a real API server and the real operator.
// It reports p50 and p99 (make bench).
func BenchmarkQueueToSend(b *testing.B) {
	ctx, c := benchOperator(b)
	agent := newBenchAgent(b)
	must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}))
	must(b, c.Create(ctx, benchAgentObject("bench", "demo", agent.srv.URL)))
	b.ResetTimer()
	latencies := agent.queueToSend(ctx, b, c, "bench", "demo", "bench", b.N)
	b.StopTimer()
	b.ReportMetric(ms(percentile(latencies, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(latencies, 0.99)), "p99-ms")
}

// benchOperator starts an API server and the operator as `hookrun operator`
// wires it, with the default options, for one benchmark.
func benchOperator(b *testing.B) (context.Context, client.Client) {
	b.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: run `make bench`")
	}
	ctrl.SetLogger(logr.Discard())
	s := testenv.Scheme()
	env := testenv.Environment(nil)
	cfg, err := env.Start()
	must(b, err)
	b.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: s})
	must(b, err)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Client: client.Options{Cache: ClientCacheOptions()}, Cache: CacheOptions(DefaultNamespace),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.Cleanup(func() { cancel(); <-done }) // before the API server stops
	opts := NewOperatorOptions()
	opts.PublicBaseURL = "http://127.0.0.1:1"
	must(b, SetupOperator(ctx, mgr, opts, Dependencies{}))
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	return ctx, c
}

func benchAgentObject(ns, name, url string) *agentsv1alpha1.Agent {
	return &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: url, ProtocolVersion: agentsv1alpha1.A2AProtocolV10},
			MaxConcurrentRuns: 1000},
	}
}

// benchAgent is the demo agent, noting when each message arrives.
type benchAgent struct {
	srv     *httptest.Server
	demo    *demoagent.Agent
	mu      sync.Mutex
	arrived map[int]time.Time // by the task count it made
}

func newBenchAgent(b *testing.B) *benchAgent {
	a := &benchAgent{demo: demoagent.New(), arrived: map[int]time.Time{}}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		before := a.demo.Tasks()
		a.demo.ServeHTTP(w, r)
		if n := a.demo.Tasks(); n > before {
			a.mu.Lock()
			a.arrived[n] = now
			a.mu.Unlock()
		}
	}))
	b.Cleanup(a.srv.Close)
	return a
}

// queueToSend stores n runs of the Agent one after the other, as the
// receiver does, and returns the time from each 202 to its arrival.
func (a *benchAgent) queueToSend(ctx context.Context, b *testing.B, c client.Client, ns, agent, prefix string, n int) []time.Duration {
	b.Helper()
	var latencies []time.Duration
	for i := range n {
		first := a.demo.Tasks()
		storeBenchRun(ctx, b, c, ns, agent, fmt.Sprintf("%s-%06d", prefix, i))
		stored := time.Now() // both objects stored: the receiver's 202
		deadline := stored.Add(30 * time.Second)
		for {
			a.mu.Lock()
			at, ok := a.arrived[first+1]
			a.mu.Unlock()
			if ok {
				latencies = append(latencies, max(at.Sub(stored), 0))
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("run %s-%06d did not reach the agent within 30s", prefix, i)
			}
			<-time.After(time.Millisecond)
		}
	}
	return latencies
}

// storeBenchRun stores a run and then its payload, owned by the run, as the receiver does.
func storeBenchRun(ctx context.Context, b *testing.B, c client.Client, ns, agent, name string) {
	b.Helper()
	run := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{agentsv1alpha1.LabelAgent: agent}},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "e"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent},
			Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Payload:    &agentsv1alpha1.PayloadReference{SecretName: name, Bytes: 2},
			ReceivedAt: metav1.NewTime(time.Now()),
		},
	}
	must(b, c.Create(ctx, run))
	must(b, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: name, UID: run.UID,
		}}},
		Type: agentsv1alpha1.SecretTypeWebhookPayload,
		Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("{}")},
	}))
}

// percentile is the p-quantile of latencies (sorted in place).
func percentile(latencies []time.Duration, p float64) time.Duration {
	slices.Sort(latencies)
	return latencies[int(p*float64(len(latencies)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
