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
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/hack/loadgen"
)

// measureDirect is the accepted-call baseline: workers create an AgentRun
// and its payload Secret in a closed loop, as the receiver does.
func measureDirect(ctx context.Context, kubeconfig string, o options, logf func(string, ...any)) (loadgen.Result, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return loadgen.Result{}, err
	}
	cfg.QPS, cfg.Burst = -1, 0 // the receiver's client is not rate limited either
	cl, err := client.New(cfg, client.Options{Scheme: devcluster.Scheme()})
	if err != nil {
		return loadgen.Result{}, err
	}
	var seq atomic.Int64
	var rs []loadgen.Result
	for range o.repeat {
		rctx, cancel := context.WithTimeout(ctx, o.duration)
		var mu sync.Mutex
		var lat []time.Duration
		res := loadgen.Result{Statuses: map[int]int{}}
		var wg sync.WaitGroup
		start := time.Now()
		for range o.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for rctx.Err() == nil {
					name := fmt.Sprintf("direct-%08d", seq.Add(1))
					t := time.Now()
					run := &agentsv1alpha1.AgentRun{
						ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, Labels: map[string]string{agentsv1alpha1.LabelEndpoint: "direct"}},
						Spec: agentsv1alpha1.AgentRunSpec{
							EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "direct"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
							Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun, Trust: agentsv1alpha1.TrustStandard,
							Payload:    &agentsv1alpha1.PayloadReference{SecretName: name, Bytes: 7, ContentType: "application/json"},
							ReceivedAt: metav1.NewTime(t),
						},
					}
					err := cl.Create(rctx, run)
					if err == nil {
						err = cl.Create(rctx, &corev1.Secret{
							ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, OwnerReferences: []metav1.OwnerReference{{
								APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: name, UID: run.UID,
							}}},
							Type: agentsv1alpha1.SecretTypeWebhookPayload,
							Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte(`{"a":1}`)},
						})
					}
					if rctx.Err() != nil {
						break
					}
					mu.Lock()
					lat = append(lat, time.Since(t))
					if err != nil {
						res.Statuses[0]++
					} else {
						res.Statuses[http.StatusCreated]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		cancel()
		res.Elapsed = time.Since(start)
		res.Requests = len(lat)
		slices.Sort(lat)
		if len(lat) > 0 {
			res.P50, res.P99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
		}
		rs = append(rs, res)
	}
	m := loadgen.Median(rs)
	logf("%-22s %s", "client-go run+secret", m)
	return m, nil
}

// measureDispatch runs the 202-to-agent benchmark of the controllers
// package (a real API server and operator, an in-process A2A agent).
func measureDispatch(ctx context.Context, o options, logf func(string, ...any)) ([]row, error) {
	out, err := goBench(ctx, o, "BenchmarkQueueToSend")
	if err != nil {
		return nil, err
	}
	var p50s, p99s []float64
	for _, m := range regexp.MustCompile(`([\d.]+) p50-ms\s+([\d.]+) p99-ms`).FindAllSubmatch(out, -1) {
		p50, _ := strconv.ParseFloat(string(m[1]), 64)
		p99, _ := strconv.ParseFloat(string(m[2]), 64)
		p50s, p99s = append(p50s, p50), append(p99s, p99)
	}
	if len(p50s) == 0 {
		return nil, fmt.Errorf("no p50/p99 in the benchmark output:\n%s", out)
	}
	slices.Sort(p50s)
	slices.Sort(p99s)
	p50, p99 := p50s[len(p50s)/2], p99s[len(p99s)/2]
	logf("202 to agent: p50 %.1f ms, p99 %.1f ms", p50, p99)
	return []row{
		{"202 to agent receiving the message: p50", "< 200 ms", fmt.Sprintf("%.1f ms", p50), p50 < 200},
		{"202 to agent receiving the message: p99", "< 1 s", fmt.Sprintf("%.1f ms", p99), p99 < 1000},
	}, nil
}

// measureFairness runs the benchmark of the controllers package that
// measures one Agent's 202 to agent alone and then beside another tenant's
// tarpit agent, in the same run, and reports the ratio of the p99s.
func measureFairness(ctx context.Context, o options, logf func(string, ...any)) ([]row, error) {
	out, err := goBench(ctx, o, "BenchmarkQueueToSendBesideTarpit")
	if err != nil {
		return nil, err
	}
	var alones, besides, ratios, twos []float64
	// go test prints a benchmark's metrics in the order of their units.
	for _, m := range regexp.MustCompile(`([\d.]+) p99-alone-ms\s+([\d.]+) p99-beside-ms\s+([\d.]+) p99-beside-two-ms\s+([\d.]+) p99-ratio`).FindAllSubmatch(out, -1) {
		alone, _ := strconv.ParseFloat(string(m[1]), 64)
		beside, _ := strconv.ParseFloat(string(m[2]), 64)
		two, _ := strconv.ParseFloat(string(m[3]), 64)
		ratio, _ := strconv.ParseFloat(string(m[4]), 64)
		alones, besides, ratios, twos = append(alones, alone), append(besides, beside), append(ratios, ratio), append(twos, two)
	}
	if len(ratios) == 0 {
		return nil, fmt.Errorf("no p99s in the benchmark output:\n%s", out)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	alone, beside, ratio, two := median(alones), median(besides), median(ratios), median(twos)
	logf("202 to agent beside four tarpits of one namespace: p99 %.1f ms, alone %.1f ms (%.2f); beside two such namespaces: %.1f ms", beside, alone, ratio, two)
	const held = "while four tarpit Agents of one namespace hold their runs (20 requests each held open)"
	return []row{
		{"another namespace's 202-to-agent p99 " + held, "< 1 s", fmt.Sprintf("%.1f ms", beside), beside < 1000},
		{"another namespace's 202-to-agent p99 " + held + ", against alone", "<= 2 of the same p99 without the tarpits",
			fmt.Sprintf("%.2f (p99 %.1f ms beside the tarpits, %.1f ms alone)", ratio, beside, alone), ratio <= 2},
		{"a third namespace's 202-to-agent p99 while two namespaces' tarpits (four Agents each) hold their shares", "< 1 s",
			fmt.Sprintf("%.1f ms", two), two < 1000},
	}, nil
}

// goBench runs one benchmark of the controllers package (a real API
// server and operator, in-process agents) --repeat times, 200 runs each.
func goBench(ctx context.Context, o options, name string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^"+name+"$", "-benchtime", "200x",
		"-count", strconv.Itoa(o.repeat), "./controllers/")
	cmd.Dir = o.root
	cmd.Env = append(os.Environ(), "KUBEBUILDER_ASSETS="+mustAbs(o.assets))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go test -bench %s: %w\n%s", name, err, out)
	}
	return out, nil
}
