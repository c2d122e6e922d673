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
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// measureScale creates o.endpoints endpoints and reports the operator's time
// to bring them all to Ready and the receiver's resident memory then.
func measureScale(ctx context.Context, c *devcluster.Cluster, o options, logf func(string, ...any)) ([]row, error) {
	const ns = "scale"
	if err := createScaleAgent(ctx, c, ns); err != nil {
		return nil, err
	}
	endpoints, stopInformer, err := endpointInformer(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	defer stopInformer()
	cpuBefore := cpuSeconds(c)
	requestsBefore, err := operatorRequests(ctx, c)
	if err != nil {
		return nil, err
	}
	logf("creating %d endpoints", o.endpoints)
	start := time.Now()
	if o.pprof {
		profileAPIServer(ctx, c, filepath.Join(o.workDir, "kube-apiserver.cpu.pprof"), apiServerProfileLength, logf)
	}
	if err := createScaleEndpoints(ctx, c, ns, o.workers, o.endpoints); err != nil {
		return nil, err
	}
	f := scaleFigures{endpoints: o.endpoints, created: time.Since(start)}
	logf("created in %s; waiting until all are Ready", f.created.Round(time.Millisecond))
	if f.allReady, err = waitAllReady(ctx, endpoints, ns, o.endpoints, start); err != nil {
		return nil, err
	}
	f.cpuUsed = cpuUsed(cpuBefore, cpuSeconds(c))
	logf("all Ready after %s; CPU time used meanwhile: %s", f.allReady.Round(time.Millisecond), strings.Join(f.cpuUsed, ", "))
	if requests, err := operatorRequests(ctx, c); err == nil {
		f.requestsPerEndpoint = requestsPerEndpoint(requestsBefore, requests, o.endpoints)
		logf("operator's API requests per endpoint: %s", strings.Join(f.requestsPerEndpoint, ", "))
	}
	if f.receiverMiB, err = receiverMemoryServing(ctx, c, client.ObjectKey{Namespace: ns, Name: scaleEndpointName(o.endpoints)}); err != nil {
		return nil, err
	}
	logf("receiver resident memory %.1f MiB", f.receiverMiB)
	retained, err := measureRetainedRuns(ctx, c, o, ns, endpoints, logf)
	if err != nil {
		return nil, err
	}
	return append(f.rows(), retained), nil
}

// scaleFigures is what measureScale measured.
type scaleFigures struct {
	endpoints         int
	receiverMiB       float64
	created, allReady time.Duration
	// cpuUsed and requestsPerEndpoint are read as they are printed.
	cpuUsed, requestsPerEndpoint []string
}

// rows are the report's rows of f, with their goals.
func (f scaleFigures) rows() []row {
	return []row{
		{fmt.Sprintf("%d endpoints: receiver resident memory", f.endpoints), "< 150 MiB", fmt.Sprintf("%.1f MiB", f.receiverMiB), f.receiverMiB < 150},
		{fmt.Sprintf("%d endpoints: operator brings all to Ready", f.endpoints), "< 2 min",
			fmt.Sprintf("%s from the first create (creating them took %s; CPU time meanwhile: %s; the operator's API requests per endpoint: %s)",
				f.allReady.Round(time.Second), f.created.Round(time.Second), strings.Join(f.cpuUsed, ", "), strings.Join(f.requestsPerEndpoint, ", ")), f.allReady < 2*time.Minute},
	}
}

// createScaleAgent creates namespace ns and the Agent its endpoints name
// (an address nothing listens on: no call is made).
func createScaleAgent(ctx context.Context, c *devcluster.Cluster, ns string) error {
	if err := c.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	return c.AdminClient.Create(ctx, &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage"},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/", ProtocolVersion: agentsv1alpha1.A2AProtocolV10}},
	})
}

// endpointInformer is a synced cache of the endpoints of ns, and the
// function that stops it. Readiness is counted from it: listing thousands
// of endpoints every second would cost the API server more than the
// operator does.
func endpointInformer(ctx context.Context, c *devcluster.Cluster, ns string) (cache.Cache, func(), error) {
	endpoints, err := cache.New(c.Admin, cache.Options{Scheme: devcluster.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, nil, err
	}
	if _, err := endpoints.GetInformer(ctx, &agentsv1alpha1.WebhookEndpoint{}); err != nil {
		return nil, nil, err
	}
	cacheCtx, stop := context.WithCancel(ctx)
	go func() { _ = endpoints.Start(cacheCtx) }()
	if !endpoints.WaitForCacheSync(ctx) {
		stop()
		return nil, nil, errors.New("the endpoint informer did not sync")
	}
	return endpoints, stop, nil
}

// scaleEndpointName is the name of the i-th endpoint (from 1).
func scaleEndpointName(i int) string { return fmt.Sprintf("ep-%05d", i) }

// createScaleEndpoints creates n endpoints in ns with workers goroutines.
func createScaleEndpoints(ctx context.Context, c *devcluster.Cluster, ns string, workers, n int) error {
	return inParallel(workers, n, func(i int) error {
		return c.AdminClient.Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: scaleEndpointName(i)},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "p",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Owner:          &agentsv1alpha1.Owner{User: "owner@example.com"},
			},
		})
	})
}

// scaleReadyTimeout is how long waitAllReady waits from the first create.
const scaleReadyTimeout = 15 * time.Minute

// waitAllReady waits, reading the informer every second, until n endpoints
// of ns are Ready, and returns the time since start.
func waitAllReady(ctx context.Context, endpoints cache.Cache, ns string, n int, start time.Time) (time.Duration, error) {
	for {
		eps := &agentsv1alpha1.WebhookEndpointList{}
		if err := endpoints.List(ctx, eps, client.InNamespace(ns)); err != nil {
			return 0, err
		}
		ready := countReady(eps.Items)
		if ready == n {
			return time.Since(start), nil
		}
		if time.Since(start) > scaleReadyTimeout {
			return 0, fmt.Errorf("only %d of %d endpoints Ready after 15 minutes", ready, n)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// countReady counts the endpoints that are Ready: condition Ready True and
// a secret hash in status.
func countReady(eps []agentsv1alpha1.WebhookEndpoint) int {
	ready := 0
	for _, ep := range eps {
		if meta.IsStatusConditionTrue(ep.Status.Conditions, agentsv1alpha1.ConditionReady) && ep.Status.SecretHash != "" {
			ready++
		}
	}
	return ready
}

// cpuUsed is the CPU time each of the API server, operator and receiver
// used between two readings of cpuSeconds, as printed.
func cpuUsed(before, after map[string]float64) []string {
	var used []string
	for _, name := range []string{devcluster.KubeAPIServer, devcluster.Operator, devcluster.Receiver} {
		used = append(used, fmt.Sprintf("%s %.0f s", name, after[name]-before[name]))
	}
	return used
}

// requestsPerEndpoint is the operator's API requests between two readings
// of operatorRequests per endpoint, by method and answer, as printed;
// those under 0.005 per endpoint are left out.
func requestsPerEndpoint(before, after map[string]float64, endpoints int) []string {
	var per []string
	for _, verb := range slices.Sorted(maps.Keys(after)) {
		if n := (after[verb] - before[verb]) / float64(endpoints); n >= 0.005 {
			per = append(per, fmt.Sprintf("%s %.2f", verb, n))
		}
	}
	return per
}

// receiverMemoryServing waits until the receiver serves endpoint key (a
// wrong secret answers 403, not an unknown ID's 404: its informers hold
// them all), then reads its resident memory.
func receiverMemoryServing(ctx context.Context, c *devcluster.Cluster, key client.ObjectKey) (float64, error) {
	last := &agentsv1alpha1.WebhookEndpoint{}
	if err := c.AdminClient.Get(ctx, key, last); err != nil {
		return 0, err
	}
	for !devcluster.Serves(ctx, last.Status.URL) {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		time.Sleep(200 * time.Millisecond)
	}
	runtime.GC()
	return residentMiB(c.PID(devcluster.Receiver))
}

// inParallel calls f with 1 to n from workers goroutines, and returns the
// first error; a worker stops at its first error.
func inParallel(workers, n int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := f(int(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// apiServerProfileLength is how long kube-apiserver is profiled from the
// first create (--pprof): about the time 10,000 endpoints take.
const apiServerProfileLength = 2 * time.Minute

// profileAPIServer records a CPU profile of kube-apiserver (its
// /debug/pprof, as an administrator) for d into path, in the background;
// read it with go tool pprof -top path.
func profileAPIServer(ctx context.Context, c *devcluster.Cluster, path string, d time.Duration, logf func(string, ...any)) {
	hc, err := rest.HTTPClientFor(c.Admin)
	if err != nil {
		logf("kube-apiserver profile: %v", err)
		return
	}
	hc.Timeout = d + time.Minute
	go func() {
		url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(c.Admin.Host, "/"), int(d.Seconds()))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			logf("kube-apiserver profile: %v", err)
			return
		}
		resp, err := hc.Do(req)
		if err != nil {
			logf("kube-apiserver profile: %v", err)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, b)
		}
		if err == nil {
			err = os.WriteFile(path, b, 0o644)
		}
		if err != nil {
			logf("kube-apiserver profile: %v", err)
			return
		}
		logf("kube-apiserver CPU profile of %s from the first create: %s (go tool pprof -top %s)", d, path, path)
	}()
}
