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
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

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
