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

package endpoint

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// endpointReadiness counts WebhookEndpoints by namespace and Ready condition
// (status and reason) from the operator's cache when scraped, on the
// leader. It has no per-endpoint series: a cluster may hold tens of
// thousands of endpoints, while namespaces times the few states and reasons
// an endpoint can be in stay small, and a per-endpoint answer is one
// `kubectl get webhookendpoints` away.
func init() {
	metrics.Registry.MustRegister(endpointReadiness)
}

// ServeMetricsFrom points the gauges computed at scrape time (endpoints by
// readiness) at the manager's cache r; they report once elected is closed.
func ServeMetricsFrom(r client.Reader, elected <-chan struct{}) { endpointReadiness.Use(r, elected) }

var endpointReadiness = &cached.ScrapeGauge{
	Desc: prometheus.NewDesc("hookrun_endpoints",
		"WebhookEndpoints by namespace and Ready condition: ready (True, False, Unknown) and reason.",
		[]string{"namespace", "ready", "reason"}, nil),
	Gather: func(ctx context.Context, r client.Reader, emit func(n int, labels ...string)) error {
		endpoints := &agentsv1alpha1.WebhookEndpointList{}
		if err := r.List(ctx, endpoints, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		for k, n := range countByReadiness(endpoints.Items) {
			emit(n, k.namespace, k.ready, k.reason)
		}
		return nil
	},
}

type readinessKey struct{ namespace, ready, reason string }

// countByReadiness counts endpoints by namespace and Ready condition; an
// endpoint without one is Unknown with no reason.
func countByReadiness(endpoints []agentsv1alpha1.WebhookEndpoint) map[readinessKey]int {
	counts := map[readinessKey]int{}
	for i := range endpoints {
		k := readinessKey{namespace: endpoints[i].Namespace, ready: string(metav1.ConditionUnknown)}
		if ready := meta.FindStatusCondition(endpoints[i].Status.Conditions, agentsv1alpha1.ConditionReady); ready != nil {
			k.ready, k.reason = string(ready.Status), ready.Reason
		}
		counts[k]++
	}
	return counts
}
