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

// Command hookrun-chaos is `make chaos`: hookrun as real processes
// (hack/devcluster) under a steady load of calls while the operator, the
// receiver and kube-apiserver are killed with SIGKILL and started again, in
// turn, for several rounds. It prints the counts and writes them into
// docs/benchmarks.md; it exits non-zero if an accepted run was lost.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/hookrun/hookrun/hack/chaos"
	"github.com/hookrun/hookrun/hack/devcluster"
)

func main() {
	var (
		root, assets, hookrun, demoAgent, workDir, out string
		rounds                                         int
		o                                              = chaos.Options{Namespace: "chaos"}
	)
	flag.StringVar(&root, "root", ".", "repository root")
	flag.StringVar(&assets, "assets", filepath.Join("bin", "k8s", "v1.37.0"), "control plane binaries")
	flag.StringVar(&hookrun, "hookrun", filepath.Join("bin", "hookrun"), "hookrun binary")
	flag.StringVar(&demoAgent, "demo-agent", filepath.Join("bin", "demo-agent"), "demo agent binary")
	flag.StringVar(&workDir, "work-dir", ".chaos", "logs and kubeconfigs")
	flag.StringVar(&out, "out", filepath.Join("docs", "benchmarks.md"), "report to write the counts into")
	flag.IntVar(&o.Endpoints, "endpoints", 10, "endpoints the load is spread over")
	flag.Float64Var(&o.Rate, "rate", 20, "calls per second")
	flag.IntVar(&o.Workers, "workers", 16, "calls in flight at most")
	flag.DurationVar(&o.Calm, "calm", 10*time.Second, "load before the first kill, after each restart")
	flag.DurationVar(&o.Down, "down", 5*time.Second, "how long a killed process stays down")
	flag.DurationVar(&o.Settle, "settle", 5*time.Minute, "how long the runs may take to finish after the load")
	flag.IntVar(&rounds, "rounds", 3, "times each of operator, receiver, kube-apiserver is killed")
	flag.Parse()
	for range rounds {
		o.Targets = append(o.Targets, chaos.Targets...)
	}
	o.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	ctrl.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	addrs, err := devcluster.FreeAddresses(2)
	if err != nil {
		log.Fatal(err)
	}
	c, err := devcluster.Start(ctx, devcluster.Options{
		Root: root, Assets: assets, Hookrun: hookrun, DemoAgentBinary: demoAgent,
		WorkDir: workDir, ReceiverAddress: addrs[0], AgentAddress: addrs[1],
		OperatorArgs: chaos.OperatorArgs, ReceiverArgs: chaos.ReceiverArgs,
		Log: os.Stderr,
	})
	if err != nil {
		log.Fatal(err)
	}
	rep, err := chaos.Run(ctx, c, o)
	exited := c.Exited()
	c.Stop()
	if err != nil {
		log.Fatal(err)
	}
	section := fmt.Sprintf("%s\n\nWritten by `make chaos` (`hack/chaos`) on %s: %.0f calls/s over %d endpoints (authenticated, "+
		"small JSON bodies), %d in flight at most; %s killed with SIGKILL in turn, each down for %s, %s of load between kills; "+
		"the operator, receiver and API server run as in `make dev`, but the operator with leader election as the chart runs it "+
		"(a new operator waits up to 15 s for the killed one's lease to expire). The agent is an in-process demo "+
		"agent that counts messages by messageId.\n\n%s\nKills and restarts (seconds since the load began):\n\n```\n%s\n```\n\n"+
		"Command: `make chaos` (`bin/hookrun-chaos --rounds %d --rate %g --endpoints %d --calm %s --down %s`).\n",
		chaos.ReportHeading, time.Now().UTC().Format("2006-01-02"), o.Rate, o.Endpoints, o.Workers,
		strings.Join(chaos.Targets, ", "), o.Down, o.Calm, rep.Table(), strings.Join(rep.Events, "\n"),
		rounds, o.Rate, o.Endpoints, o.Calm, o.Down)
	fmt.Print("\n" + section)
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	doc, _ := os.ReadFile(out)
	bench, _, hand := chaos.SplitDoc(doc)
	if len(bench) > 0 && !strings.HasSuffix(string(bench), "\n\n") {
		bench = append(bench, '\n')
	}
	doc = append(bench, section...)
	if len(hand) > 0 {
		doc = append(append(doc, '\n'), hand...)
	}
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		log.Fatal(err)
	}
	if exited != nil {
		log.Fatalf("a process died on its own: %v", exited)
	}
	if err := rep.OK(); err != nil {
		log.Fatal(err)
	}
}
