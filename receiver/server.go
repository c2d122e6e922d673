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

package receiver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/hookrun/hookrun/receiver/internal/endpoints"
)

// server is the receive route's HTTP server, run by the manager. It starts
// listening once the informers have synced. When the manager stops
// (SIGTERM) it drains: its readiness check fails at once, it keeps serving
// new connections for delay (keep-alives off, so that clients reconnect to
// another replica), then stops accepting and lets the calls in flight
// finish, for ShutdownTimeout at most.
//
// The manager stops it first of all (it is in the group of runnables that
// need no leader election, stopped before the caches and the health probe
// server), so the informers keep the table current and /readyz is served
// while it drains.
type server struct {
	addr    string
	handler http.Handler
	ready   func() bool
	log     logr.Logger
	// delay is --shutdown-delay.
	delay time.Duration
	// draining is set when the manager stops the server.
	draining atomic.Bool
	// drained, if set, is closed when Start returns: nothing is served any more.
	drained chan struct{}
	// listening, if set, receives the bound address (tests listen on :0).
	listening chan<- string
}

// drainingCheckName names the readiness check that fails once the replica
// drains.
const drainingCheckName = "draining"

// errDraining: the replica is stopping; Services and load balancers should
// send it nothing new.
var errDraining = errors.New("this replica is shutting down")

// NeedLeaderElection: every receiver replica serves.
func (s *server) NeedLeaderElection() bool { return false }

// readyz fails once the server drains.
func (s *server) readyz(*http.Request) error {
	if s.draining.Load() {
		return errDraining
	}
	return nil
}

func (s *server) Start(ctx context.Context) error {
	if s.drained != nil {
		defer close(s.drained)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), s.ready) {
		s.draining.Store(true)
		return nil // stopped before the caches synced
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.addr, err)
	}
	srv := newHTTPServer(s.handler)
	s.log.Info("serving the receive route", "address", ln.Addr().String())
	if s.listening != nil {
		s.listening <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return s.drain(srv, errc)
}

// drain fails the readiness check, serves for the delay without
// keep-alives, then stops accepting and waits for the calls in flight.
func (s *server) drain(srv *http.Server, errc <-chan error) error {
	s.draining.Store(true)
	// Answers say "Connection: close" and idle connections are closed:
	// clients open their next connection through the Service, which
	// soon sends it to another replica.
	srv.SetKeepAlivesEnabled(false)
	s.log.Info("stopping: serving the receive route for the shutdown delay, then draining the calls in flight", "delay", s.delay, "drainTimeout", ShutdownTimeout)
	delay := time.NewTimer(s.delay)
	defer delay.Stop()
	select {
	case err := <-errc:
		return err
	case <-delay.C:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("draining the receive route: %w", err)
	}
	s.log.Info("the receive route is drained")
	return nil
}

// newHTTPServer applies the receiver's timeouts and header bound.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// servedCheckName names the check of the health probe port that tells
// whether this replica serves an endpoint ID: GET /readyz/endpoint?id=ID.
const servedCheckName = "endpoint"

// errNotServed: the replica's table holds no endpoint of that ID (unknown,
// not yet seen, or not served, as a conflicting ID).
var errNotServed = errors.New("this replica serves no endpoint of that ID")

// servesEndpoint is the check of /readyz/endpoint?id=ID: nil (200) when the receive
// route would look the endpoint up, an error (500) when it would answer as
// for an unknown ID. It asks without a call on the receive route, which
// would count as a refusal in the endpoint's history (a probe with a wrong
// secret was once the only way, and the first thing a newcomer saw on the
// card after make dev). Without id it is ready, so that the aggregate
// /readyz, which runs every check, is not held by it. Only the table is
// read: the ID says no more here than a call with a wrong secret tells
// anyone (403 or 404), and the health port is not the public one.
func servesEndpoint(t *endpoints.Table) healthz.Checker {
	return func(r *http.Request) error {
		id := r.URL.Query().Get("id")
		if id == "" {
			return nil
		}
		if t.Lookup(id) == nil {
			return errNotServed
		}
		return nil
	}
}

// metrics of the receive route, registered with the controller-runtime
// registry and served on --metrics-bind-address.
type metrics struct {
	requests    *prometheus.CounterVec
	latency     prometheus.Histogram
	runsCreated prometheus.Counter
	duplicates  prometheus.Counter
	rateLimited *prometheus.CounterVec
	// bodyBudgetFull counts 503s for a spent body budget, by budget
	// (budgetReplica, budgetNamespace or budgetEndpoint).
	bodyBudgetFull *prometheus.CounterVec
	// filterErrors counts calls whose spec.filter failed to evaluate.
	filterErrors prometheus.Counter
	// fieldErrors counts accepted calls of which a field of spec.fields
	// failed.
	fieldErrors prometheus.Counter
	// filterTimeouts counts calls whose evaluation the clock stopped.
	filterTimeouts prometheus.Counter
	// storeErrors counts checks the rate-limit store did not answer.
	storeErrors prometheus.Counter
}

// The budgets of request bodies, as labelled in bodyBudgetFull.
const (
	budgetReplica   = "replica"
	budgetNamespace = "namespace"
	budgetEndpoint  = "endpoint"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookrun_receiver_requests_total",
			Help: "Calls to the receive route by HTTP status code.",
		}, []string{"code"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "hookrun_receiver_request_duration_seconds",
			Help:    "Time to answer a call to the receive route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
		runsCreated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hookrun_receiver_runs_created_total",
			Help: "AgentRuns stored for accepted calls (answered 202).",
		}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hookrun_receiver_duplicate_deliveries_total",
			Help: "Calls answered 202 with the runId of an earlier call with the same delivery ID; nothing new was started.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookrun_receiver_rate_limited_total",
			Help: "Calls rejected with 429, by limit (invocation or unauthenticated).",
		}, []string{"limit"}),
		bodyBudgetFull: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookrun_receiver_body_budget_exhausted_total",
			Help: "Calls answered 503 because the replica held --max-inflight-body-bytes of request bodies (budget=replica), the calls of the endpoint's namespace held their half of them (budget=namespace), or the endpoint's calls held its quarter (budget=endpoint).",
		}, []string{"budget"}),
		filterErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hookrun_receiver_filter_errors_total",
			Help: "Calls whose endpoint's spec.filter failed to evaluate (a missing key, a type mismatch); they were answered 200 ignored.",
		}),
		fieldErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hookrun_receiver_field_errors_total",
			Help: "Calls of which at least one of the endpoint's spec.fields failed (a missing key, a value over 4 KiB), counted when the fields are evaluated (after the rate limits, before the duplicate check); the field is null in the run's fields, named in fieldErrors.",
		}),
		filterTimeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hookrun_receiver_filter_timeouts_total",
			Help: "Calls whose evaluation of spec.filter, spec.fields or spec.sender.oidc.claims was stopped by the clock (100 ms) before its steps decided it: a replica too busy. They were answered 503 with Retry-After.",
		}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hookrun_receiver_rate_limit_store_errors_total",
			Help: "Rate-limit checks the store of --rate-limit-store did not answer (or answered with an error); the replica counted them alone, and does so for a second before it asks the store again.",
		}),
	}
	var err error
	if m.requests, err = register(reg, m.requests); err != nil {
		return nil, err
	}
	if m.latency, err = register(reg, m.latency); err != nil {
		return nil, err
	}
	if m.runsCreated, err = register(reg, m.runsCreated); err != nil {
		return nil, err
	}
	if m.duplicates, err = register(reg, m.duplicates); err != nil {
		return nil, err
	}
	if m.rateLimited, err = register(reg, m.rateLimited); err != nil {
		return nil, err
	}
	if m.bodyBudgetFull, err = register(reg, m.bodyBudgetFull); err != nil {
		return nil, err
	}
	if m.filterErrors, err = register(reg, m.filterErrors); err != nil {
		return nil, err
	}
	if m.fieldErrors, err = register(reg, m.fieldErrors); err != nil {
		return nil, err
	}
	if m.filterTimeouts, err = register(reg, m.filterTimeouts); err != nil {
		return nil, err
	}
	if m.storeErrors, err = register(reg, m.storeErrors); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector registered before it (a
// second receiver in one process, as in tests, shares the first's metrics).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// codeLabels avoids formatting the status code on every call.
var codeLabels = func() map[int]string {
	m := map[int]string{}
	for _, c := range []int{202, 400, 401, 403, 404, 405, 413, 422, 429, 503} {
		m[c] = strconv.Itoa(c)
	}
	return m
}()

func (m *metrics) observe(code int, d time.Duration) {
	label, ok := codeLabels[code]
	if !ok {
		label = strconv.Itoa(code)
	}
	m.requests.WithLabelValues(label).Inc()
	m.latency.Observe(d.Seconds())
}
