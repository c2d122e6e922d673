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

// Package chaos_test is the short form of `make chaos` that `make test`
// runs: hookrun as real processes under a steady load of calls while the
// operator, the receiver and kube-apiserver are each killed with SIGKILL and
// started again; no call answered 202 may be lost.
package chaos_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookrun/hookrun/hack/chaos"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
)

func TestNoAcceptedRunIsLostWhenProcessesAreKilled(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	root := testenv.Root()
	hookrun, demoAgent, err := devcluster.Build(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := devcluster.FreeAddresses(2)
	if err != nil {
		t.Fatal(err)
	}
	c, err := devcluster.Start(ctx, devcluster.Options{
		Root: root, Assets: assets, Hookrun: hookrun, DemoAgentBinary: demoAgent,
		WorkDir:         filepath.Join(t.TempDir(), "cluster"),
		ReceiverAddress: addrs[0], AgentAddress: addrs[1],
		OperatorArgs: chaos.OperatorArgs, ReceiverArgs: chaos.ReceiverArgs,
		Log: testWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()

	rep, err := chaos.Run(ctx, c, chaos.Options{
		Namespace: "chaos", Endpoints: 4, Rate: 10, Workers: 8,
		Calm: 4 * time.Second, Down: 2 * time.Second, Settle: 2 * time.Minute,
		Log: t.Logf,
	})
	t.Logf("report:\n%s", rep.Table())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exited(); err != nil {
		t.Errorf("a process died on its own: %v", err)
	}
	if err := rep.OK(); err != nil {
		t.Error(err)
	}
	// Each target was down for a while under load: calls went unanswered
	// or were refused, so the kills happened while calls were in flight.
	if rep.NoAnswer+rep.Refused503 == 0 {
		t.Errorf("no call failed while processes were down: the kills did not happen under load")
	}
}

// testWriter sends the cluster's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
