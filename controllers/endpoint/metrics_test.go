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
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// readinessEndpoint is an endpoint whose Ready condition is status/reason,
// or that has none when status is empty.
func readinessEndpoint(ns, name string, status metav1.ConditionStatus, reason string) *agentsv1alpha1.WebhookEndpoint {
	e := &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if status != "" {
		e.Status.Conditions = []metav1.Condition{
			{Type: "Other", Status: metav1.ConditionTrue, Reason: "Other"},
			{Type: agentsv1alpha1.ConditionReady, Status: status, Reason: reason},
		}
	}
	return e
}

func TestCountByReadiness(t *testing.T) {
	endpoints := []agentsv1alpha1.WebhookEndpoint{
		*readinessEndpoint("a", "1", metav1.ConditionTrue, "Ready"),
		*readinessEndpoint("a", "2", metav1.ConditionTrue, "Ready"),
		*readinessEndpoint("a", "3", metav1.ConditionFalse, "AgentNotFound"),
		*readinessEndpoint("b", "1", metav1.ConditionTrue, "Ready"),
		*readinessEndpoint("b", "2", "", ""),
	}
	got := countByReadiness(endpoints)
	want := map[readinessKey]int{
		{"a", "True", "Ready"}: 2, {"a", "False", "AgentNotFound"}: 1, {"b", "True", "Ready"}: 1, {"b", "Unknown", ""}: 1,
	}
	if len(got) != len(want) {
		t.Fatalf("countByReadiness = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("countByReadiness[%v] = %d, want %d", k, got[k], n)
		}
	}
}

// hookrun_endpoints is served by the leader only: a replica waiting for the
// lease reports nothing, so sums over replicas count each endpoint once.
func TestEndpointReadinessOnTheLeader(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := agentsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		readinessEndpoint("team-a", "ok", metav1.ConditionTrue, "Ready"),
		readinessEndpoint("team-a", "broken", metav1.ConditionFalse, "AgentNotFound"),
	).Build()
	elected := make(chan struct{})
	collector := &cached.ScrapeGauge{Desc: endpointReadiness.Desc, Gather: endpointReadiness.Gather}
	collector.Use(c, elected)
	if n := testutil.CollectAndCount(collector); n != 0 {
		t.Errorf("before election: %d series, want none", n)
	}
	close(elected)
	want := `
# HELP hookrun_endpoints WebhookEndpoints by namespace and Ready condition: ready (True, False, Unknown) and reason.
# TYPE hookrun_endpoints gauge
hookrun_endpoints{namespace="team-a",ready="False",reason="AgentNotFound"} 1
hookrun_endpoints{namespace="team-a",ready="True",reason="Ready"} 1
`
	if err := testutil.CollectAndCompare(collector, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
