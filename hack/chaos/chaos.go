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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
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
	OperatorArgs = []string{"--run-history-limit=0", "--leader-elect", "--leader-election-namespace=" + testenv.Namespace}
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
	// Settle bounds the wait for accepted runs to finish once the load stops.
	Settle time.Duration
	// Log receives progress lines (may be nil).
	Log func(format string, args ...any)
}

// Report counts what happened.
type Report struct {
	// Sent calls; Accepted got 202; Refused503 got 503 with Retry-After
	// (nothing stored, the caller retries); NoAnswer got no HTTP answer
	// (the receiver was down, or died or timed out mid-call).
	Sent, Accepted, Refused503, NoAnswer int
	// Other counts any other status (none is expected).
	Other map[int]int
	// Lost are accepted runIds whose AgentRun is missing or did not reach
	// success, with what was found.
	Lost []string
	// Duplicated is how many accepted runs' messages reached the agent more
	// than once (the same messageId each time); Deliveries counts them all.
	Duplicated, Deliveries int
	// NotDelivered are successful runs whose message the agent never got.
	NotDelivered []string
	// Unacknowledged counts AgentRuns whose call got no 202, by state and
	// by what the caller got: the receiver died after storing the run (no
	// answer), or the API server lost its answer to a write that it had
	// made, and the cleanup failed too (503).
	Unacknowledged map[string]int
	// NotRecovered names the restarts after which no call was accepted
	// before the next kill.
	NotRecovered []string
	// Events are the kills and restarts, with times since the load began.
	Events []string
	// Load is how long the load ran; Settled how long the runs took to
	// finish after it stopped.
	Load, Settled time.Duration
}

// OK tells whether no accepted run was lost.
func (r Report) OK() error {
	var errs []error
	if r.Accepted == 0 {
		errs = append(errs, errors.New("no call was accepted"))
	}
	if len(r.Lost) > 0 {
		errs = append(errs, fmt.Errorf("%d accepted runs lost: %s", len(r.Lost), strings.Join(first(r.Lost, 10), "; ")))
	}
	if len(r.NotDelivered) > 0 {
		errs = append(errs, fmt.Errorf("%d successful runs never reached the agent: %s", len(r.NotDelivered), strings.Join(first(r.NotDelivered, 10), ", ")))
	}
	if len(r.Other) > 0 {
		errs = append(errs, fmt.Errorf("unexpected answers: %v", r.Other))
	}
	if len(r.NotRecovered) > 0 {
		errs = append(errs, fmt.Errorf("no call was accepted after restarting %s", strings.Join(r.NotRecovered, ", ")))
	}
	return errors.Join(errs...)
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// Table is the report as Markdown table rows.
func (r Report) Table() string {
	var b strings.Builder
	b.WriteString("| count | value |\n|---|---|\n")
	row := func(k string, v any) { fmt.Fprintf(&b, "| %s | %v |\n", k, v) }
	row("calls sent", r.Sent)
	row("accepted (202)", r.Accepted)
	row("refused with 503 and Retry-After", r.Refused503)
	row("no answer (receiver down or killed mid-call)", r.NoAnswer)
	if len(r.Other) > 0 {
		row("other answers", fmt.Sprint(r.Other))
	}
	row("**lost** (202 but no successful run)", fmt.Sprintf("**%d**", len(r.Lost)))
	row("accepted runs whose message arrived twice or more (same messageId; the agent dedupes)", r.Duplicated)
	row("deliveries to the agent for accepted runs", r.Deliveries)
	row("successful runs the agent never received", len(r.NotDelivered))
	un := []string{}
	for _, k := range slices.Sorted(maps.Keys(r.Unacknowledged)) {
		un = append(un, fmt.Sprintf("%d %s", r.Unacknowledged[k], k))
	}
	if len(un) == 0 {
		un = append(un, "0")
	}
	row("runs stored without a 202 (by state, and what the caller got)", strings.Join(un, "; "))
	row("load / settle time", fmt.Sprintf("%s / %s", r.Load.Round(time.Second), r.Settled.Round(time.Second)))
	return b.String()
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
	var events, notRecovered []string
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
			acceptedBefore := ld.acceptedSoFar()
			if err := sleep(ctx, opts.Calm); err != nil {
				return err
			}
			if ld.acceptedSoFar() == acceptedBefore {
				notRecovered = append(notRecovered, fmt.Sprintf("%s (at %.0fs)", target, time.Since(start).Seconds()))
			}
		}
		return nil
	}()
	stopLoad()
	<-done
	rep := ld.rep
	rep.Events, rep.NotRecovered, rep.Load = events, notRecovered, time.Since(start)
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
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			var err error
			ep, err = c.EndpointFor(ctx, ns, name)
			return err == nil && ep.Secret != "" && devcluster.Serves(ctx, ep.URL), nil
		})
		if err != nil {
			return nil, fmt.Errorf("endpoint %s/%s never got a secret the receiver knows: %w", ns, name, err)
		}
		eps = append(eps, endpoint{url: ep.URL, secret: ep.Secret})
	}
	return eps, nil
}

// load sends calls at a steady rate and remembers what came back.
type load struct {
	opts     Options
	eps      []endpoint
	mu       sync.Mutex
	accepted map[string]bool
	// answers is what each call (by its sequence number) got.
	answers map[int]string
	rep     Report
}

func (l *load) acceptedSoFar() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rep.Accepted
}

func (l *load) run(ctx context.Context) {
	hc := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: l.opts.Workers}}
	ticks := make(chan int, l.opts.Workers)
	var wg sync.WaitGroup
	for range l.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range ticks {
				l.call(ctx, hc, seq)
			}
		}()
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / l.opts.Rate))
	defer t.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			close(ticks)
			wg.Wait()
			return
		case <-t.C:
			select {
			case ticks <- seq:
			default: // every worker is waiting on an answer: the call is not made
			}
		}
	}
}

func (l *load) call(ctx context.Context, hc *http.Client, seq int) {
	ep := l.eps[seq%len(l.eps)]
	// The load's context is not the request's: a call in flight when the
	// load stops still gets its answer, so no 202 goes unseen.
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, ep.url,
		strings.NewReader(fmt.Sprintf(`{"chaos":%d}`, seq)))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(agentsv1alpha1.SecretHeader, ep.secret)
	resp, err := hc.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rep.Sent++
	l.answers[seq] = "no answer"
	if err == nil {
		l.answers[seq] = strconv.Itoa(resp.StatusCode)
	}
	switch {
	case err != nil:
		l.rep.NoAnswer++
	case resp.StatusCode == http.StatusAccepted:
		var out struct {
			RunID string `json:"runId"`
		}
		if json.Unmarshal(body, &out) != nil || out.RunID == "" {
			l.rep.Other[resp.StatusCode]++
			return
		}
		l.rep.Accepted++
		l.accepted[out.RunID] = true
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
		l.rep.Refused503++
	default:
		l.rep.Other[resp.StatusCode]++
	}
}

// settle waits until no run of the namespace is queued or running, or
// opts.Settle passes, and returns the runs.
func settle(ctx context.Context, cl client.Client, opts Options) ([]agentsv1alpha1.AgentRun, error) {
	var runs []agentsv1alpha1.AgentRun
	err := wait.PollUntilContextTimeout(ctx, time.Second, opts.Settle, true, func(ctx context.Context) (bool, error) {
		list := &agentsv1alpha1.AgentRunList{}
		if err := cl.List(ctx, list, client.InNamespace(opts.Namespace)); err != nil {
			return false, nil // the API server may still be catching up
		}
		runs = list.Items
		pending := 0
		for _, r := range runs {
			if !finished(r.Status.State) {
				pending++
			}
		}
		opts.Log("%d runs, %d not finished", len(runs), pending)
		return pending == 0, nil
	})
	if err != nil && !wait.Interrupted(err) {
		return nil, err
	}
	return runs, nil // unfinished runs are reported, not an error here
}

func finished(s agentsv1alpha1.RunState) bool {
	switch s {
	case agentsv1alpha1.RunSuccess, agentsv1alpha1.RunError, agentsv1alpha1.RunSkipped:
		return true
	}
	return false
}

// check fills in what became of the accepted runs and of the others.
func check(ctx context.Context, cl client.Client, rep *Report, ld *load, runs []agentsv1alpha1.AgentRun, agent *demoagent.Agent) {
	accepted := ld.accepted
	rep.Unacknowledged = map[string]int{}
	found := map[string]bool{}
	for _, r := range runs {
		state := string(r.Status.State)
		if state == "" {
			state = string(agentsv1alpha1.RunQueued)
		}
		if !accepted[r.Name] {
			rep.Unacknowledged[state+", caller got "+callerGot(ctx, cl, &r, ld.answers)]++
			continue
		}
		found[r.Name] = true
		seen := agent.Seen(string(r.UID))
		rep.Deliveries += seen
		if seen > 1 {
			rep.Duplicated++
		}
		switch {
		case r.Status.State != agentsv1alpha1.RunSuccess:
			rep.Lost = append(rep.Lost, fmt.Sprintf("%s: %s %s", r.Name, state, r.Status.Message))
		case seen == 0:
			rep.NotDelivered = append(rep.NotDelivered, r.Name)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(accepted)) {
		if !found[id] {
			rep.Lost = append(rep.Lost, id+": no AgentRun")
		}
	}
	sort.Strings(rep.Lost)
}

// callerGot tells what the call that stored run got, found by the sequence
// number in its payload.
func callerGot(ctx context.Context, cl client.Client, run *agentsv1alpha1.AgentRun, answers map[int]string) string {
	if run.Spec.Payload == nil {
		return "unknown (no payload)"
	}
	secret := &corev1.Secret{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, secret); err != nil {
		return "unknown (payload not stored)"
	}
	var body struct {
		Chaos *int `json:"chaos"`
	}
	if json.Unmarshal(secret.Data[agentsv1alpha1.PayloadBodyKey], &body) != nil || body.Chaos == nil {
		return "unknown (payload unreadable)"
	}
	if a, ok := answers[*body.Chaos]; ok {
		return a
	}
	return "unknown"
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// ReportHeading starts the section of docs/benchmarks.md that `make chaos`
// writes; `make bench` keeps it when it writes the rest.
const ReportHeading = "## Reliability: kill -9 under load (make chaos)"

// SplitDoc cuts docs/benchmarks.md into the part `make bench` writes and
// the part `make chaos` writes.
func SplitDoc(doc []byte) (bench, chaos []byte) {
	i := bytes.Index(doc, []byte(ReportHeading))
	if i < 0 {
		return doc, nil
	}
	return doc[:i], doc[i:]
}
