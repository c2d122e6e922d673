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
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// runMainEnv set to 1 makes the test binary run hookrun (main) with its
// arguments instead of the tests: a test starts hookrun as a process of its
// own, which SIGTERM stops as it stops a pod's.
const runMainEnv = "HOOKRUN_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// leaseName is main.go's LeaderElectionID.
const leaseName = "hookrun-operator.agents.hookrun.dev"

// leaseDuration is controller-runtime's default LeaseDuration, which the
// operator keeps: how long a standby waits for a lease that was not given up.
const leaseDuration = 15 * time.Second

// TestOperatorGivesUpItsLeaseWhenItStops: two operators elect a leader; the
// leader, stopped with SIGTERM, gives up its Lease before its process ends,
// and the standby leads well before the lease would have expired.
func TestOperatorGivesUpItsLeaseWhenItStops(t *testing.T) {
	kubeconfig, admin := startAPIServer(t)
	start := func(name string) *hookrunProcess {
		return startHookrun(t, name, "operator", "--kubeconfig="+kubeconfig, "--public-base-url=http://127.0.0.1:8443",
			"--leader-elect", "--leader-election-namespace=default", "--metrics-bind-address=0", "--health-probe-bind-address="+freeAddress(t))
	}
	holder := func() string {
		lease := &coordinationv1.Lease{}
		err := admin.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: leaseName}, lease)
		if apierrors.IsNotFound(err) || lease.Spec.HolderIdentity == nil {
			return ""
		} else if err != nil {
			t.Fatal(err)
		}
		return *lease.Spec.HolderIdentity
	}

	first := start("first")
	var leader string
	poll(t, 30*time.Second, "the first operator to take the lease", func() bool { leader = holder(); return leader != "" })
	second := start("second")
	// The second one stands by: it saw the lease held.
	gomega.NewWithT(t).Consistently(holder).WithTimeout(3*time.Second).WithPolling(200*time.Millisecond).
		Should(gomega.Equal(leader), "the lease passed from its holder while it ran")

	sigterm := time.Now()
	first.signal(t, syscall.SIGTERM)
	first.wait(t, 40*time.Second)
	stopped := time.Since(sigterm)
	if h := holder(); h == leader {
		t.Fatalf("the first operator ended %s after SIGTERM still holding the lease", stopped.Round(time.Millisecond))
	}
	poll(t, 2*leaseDuration, "the second operator to take the lease", func() bool { h := holder(); return h != "" && h != leader })
	handover := time.Since(sigterm)
	t.Logf("the first operator stopped %s after SIGTERM; the second one led %s after it", stopped.Round(time.Millisecond), handover.Round(time.Millisecond))
	if handover >= leaseDuration {
		t.Errorf("the second operator led %s after SIGTERM, no sooner than the lease duration (%s) would have let it", handover, leaseDuration)
	}
	second.signal(t, syscall.SIGTERM)
	second.wait(t, 40*time.Second)
}

// hookrunProcess is hookrun run as a process of the test binary.
type hookrunProcess struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error
}

// startHookrun starts hookrun with args as its own process; it is killed
// when the test ends, and its output is logged when the test failed.
func startHookrun(t *testing.T, name string, args ...string) *hookrunProcess {
	t.Helper()
	p := &hookrunProcess{name: name, log: filepath.Join(t.TempDir(), name+".log"), exited: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(os.Args[0], args...) //nolint:gosec // the test binary itself
	p.cmd.Env = append(os.Environ(), runMainEnv+"=1")
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		_ = out.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("%s's output:\n%s", name, b)
		}
	})
	return p
}

func (p *hookrunProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling %s: %v", p.name, err)
	}
}

// wait waits until the process has ended, successfully.
func (p *hookrunProcess) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("%s ended with %v", p.name, p.err)
		}
	case <-time.After(timeout):
		t.Fatalf("%s did not end within %s", p.name, timeout)
	}
}

// poll calls cond every 50 ms until it holds, failing the test after timeout.
func poll(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited %s for %s", timeout, what)
		case <-tick.C:
		}
	}
}
