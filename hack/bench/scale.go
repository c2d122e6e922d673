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
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	if err := c.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	if err := c.AdminClient.Create(ctx, &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage"},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/", ProtocolVersion: agentsv1alpha1.A2AProtocolV10}},
	}); err != nil {
		return nil, err
	}
	// Readiness is counted from an informer: listing thousands of endpoints
	// every second would cost the API server more than the operator does.
	endpoints, err := cache.New(c.Admin, cache.Options{Scheme: devcluster.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	if _, err := endpoints.GetInformer(ctx, &agentsv1alpha1.WebhookEndpoint{}); err != nil {
		return nil, err
	}
	cacheCtx, stopCache := context.WithCancel(ctx)
	defer stopCache()
	go func() { _ = endpoints.Start(cacheCtx) }()
	if !endpoints.WaitForCacheSync(ctx) {
		return nil, errors.New("the endpoint informer did not sync")
	}
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
	err = inParallel(o.workers, o.endpoints, func(i int) error {
		return c.AdminClient.Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("ep-%05d", i)},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "p",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Owner:          &agentsv1alpha1.Owner{User: "owner@example.com"},
			},
		})
	})
	if err != nil {
		return nil, err
	}
	created := time.Since(start)
	logf("created in %s; waiting until all are Ready", created.Round(time.Millisecond))
	var allReady time.Duration
	for allReady == 0 {
		eps := &agentsv1alpha1.WebhookEndpointList{}
		if err := endpoints.List(ctx, eps, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		ready := 0
		for _, ep := range eps.Items {
			for _, cond := range ep.Status.Conditions {
				if cond.Type == agentsv1alpha1.ConditionReady && cond.Status == metav1.ConditionTrue && ep.Status.SecretHash != "" {
					ready++
				}
			}
		}
		if ready == o.endpoints {
			allReady = time.Since(start)
			break
		}
		if time.Since(start) > 15*time.Minute {
			return nil, fmt.Errorf("only %d of %d endpoints Ready after 15 minutes", ready, o.endpoints)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	cpu := cpuSeconds(c)
	var used []string
	for _, name := range []string{devcluster.KubeAPIServer, devcluster.Operator, devcluster.Receiver} {
		used = append(used, fmt.Sprintf("%s %.0f s", name, cpu[name]-cpuBefore[name]))
	}
	logf("all Ready after %s; CPU time used meanwhile: %s", allReady.Round(time.Millisecond), strings.Join(used, ", "))
	var per []string
	if requests, err := operatorRequests(ctx, c); err == nil {
		for _, verb := range slices.Sorted(maps.Keys(requests)) {
			if n := (requests[verb] - requestsBefore[verb]) / float64(o.endpoints); n >= 0.005 {
				per = append(per, fmt.Sprintf("%s %.2f", verb, n))
			}
		}
		logf("operator's API requests per endpoint: %s", strings.Join(per, ", "))
	}
	// The receiver's memory once its informers hold them all: it serves the
	// last endpoint (a wrong secret answers 403, not an unknown ID's 404).
	last := &agentsv1alpha1.WebhookEndpoint{}
	if err := c.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("ep-%05d", o.endpoints)}, last); err != nil {
		return nil, err
	}
	for !devcluster.Serves(ctx, last.Status.URL) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		time.Sleep(200 * time.Millisecond)
	}
	runtime.GC()
	rss, err := residentMiB(c.PID(devcluster.Receiver))
	if err != nil {
		return nil, err
	}
	logf("receiver resident memory %.1f MiB", rss)
	retained, err := measureRetainedRuns(ctx, c, o, ns, endpoints, logf)
	if err != nil {
		return nil, err
	}
	return []row{
		{fmt.Sprintf("%d endpoints: receiver resident memory", o.endpoints), "< 150 MiB", fmt.Sprintf("%.1f MiB", rss), rss < 150},
		{fmt.Sprintf("%d endpoints: operator brings all to Ready", o.endpoints), "< 2 min",
			fmt.Sprintf("%s from the first create (creating them took %s; CPU time meanwhile: %s; the operator's API requests per endpoint: %s)",
				allReady.Round(time.Second), created.Round(time.Second), strings.Join(used, ", "), strings.Join(per, ", ")), allReady < 2*time.Minute},
		retained,
	}, nil
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

// operatorRequests sums the operator's API requests so far by method and
// answer (rest_client_requests_total).
func operatorRequests(ctx context.Context, c *devcluster.Cluster) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.MetricsURL(devcluster.Operator), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	re := regexp.MustCompile(`(?m)^rest_client_requests_total\{code="(\d+)",host="[^"]*",method="(\w+)"\} (\S+)$`)
	for _, m := range re.FindAllSubmatch(b, -1) {
		v, _ := strconv.ParseFloat(string(m[3]), 64)
		out[string(m[2])+" "+string(m[1])] += v
	}
	return out, nil
}

// cpuSeconds is the CPU time (user and system) each of the API server,
// operator and receiver processes has used so far.
func cpuSeconds(c *devcluster.Cluster) map[string]float64 {
	out := map[string]float64{}
	for _, name := range []string{devcluster.KubeAPIServer, devcluster.Operator, devcluster.Receiver} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.PID(name)))
		if err != nil {
			continue
		}
		// Fields after "(comm)": state is the 1st, utime the 12th, stime the 13th.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		user, _ := strconv.ParseFloat(f[11], 64)
		sys, _ := strconv.ParseFloat(f[12], 64)
		out[name] = (user + sys) / 100 // USER_HZ
	}
	return out
}

func residentMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, errors.New("no VmRSS")
	}
	kb, err := strconv.ParseFloat(string(m[1]), 64)
	return kb / 1024, err
}
