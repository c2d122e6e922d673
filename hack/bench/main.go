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

// Command hookrun-bench is `make bench`: it runs hookrun as real processes
// (hack/devcluster), measures it against baselines measured in the same run
// on the same machine with the same load generator (hack/loadgen), prints a
// table and writes docs/benchmarks.md.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/hack/loadgen"
)

type options struct {
	root, assets, hookrun, demoAgent, workDir, out string
	workers, repeat, endpoints, runs               int
	duration                                       time.Duration
	serveBare                                      string
	only                                           map[string]bool
	pprof                                          bool
}

// wants tells whether measurement name is to run (--only).
func (o options) wants(name string) bool { return len(o.only) == 0 || o.only[name] }

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "repository root")
	flag.StringVar(&o.assets, "assets", filepath.Join("bin", "k8s", "v1.37.0"), "control plane binaries")
	flag.StringVar(&o.hookrun, "hookrun", filepath.Join("bin", "hookrun"), "hookrun binary")
	flag.StringVar(&o.demoAgent, "demo-agent", filepath.Join("bin", "demo-agent"), "demo agent binary")
	flag.StringVar(&o.workDir, "work-dir", ".bench", "logs and kubeconfigs")
	flag.StringVar(&o.out, "out", filepath.Join("docs", "benchmarks.md"), "report to write")
	flag.IntVar(&o.workers, "workers", 16, "concurrent requests of the load generator")
	flag.IntVar(&o.repeat, "repeat", 3, "runs of each measurement; the median is reported")
	flag.IntVar(&o.endpoints, "endpoints", 10000, "endpoints for the scale measurement")
	flag.IntVar(&o.runs, "runs", 50000, "finished runs the scale measurement stores over its endpoints before it reads the operator's memory")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of each load run")
	flag.StringVar(&o.serveBare, "serve-bare", "", "internal: serve the bare 202 baseline on this address")
	only := flag.String("only", "", "comma-separated measurements to run (rejections, senders, accepted, scale, labels, dispatch, fairness, largest, filters); empty: all, and docs/benchmarks.md is written")
	flag.BoolVar(&o.pprof, "pprof", false, "serve pprof from the operator and the receiver and print their addresses; the scale measurement also records a CPU profile of kube-apiserver")
	flag.Parse()
	if *only != "" {
		o.only = map[string]bool{}
		for _, m := range strings.Split(*only, ",") {
			m = strings.TrimSpace(m)
			if !slices.Contains([]string{"rejections", "senders", "accepted", "scale", "labels", "dispatch", "fairness", "largest", "filters"}, m) {
				log.Fatalf("--only: unknown measurement %q (rejections, senders, accepted, scale, labels, dispatch, fairness, largest, filters)", m)
			}
			o.only[m] = true
		}
	}
	if o.serveBare != "" {
		serveBare(o.serveBare)
		return
	}
	ctrl.SetLogger(logr.Discard())
	// Interrupted, it still stops what it started (etcd and kube-apiserver
	// would outlive it otherwise).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	err := run(ctx, o)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

// serveBare is the baseline: a bare net/http server answering every request
// with the receiver's 202 body, in a process of its own like the receiver.
func serveBare(addr string) {
	body := []byte(`{"runId":"bare-01m8114gv2mdj5yknfcdv1tk6x","status":"accepted"}`)
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Like the receiver, it leaves the body to net/http, which reads
		// a small one to keep the connection and closes it after a body it
		// was only announced (Expect: 100-continue, never asked for).
		// Under /read/ it reads the body first, as the receiver does to
		// verify a signature.
		if strings.HasPrefix(r.URL.Path, "/read/") {
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, agentsv1alpha1.MaxPayloadBytes+1))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write(body)
	})}
	log.Fatal(srv.ListenAndServe())
}

type row struct {
	what, goal, figure string
	ok                 bool
}

func run(ctx context.Context, o options) error {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	// The filters are measured in this process, before anything else runs
	// on the machine, and need no cluster.
	var filterRows []row
	if o.wants("filters") {
		r, err := measureFilters(o.repeat, logf)
		if err != nil {
			return err
		}
		filterRows = r
		if len(o.only) == 1 {
			return report(o, filterRows)
		}
	}
	addrs, err := devcluster.FreeAddresses(5)
	if err != nil {
		return err
	}
	// The accepted-calls measurement stores runs with the operator stopped:
	// nothing starts, so the backlog cap is lifted with the rate limit.
	receiverArgs := []string{"--rate-limit=1000000000", "--unauthenticated-rate-limit=1",
		"--max-queued-runs-per-endpoint=1000000000", "--max-queued-runs-per-agent=1000000000", "--zap-log-level=error"}
	operatorArgs := []string{"--zap-log-level=error"}
	if o.pprof {
		operatorArgs = append(operatorArgs, "--pprof-bind-address="+addrs[3])
		receiverArgs = append(receiverArgs, "--pprof-bind-address="+addrs[4])
		logf("pprof: operator http://%s/debug/pprof/, receiver http://%s/debug/pprof/", addrs[3], addrs[4])
	}
	logf("starting hookrun as processes (logs in %s/logs)", o.workDir)
	c, err := devcluster.Start(ctx, devcluster.Options{
		Root: o.root, Assets: o.assets, Hookrun: o.hookrun, DemoAgentBinary: o.demoAgent,
		WorkDir: o.workDir, ReceiverAddress: addrs[0], AgentAddress: addrs[1],
		ReceiverArgs:    receiverArgs,
		OperatorArgs:    operatorArgs,
		SampleNamespace: "bench",
	})
	if err != nil {
		return err
	}
	defer c.Stop()

	self, err := os.Executable()
	if err != nil {
		return err
	}
	bare := exec.Command(self, "--serve-bare", addrs[2]) //nolint:gosec // ourselves
	if err := bare.Start(); err != nil {
		return err
	}
	defer func() { _ = bare.Process.Kill(); _ = bare.Wait() }()
	if err := devcluster.WaitTCP(ctx, addrs[2]); err != nil {
		return err
	}

	ep, err := c.EndpointFor(ctx, "bench", "github-issues")
	if err != nil {
		return err
	}
	open, err := c.EndpointFor(ctx, "bench", "status-page")
	if err != nil {
		return err
	}
	hc := loadgen.Client(o.workers)
	post := func(url, secret string, body func() io.Reader, length int64) loadgen.Request {
		return func(ctx context.Context, _, _ int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body())
			if err != nil {
				return nil, err
			}
			req.ContentLength = length
			if length > agentsv1alpha1.MaxPayloadBytes {
				req.Header.Set("Expect", "100-continue") // the body goes only if asked for
			}
			req.Header.Set("Content-Type", "application/json")
			if secret != "" {
				req.Header.Set(agentsv1alpha1.SecretHeader, secret)
			}
			return req, nil
		}
	}
	measure := func(name string, next loadgen.Request) loadgen.Result {
		var rs []loadgen.Result
		for range o.repeat {
			rs = append(rs, loadgen.Run(ctx, hc, o.workers, o.duration, next))
		}
		m := loadgen.Median(rs)
		logf("%-22s %s", name, m)
		return m
	}
	unknownURL := ep.URL[:strings.Index(ep.URL, "/api/webhooks/")] + "/api/webhooks/" + randomID() + "/receive"

	var rows []row
	if o.wants("rejections") {
		rows = append(rows, measureRejections(ctx, hc, measure, post, "http://"+addrs[2], ep, open, unknownURL)...)
	}
	if o.wants("senders") {
		r, err := measureSenders(ctx, c, measure, "http://"+addrs[2], logf)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if o.wants("accepted") {
		r, err := measureAccepted(ctx, c, o, measure, post, ep, logf)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if o.wants("scale") {
		scale, err := measureScale(ctx, c, o, logf)
		if err != nil {
			return err
		}
		rows = append(rows, scale...)
	}
	if o.wants("labels") {
		r, err := measureTenantLabels(ctx, c, logf)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	if o.wants("dispatch") {
		latency, err := measureDispatch(ctx, o, logf)
		if err != nil {
			return err
		}
		rows = append(rows, latency...)
	}
	if o.wants("fairness") {
		r, err := measureFairness(ctx, o, logf)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if o.wants("largest") {
		r, err := measureLargest(ctx, c, o, logf)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	return report(o, append(rows, filterRows...))
}

type (
	measureFunc func(name string, next loadgen.Request) loadgen.Result
	postFunc    func(url, secret string, body func() io.Reader, length int64) loadgen.Request
)

func small() io.Reader { return strings.NewReader(`{"a":1}`) }

// measureRejections compares each rejection with the bare server answering
// the same request.
func measureRejections(ctx context.Context, hc *http.Client, measure measureFunc, post postFunc, bareURL string, ep, open devcluster.Endpoint, unknownURL string) []row {
	var rows []row
	baseline := measure("bare net/http 202", post(bareURL+"/api/webhooks/x/receive", "", small, 7))
	rows = append(rows, row{"baseline: bare net/http handler answering 202", "", baseline.String(), true})
	for _, s := range []struct {
		name, url, secret string
		body              func() io.Reader
		length            int64
		want              int
	}{
		{"unknown ID (401)", unknownURL, "", small, 7, http.StatusUnauthorized},
		{"wrong secret (403)", ep.URL, "not-the-secret", small, 7, http.StatusForbidden},
		// A body announced over 1 MiB, sent only on "100 Continue": the
		// receiver answers from the header alone, so it is never sent.
		{"413 by Content-Length", ep.URL, ep.Secret, func() io.Reader { return bytes.NewReader(bigBody) }, agentsv1alpha1.MaxPayloadBytes + 1, http.StatusRequestEntityTooLarge},
		{"429 (rate limited)", open.URL, "", small, 7, http.StatusTooManyRequests},
	} {
		if s.want == http.StatusTooManyRequests {
			// Fill the unauthenticated endpoint's one-per-minute window
			// (until a call gets 429); the runs that follow take under a
			// minute. A fresh client: a connection the 413s closed would
			// fail a POST without its reaching the receiver.
			fill := &http.Client{Timeout: 5 * time.Second}
			for range 10 {
				resp, err := fill.Post(open.URL, "application/json", small())
				if err == nil {
					_ = resp.Body.Close()
					if resp.StatusCode == http.StatusTooManyRequests {
						break
					}
				}
			}
		}
		base, baseName := baseline, "baseline"
		if s.length > agentsv1alpha1.MaxPayloadBytes {
			// No server can keep a connection whose announced body it
			// did not read: the bare server gets the same request.
			base = measure("bare, same request", post(bareURL+"/api/webhooks/x/receive", "", s.body, s.length))
			baseName = "the bare handler given the same request"
			rows = append(rows, row{"baseline: bare net/http handler answering 202 to the same announced 1 MiB + 1 body", "", base.String(), true})
		}
		r := measure(s.name, post(s.url, s.secret, s.body, s.length))
		ratio := r.Throughput() / base.Throughput()
		figure := fmt.Sprintf("%.2f (%s)", ratio, r)
		if s.length > agentsv1alpha1.MaxPayloadBytes {
			figure = fmt.Sprintf("%.2f (%s; %.2f of the keep-alive baseline)", ratio, r, r.Throughput()/baseline.Throughput())
		}
		rows = append(rows, row{"rejection: " + s.name, ">= 0.8 of " + baseName, figure, ratio >= 0.8 && r.Statuses[s.want] == r.Requests})
	}
	return rows
}

// measureAccepted measures accepted calls without the operator dispatching
// them, against the same two creates made straight through client-go, same
// concurrency, as the receiver's own service account.
func measureAccepted(ctx context.Context, c *devcluster.Cluster, o options, measure measureFunc, post postFunc, ep devcluster.Endpoint, logf func(string, ...any)) ([]row, error) {
	c.Kill(devcluster.Operator)
	accepted := measure("accepted (202)", post(ep.URL, ep.Secret, small, 7))
	direct, err := measureDirect(ctx, c.Kubeconfig(devcluster.Receiver), o, logf)
	if err != nil {
		return nil, err
	}
	ratio := accepted.Throughput() / direct.Throughput()
	rows := []row{
		{"baseline: AgentRun + Secret created with client-go", "", direct.String(), true},
		{"accepted calls (202, run and payload stored)", ">= 0.7 of baseline", fmt.Sprintf("%.2f (%s)", ratio, accepted), ratio >= 0.7 && accepted.Statuses[http.StatusAccepted] == accepted.Requests},
	}
	// The thousands of runs stored here would otherwise be dispatched
	// while the next measurements run, and be measured with them.
	if err := c.AdminClient.DeleteAllOf(ctx, &agentsv1alpha1.AgentRun{}, client.InNamespace(ep.Namespace)); err != nil {
		return nil, fmt.Errorf("deleting the runs the accepted calls stored: %w", err)
	}
	return rows, c.Start(ctx, devcluster.Operator)
}

var bigBody = make([]byte, agentsv1alpha1.MaxPayloadBytes+1)

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

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
	var alones, besides, ratios []float64
	for _, m := range regexp.MustCompile(`([\d.]+) p99-alone-ms\s+([\d.]+) p99-beside-ms\s+([\d.]+) p99-ratio`).FindAllSubmatch(out, -1) {
		alone, _ := strconv.ParseFloat(string(m[1]), 64)
		beside, _ := strconv.ParseFloat(string(m[2]), 64)
		ratio, _ := strconv.ParseFloat(string(m[3]), 64)
		alones, besides, ratios = append(alones, alone), append(besides, beside), append(ratios, ratio)
	}
	if len(ratios) == 0 {
		return nil, fmt.Errorf("no p99s in the benchmark output:\n%s", out)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	alone, beside, ratio := median(alones), median(besides), median(ratios)
	logf("202 to agent beside four tarpits of one namespace: p99 %.1f ms, alone %.1f ms (%.2f)", beside, alone, ratio)
	const held = "while four tarpit Agents of one namespace hold their runs (20 requests each held open)"
	return []row{
		{"another namespace's 202-to-agent p99 " + held, "< 1 s", fmt.Sprintf("%.1f ms", beside), beside < 1000},
		{"another namespace's 202-to-agent p99 " + held + ", against alone", "<= 2 of the same p99 without the tarpits",
			fmt.Sprintf("%.2f (p99 %.1f ms beside the tarpits, %.1f ms alone)", ratio, beside, alone), ratio <= 2},
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

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
