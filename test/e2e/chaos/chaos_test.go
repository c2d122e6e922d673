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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/membership"
	"github.com/hookrun/hookrun/hack/chaos"
	"github.com/hookrun/hookrun/hack/clusterinstall"
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
	// The suite's clients log nothing (controller-runtime warns, with a
	// stack, when no logger is set).
	ctrllog.SetLogger(logr.Discard())
	root := testenv.Root()
	hookrun, demoAgent, err := devcluster.Build(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := devcluster.FreeAddresses(2)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir(): the logs of a failed run must outlive it.
	workDir, err := os.MkdirTemp("", "hookrun-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("the processes' logs are kept in %s", filepath.Join(workDir, "logs"))
			return
		}
		_ = os.RemoveAll(workDir)
	}()
	c, err := devcluster.Start(ctx, devcluster.Options{
		Root: root, Assets: assets, Hookrun: hookrun, DemoAgentBinary: demoAgent,
		WorkDir:         workDir,
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

	t.Run("a starting API server's denials are not believed", func(t *testing.T) {
		membersSurviveRestarts(ctx, t, c)
		if err := c.Exited(); err != nil {
			t.Errorf("a process died on its own: %v", err)
		}
	})
}

// membersSurviveRestarts asks, as the receiver and the operator do but
// without their cache, whether a member may trigger an Agent, over and over while kube-apiserver
// is killed and started again. A starting API server denies every review
// until its RBAC caches are filled (with no evaluation error): believing
// those denials would pause endpoints and answer members 422.
func membersSurviveRestarts(ctx context.Context, t *testing.T, c *devcluster.Cluster) {
	const ns, member = "restarts", "member@example.com"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hookrun-agent-user"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: member}},
		},
	} {
		if err := c.AdminClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// As an administrator, whose own rights need no RBAC: with the
	// receiver's token the API server mostly refuses the review itself in
	// that window (403), which is an error already, and it shows the
	// denials only now and then.
	cfg := rest.CopyConfig(c.Admin)
	cfg.QPS, cfg.Burst = 1000, 1000 // client-go's default of 5/s would hide the short window of denials
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(cfg, client.Options{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	checker, err := membership.NewForAPIServer(cl, cfg, hc, clock.RealClock{}, 0)
	if err != nil {
		t.Fatal(err)
	}

	// The API server's RBAC cache learns of the binding a moment later.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := checker.IsMember(ctx, ns, "any", &agentsv1alpha1.Owner{User: member})
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("the member was never allowed: %v", err)
	}

	var allowed, denied, failed atomic.Int64
	var mu sync.Mutex
	why := map[string]int{} // the errors, by their text without addresses
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 { // the window of denials is short: sample it densely
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				callCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
				ok, err := checker.IsMember(callCtx, ns, "any", &agentsv1alpha1.Owner{User: member})
				cancel()
				switch {
				case err != nil:
					failed.Add(1)
					mu.Lock()
					why[errorKind(err)]++
					mu.Unlock()
				case ok:
					allowed.Add(1)
				default:
					denied.Add(1)
				}
			}
		})
	}
	waitFor := func(what string, cond func(context.Context) bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return cond(ctx), nil
		})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	for range 3 {
		failedBefore := failed.Load()
		c.Kill(devcluster.KubeAPIServer)
		waitFor("reviews to fail while kube-apiserver is down", func(context.Context) bool { return failed.Load() >= failedBefore+20 })
		restarted := time.Now()
		if err := c.Start(ctx, devcluster.KubeAPIServer); err != nil {
			t.Fatal(err)
		}
		// Up again until the member is allowed and the operator has kept
		// its lease, so the outages do not add up to its renew deadline.
		allowedBefore := allowed.Load()
		waitFor("the member to be allowed and the operator to renew its lease", func(ctx context.Context) bool {
			return allowed.Load() > allowedBefore && leaseRenewedSince(ctx, c, restarted)
		})
	}
	close(stop)
	wg.Wait()
	t.Logf("reviews while kube-apiserver restarted 3 times: %d allowed, %d failed (answered 503), %d denied; failures: %v",
		allowed.Load(), failed.Load(), denied.Load(), why)
	if denied.Load() > 0 {
		t.Errorf("a member was found not to be one %d times", denied.Load())
	}
	if allowed.Load() == 0 {
		t.Error("no review allowed the member")
	}
}

// testWriter sends the cluster's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// errorKind is err's text with its last cause cut to its first words.
func errorKind(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s[:min(len(s), 60)]
}

// leaseRenewedSince tells whether the operator's leader election Lease was
// renewed after t.
func leaseRenewedSince(ctx context.Context, c *devcluster.Cluster, t time.Time) bool {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: clusterinstall.Namespace, Name: "hookrun-operator.agents.hookrun.dev"} // main.go's LeaderElectionID
	if err := c.AdminClient.Get(ctx, key, lease); err != nil {
		return false
	}
	return lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(t)
}
