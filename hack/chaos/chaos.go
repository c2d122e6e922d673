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

// Package chaos is hookrun's reliability check: a steady load of calls that
// should be accepted while the operator, the receiver and kube-apiserver are
// killed with SIGKILL and started again, one after another. Afterwards every
// call that got a 202 must have an AgentRun that reached success, and the
// agent must have received that run's message (messageId = the run's UID).
// `make chaos` runs it long (hack/chaos/cmd); the end-to-end tests run it
// short in `make test` (test/e2e/chaos).
package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// Flags the operator and the receiver need for a run: no rate limit or
// backlog cap in the way of the load (with the Agent's 4 concurrent runs the
// demo agent only just keeps up with 20 calls/s, so each operator outage
// leaves a backlog that the default cap of 100 per endpoint answers with 429
// after the second one; the cap is tested in receiver/), and no history
// pruning that would delete the runs the check looks for. The operator elects a leader, as the chart runs it: a
// restarted operator waits for the lease of the one killed. An API server
// outage longer than the renew deadline (10 s) would cost it the lease (it
// then exits, for its Deployment to start it again); the ones here are
// shorter, and an exit fails the run.
var (
	OperatorArgs = []string{"--run-history-limit=0", "--leader-elect", "--leader-election-namespace=" + clusterinstall.Namespace}
	ReceiverArgs = []string{"--rate-limit=1000000", "--max-queued-runs-per-endpoint=1000000", "--max-queued-runs-per-agent=1000000"}
)

// Targets are the processes killed, in this order.
var Targets = []string{devcluster.Operator, devcluster.Receiver, devcluster.KubeAPIServer}

// Options shape one run.
type Options struct {
	// Namespace is created for the run's Agent and endpoints.
	Namespace string
	// Endpoints share the load.
	Endpoints int
	// Rate is calls per second, in total, from up to Workers at once.
	Rate    float64
	Workers int
	// Calm is the time under load before the first kill, after each
	// restart, and after the last.
	Calm time.Duration
	// Down is how long a killed process stays down.
	Down time.Duration
	// Targets are killed in turn (default: Targets).
	Targets []string
	// Recover bounds the wait, after a restart, for the first call accepted
	// (default 30s): the time it took is a figure of the report, not a test.
	Recover time.Duration
	// Settle bounds the wait for accepted runs to finish once the load stops.
	Settle time.Duration
	// Log receives progress lines (may be nil).
	Log func(format string, args ...any)
}

// endpoint is one target of the load.
type endpoint struct{ url, secret string }

// Run sets up an Agent (an in-process demo agent that counts messages by
// messageId) and endpoints in opts.Namespace of c, sends the load, kills
// and restarts opts.Targets in turn, and checks every accepted run.
func Run(ctx context.Context, c *devcluster.Cluster, opts Options) (Report, error) {
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	if len(opts.Targets) == 0 {
		opts.Targets = Targets
	}
	if opts.Recover == 0 {
		opts.Recover = 30 * time.Second
	}
	agent := demoagent.New()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Report{}, err
	}
	srv := &http.Server{Handler: agent, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer func() { _ = srv.Close() }()

	eps, err := setUp(ctx, c, opts, "http://"+l.Addr().String()+"/")
	if err != nil {
		return Report{}, err
	}
	opts.Log("load: %.0f calls/s over %d endpoints; killing %s in turn", opts.Rate, len(eps), strings.Join(opts.Targets, ", "))

	ld := &load{opts: opts, eps: eps, accepted: map[string]bool{}, answers: map[int]string{}, rep: Report{Other: map[int]int{}}}
	loadCtx, stopLoad := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() { ld.run(loadCtx); close(done) }()
	var events, recovered, notRecovered []string
	event := func(format string, args ...any) {
		e := fmt.Sprintf("%5.1fs ", time.Since(start).Seconds()) + fmt.Sprintf(format, args...)
		opts.Log("%s", e)
		events = append(events, e)
	}
	err = func() error {
		if err := sleep(ctx, opts.Calm); err != nil {
			return err
		}
		for _, target := range opts.Targets {
			// A process that ended on its own (a data race halts a -race
			// build) would be restarted below and its end forgotten.
			if err := c.Exited(); err != nil {
				return err
			}
			event("kill -9 %s", target)
			c.Kill(target)
			if err := sleep(ctx, opts.Down); err != nil {
				return err
			}
			event("start %s", target)
			if err := c.Start(ctx, target); err != nil {
				return err
			}
			event("%s ready", target)
			ready := time.Now()
			if err := sleep(ctx, opts.Calm); err != nil {
				return err
			}
			took, ok, err := untilAccepted(ctx, ld, ready, opts.Recover)
			if err != nil {
				return err
			}
			if !ok {
				notRecovered = append(notRecovered, fmt.Sprintf("%s (none within %s of its restart)", target, opts.Recover))
				continue
			}
			recovered = append(recovered, fmt.Sprintf("%s %.1fs", target, took.Seconds()))
		}
		return nil
	}()
	stopLoad()
	<-done
	rep := ld.rep
	rep.Events, rep.Recovered, rep.NotRecovered, rep.Load = events, recovered, notRecovered, time.Since(start)
	if err != nil {
		return rep, err
	}
	opts.Log("load stopped: %d sent, %d accepted; waiting for the runs to finish", rep.Sent, rep.Accepted)
	settleStart := time.Now()
	runs, err := settle(ctx, c.AdminClient, opts)
	rep.Settled = time.Since(settleStart)
	if err != nil {
		return rep, err
	}
	check(ctx, c.AdminClient, &rep, ld, runs, agent)
	return rep, nil
}

const (
	agentName = "chaos"
	ownerUser = "chaos-owner@example.com"
)

// setUp makes the namespace, lets the owner trigger the Agent, creates the
// Agent and the endpoints, and returns once the receiver serves them all.
func setUp(ctx context.Context, c *devcluster.Cluster, opts Options, agentURL string) ([]endpoint, error) {
	ns := opts.Namespace
	cl := c.AdminClient
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chaos-owner"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hookrun-agent-user"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: ownerUser}},
		},
		&agentsv1alpha1.Agent{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentName},
			Spec: agentsv1alpha1.AgentSpec{
				A2A:               agentsv1alpha1.A2AEndpoint{URL: agentURL},
				MaxConcurrentRuns: 16,
			},
		},
	}
	for i := range opts.Endpoints {
		objs = append(objs, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("chaos-%03d", i)},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: agentName}, Prompt: "Count this call.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Owner:          &agentsv1alpha1.Owner{User: ownerUser},
			},
		})
	}
	for _, o := range objs {
		if err := cl.Create(ctx, o); err != nil {
			return nil, fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	var eps []endpoint
	for i := range opts.Endpoints {
		name := fmt.Sprintf("chaos-%03d", i)
		var ep devcluster.Endpoint
		err := devcluster.WaitFor(ctx, "endpoint "+ns+"/"+name+" to have a secret the receiver knows", func(ctx context.Context) (string, error) {
			var err error
			if ep, err = c.EndpointFor(ctx, ns, name); err != nil {
				return "", err
			}
			if ep.Secret == "" {
				return "no secret yet", nil
			}
			if code, err := devcluster.Probe(ctx, ep.URL); err != nil || code != http.StatusForbidden {
				return fmt.Sprintf("not served by the receiver yet (probe answered %d, error %v)", code, err), nil
			}
			return "", nil
		})
		if err != nil {
			return nil, err
		}
		eps = append(eps, endpoint{url: ep.URL, secret: ep.Secret})
	}
	return eps, nil
}

// untilAccepted waits until a call got a 202 at ready or later, bounded by
// within from ready, and returns how long after ready it came.
func untilAccepted(ctx context.Context, ld *load, ready time.Time, within time.Duration) (time.Duration, bool, error) {
	for {
		if at, ok := ld.firstAcceptedSince(ready); ok {
			return at.Sub(ready), true, nil
		}
		if time.Since(ready) >= within {
			return 0, false, nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return 0, false, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
