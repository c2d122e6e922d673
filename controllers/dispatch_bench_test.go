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
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
)

// BenchmarkQueueToSend measures, with free capacity, the time from a run and
// its payload being stored (the moment the receiver answers 202) to the agent
// receiving the message, through a real API server and the real operator.
// It reports p50 and p99 (make bench).
func BenchmarkQueueToSend(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: run `make bench`")
	}
	ctrl.SetLogger(logr.Discard())
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = agentsv1alpha1.AddToScheme(s)
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		b.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Client: client.Options{Cache: ClientCacheOptions()}, Cache: CacheOptions(DefaultNamespace),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := NewOperatorOptions()
	opts.PublicBaseURL = "http://127.0.0.1:1"
	if err := SetupOperator(ctx, mgr, opts, Dependencies{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	// The demo agent, noting when each message arrives.
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	demo := demoagent.New()
	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		before := demo.Tasks()
		demo.ServeHTTP(w, r)
		if demo.Tasks() > before {
			mu.Lock()
			arrived[fmt.Sprint(demo.Tasks())] = now
			mu.Unlock()
		}
	}))
	defer agentSrv.Close()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(c.Create(ctx, ns))
	must(c.Create(ctx, &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "demo"},
		Spec: agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: agentSrv.URL, ProtocolVersion: agentsv1alpha1.A2AProtocolV10},
			MaxConcurrentRuns: 1000},
	}))

	var latencies []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench-%06d", i)
		stored := time.Now()
		run := &agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, Labels: map[string]string{agentsv1alpha1.LabelAgent: "demo"}},
			Spec: agentsv1alpha1.AgentRunSpec{
				EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "e"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "demo"},
				Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Payload:    &agentsv1alpha1.PayloadReference{SecretName: name, Bytes: 2},
				ReceivedAt: metav1.NewTime(stored),
			},
		}
		must(c.Create(ctx, run))
		// Owned by its run, as the receiver writes it.
		must(c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: name, UID: run.UID,
			}}},
			Type: agentsv1alpha1.SecretTypeWebhookPayload,
			Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("{}")},
		}))
		stored = time.Now() // both objects stored: the receiver's 202
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			at, ok := arrived[fmt.Sprint(i+1)]
			mu.Unlock()
			if ok {
				latencies = append(latencies, max(at.Sub(stored), 0))
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("run %s did not reach the agent within 30s", name)
			}
			<-time.After(time.Millisecond)
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
}
