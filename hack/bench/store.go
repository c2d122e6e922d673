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
	"fmt"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/hack/loadgen"
	"github.com/hookrun/hookrun/hack/redisserver"
)

// measureStore measures accepted calls with the rate limits kept in a
// shared store (--rate-limit-store, a redis-server on loopback) against the
// same calls counted by the replica alone, the receiver restarted between
// them and the two alternating, so that both see the same machine and API
// server. The operator is stopped, as for the accepted calls.
func measureStore(ctx context.Context, c *devcluster.Cluster, o options, post postFunc, ep devcluster.Endpoint, logf func(string, ...any)) ([]row, error) {
	const what = "accepted calls with the rate limits in Redis (--rate-limit-store), against each replica alone"
	if !redisserver.Available() {
		return []row{{what, ">= 0.9", "not measured: redis-server is not on PATH (hack/install-test-packages.sh)", false}}, nil
	}
	store, err := redisserver.Start("")
	if err != nil {
		return nil, err
	}
	defer store.Close()
	c.Kill(devcluster.Operator)
	hc := loadgen.Client(o.workers)
	var alone, shared []loadgen.Result
	restart := func(args ...string) error {
		c.Kill(devcluster.Receiver)
		c.SetExtraArgs(devcluster.Receiver, args...)
		return c.Start(ctx, devcluster.Receiver)
	}
	for range o.repeat {
		for _, withStore := range []bool{false, true} {
			var args []string
			if withStore {
				args = []string{"--rate-limit-store=" + store.URL()}
			}
			if err := restart(args...); err != nil {
				return nil, err
			}
			r := loadgen.Run(ctx, hc, o.workers, o.duration, post(ep.URL, ep.Secret, small, 7))
			if withStore {
				shared = append(shared, r)
			} else {
				alone = append(alone, r)
			}
		}
	}
	if err := restart(); err != nil {
		return nil, err
	}
	a, s := loadgen.Median(alone), loadgen.Median(shared)
	logf("%-22s %s", "accepted, alone", a)
	logf("%-22s %s", "accepted, store", s)
	errs, err := c.ReceiverMetric(ctx, "hookrun_receiver_rate_limit_store_errors_total")
	if err != nil {
		return nil, err
	}
	ratio := s.Throughput() / a.Throughput()
	all := s.Statuses[http.StatusAccepted] == s.Requests && a.Statuses[http.StatusAccepted] == a.Requests
	rows := []row{{what, ">= 0.9",
		fmt.Sprintf("%.2f (%s; alone %s); p50 %+s, p99 %+s per call; %.0f store errors",
			ratio, s, a, (s.P50 - a.P50).Round(time.Microsecond), (s.P99 - a.P99).Round(time.Microsecond), errs),
		ratio >= 0.9 && all && errs == 0}}
	if err := c.AdminClient.DeleteAllOf(ctx, &agentsv1alpha1.AgentRun{}, client.InNamespace(ep.Namespace)); err != nil {
		return nil, fmt.Errorf("deleting the runs the accepted calls stored: %w", err)
	}
	return rows, c.Start(ctx, devcluster.Operator)
}
