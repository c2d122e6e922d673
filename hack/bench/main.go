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

// measurementNames are the measurements --only names.
var measurementNames = []string{"rejections", "senders", "accepted", "scale", "labels", "dispatch", "fairness", "largest", "filters", "fields", "oidc", "verdicts", "store"}

// inProcess are the measurements made in the bench's own process, before
// anything else runs on the machine, with no cluster.
var inProcess = []string{"filters", "fields"}

// parseOnly reads --only: the set of measurements named, nil for all.
func parseOnly(only string) (map[string]bool, error) {
	if only == "" {
		return nil, nil
	}
	set := map[string]bool{}
	for _, m := range strings.Split(only, ",") {
		m = strings.TrimSpace(m)
		if !slices.Contains(measurementNames, m) {
			return nil, fmt.Errorf("--only: unknown measurement %q (%s)", m, strings.Join(measurementNames, ", "))
		}
		set[m] = true
	}
	return set, nil
}

// wants tells whether measurement name is to run (--only).
func (o options) wants(name string) bool { return len(o.only) == 0 || o.only[name] }

// needsCluster tells whether a measurement to run needs hookrun's processes.
func (o options) needsCluster() bool {
	if len(o.only) == 0 {
		return true
	}
	for m := range o.only {
		if !slices.Contains(inProcess, m) {
			return true
		}
	}
	return false
}

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
	only := flag.String("only", "", "comma-separated measurements to run ("+strings.Join(measurementNames, ", ")+"); empty: all, and docs/benchmarks.md is written")
	flag.BoolVar(&o.pprof, "pprof", false, "serve pprof from the operator and the receiver and print their addresses; the scale measurement also records a CPU profile of kube-apiserver")
	flag.Parse()
	var err error
	if o.only, err = parseOnly(*only); err != nil {
		log.Fatal(err)
	}
	if o.serveBare != "" {
		serveBare(o.serveBare)
		return
	}
	ctrl.SetLogger(logr.Discard())
	// Interrupted, it still stops what it started (etcd and kube-apiserver
	// would outlive it otherwise).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	err = run(ctx, o)
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

// run makes the measurements o asks for and reports them.
func run(ctx context.Context, o options) error {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	inProcessRows, err := measureInProcess(o, logf)
	if err != nil {
		return err
	}
	if !o.needsCluster() {
		return report(o, inProcessRows)
	}
	b, stop, err := startBench(ctx, o, logf)
	if err != nil {
		return err
	}
	defer stop()
	rows, err := b.measureAll(ctx)
	if err != nil {
		return err
	}
	return report(o, append(rows, inProcessRows...))
}

// measureInProcess makes the measurements that run in the bench's own
// process (filters, fields), before anything else runs on the machine.
func measureInProcess(o options, logf func(string, ...any)) ([]row, error) {
	var rows []row
	if o.wants("filters") {
		r, err := measureFilters(o.repeat, logf)
		if err != nil {
			return nil, err
		}
		rows = r
	}
	if o.wants("fields") {
		r, err := measureFields(o.repeat, logf)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// bench is what the measurements against hookrun's processes share.
type bench struct {
	o        options
	logf     func(string, ...any)
	c        *devcluster.Cluster
	hc       *http.Client
	bareURL  string
	ep, open devcluster.Endpoint
	// unknownURL is the receive route of an endpoint ID no endpoint has.
	unknownURL string
}

// startBench starts hookrun as processes beside the bare baseline server,
// and returns the function that stops them.
func startBench(ctx context.Context, o options, logf func(string, ...any)) (*bench, func(), error) {
	addrs, err := devcluster.FreeAddresses(5)
	if err != nil {
		return nil, nil, err
	}
	receiverArgs, operatorArgs := processArgs(o.pprof, addrs[3], addrs[4])
	if o.pprof {
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
		return nil, nil, err
	}
	stopBare, err := startBare(ctx, addrs[2])
	if err != nil {
		c.Stop()
		return nil, nil, err
	}
	stop := func() { stopBare(); c.Stop() }
	b := &bench{o: o, logf: logf, c: c, hc: loadgen.Client(o.workers), bareURL: "http://" + addrs[2]}
	if b.ep, err = c.EndpointFor(ctx, "bench", "github-issues"); err != nil {
		stop()
		return nil, nil, err
	}
	if b.open, err = c.EndpointFor(ctx, "bench", "status-page"); err != nil {
		stop()
		return nil, nil, err
	}
	b.unknownURL = unknownEndpointURL(b.ep.URL, randomID())
	return b, stop, nil
}

// processArgs are the receiver's and the operator's flags, with pprof on
// the two addresses if asked for. The accepted-calls measurement stores
// runs with the operator stopped: nothing starts, so the backlog cap is
// lifted with the rate limit.
func processArgs(pprof bool, operatorPprof, receiverPprof string) (receiver, operator []string) {
	receiver = []string{"--rate-limit=1000000000", "--unauthenticated-rate-limit=1",
		"--max-queued-runs-per-endpoint=1000000000", "--max-queued-runs-per-agent=1000000000", "--zap-log-level=error"}
	operator = []string{"--zap-log-level=error"}
	if pprof {
		operator = append(operator, "--pprof-bind-address="+operatorPprof)
		receiver = append(receiver, "--pprof-bind-address="+receiverPprof)
	}
	return receiver, operator
}

// startBare starts the bare baseline server (this binary, --serve-bare) on
// addr, and returns the function that stops it.
func startBare(ctx context.Context, addr string) (func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	bare := exec.Command(self, "--serve-bare", addr) //nolint:gosec // ourselves
	if err := bare.Start(); err != nil {
		return nil, err
	}
	stop := func() { _ = bare.Process.Kill(); _ = bare.Wait() }
	if err := devcluster.WaitTCP(ctx, addr); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// unknownEndpointURL is endpointURL with its endpoint ID replaced by id.
func unknownEndpointURL(endpointURL, id string) string {
	return endpointURL[:strings.Index(endpointURL, "/api/webhooks/")] + "/api/webhooks/" + id + "/receive"
}

// post makes a POST of body (its length announced as length) to url, with
// the secret header if secret is set; a body over the limit is sent only
// if the server asks for it (Expect: 100-continue).
func post(url, secret string, body func() io.Reader, length int64) loadgen.Request {
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

// measure runs next o.repeat times and returns the median run.
func (b *bench) measure(ctx context.Context, name string, next loadgen.Request) loadgen.Result {
	var rs []loadgen.Result
	for range b.o.repeat {
		rs = append(rs, loadgen.Run(ctx, b.hc, b.o.workers, b.o.duration, next))
	}
	m := loadgen.Median(rs)
	b.logf("%-22s %s", name, m)
	return m
}

// measureAll makes the measurements against the processes that o asks for,
// in this order.
func (b *bench) measureAll(ctx context.Context) ([]row, error) {
	measure := func(name string, next loadgen.Request) loadgen.Result { return b.measure(ctx, name, next) }
	c, o, logf := b.c, b.o, b.logf
	steps := []struct {
		name string
		run  func() ([]row, error)
	}{
		{"rejections", func() ([]row, error) {
			return measureRejections(ctx, b.hc, measure, post, b.bareURL, b.ep, b.open, b.unknownURL), nil
		}},
		{"senders", func() ([]row, error) { return measureSenders(ctx, c, measure, b.bareURL, logf) }},
		{"oidc", func() ([]row, error) { return measureOIDC(ctx, c, measure, logf) }},
		{"verdicts", func() ([]row, error) { return measureVerdicts(ctx, c, logf) }},
		{"accepted", func() ([]row, error) { return measureAccepted(ctx, c, o, measure, post, b.ep, logf) }},
		{"store", func() ([]row, error) { return measureStore(ctx, c, o, post, b.ep, logf) }},
		{"scale", func() ([]row, error) { return measureScale(ctx, c, o, logf) }},
		{"labels", func() ([]row, error) { return measureTenantMetadata(ctx, c, logf) }},
		{"dispatch", func() ([]row, error) { return measureDispatch(ctx, o, logf) }},
		{"fairness", func() ([]row, error) { return measureFairness(ctx, o, logf) }},
		{"largest", func() ([]row, error) {
			r, err := measureLargest(ctx, c, o, logf)
			return []row{r}, err
		}},
	}
	var rows []row
	for _, s := range steps {
		if !o.wants(s.name) {
			continue
		}
		r, err := s.run()
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
