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
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

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
	only := flag.String("only", "", "comma-separated measurements to run (rejections, senders, accepted, scale, labels, dispatch, fairness, largest, filters, fields, oidc, verdicts, store); empty: all, and docs/benchmarks.md is written")
	flag.BoolVar(&o.pprof, "pprof", false, "serve pprof from the operator and the receiver and print their addresses; the scale measurement also records a CPU profile of kube-apiserver")
	flag.Parse()
	if *only != "" {
		o.only = map[string]bool{}
		for _, m := range strings.Split(*only, ",") {
			m = strings.TrimSpace(m)
			if !slices.Contains([]string{"rejections", "senders", "accepted", "scale", "labels", "dispatch", "fairness", "largest", "filters", "fields", "oidc", "verdicts", "store"}, m) {
				log.Fatalf("--only: unknown measurement %q (rejections, senders, accepted, scale, labels, dispatch, fairness, largest, filters, fields, oidc, verdicts, store)", m)
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
	}
	if o.wants("fields") {
		r, err := measureFields(o.repeat, logf)
		if err != nil {
			return err
		}
		filterRows = append(filterRows, r...)
	}
	if len(o.only) > 0 && !slices.ContainsFunc(slices.Collect(maps.Keys(o.only)), func(m string) bool { return m != "filters" && m != "fields" }) {
		return report(o, filterRows)
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
	if o.wants("oidc") {
		r, err := measureOIDC(ctx, c, measure, logf)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if o.wants("verdicts") {
		r, err := measureVerdicts(ctx, c, logf)
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
	if o.wants("store") {
		r, err := measureStore(ctx, c, o, post, ep, logf)
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
		r, err := measureTenantMetadata(ctx, c, logf)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
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

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
