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
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What spec.filter costs a call it turns down, against the bare work of
// reading the same body: a 1 KiB GitHub call (the row of make bench, in
// process) and a 1 MiB Alertmanager notification whose filter reads body.

const memFilterID = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"

// filteredHandler is the in-memory handler with a Header endpoint
// (memFilterID) whose filter is expr.
func filteredHandler(b *testing.B, expr string) *Handler {
	b.Helper()
	h, _ := newMemoryHandler(b)
	h.table.UpsertEndpoint(&agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "filtered", UID: "u5"},
		Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "a"}, Prompt: "p",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun, Filter: expr},
		Status: agentsv1alpha1.WebhookEndpointStatus{EndpointID: memFilterID, SecretHash: agentsv1alpha1.SecretHash([]byte(memSecret))},
	})
	if e := h.table.Lookup(memFilterID); e == nil || h.table.FilterOf(e) == nil || h.table.FilterOf(e).Err != nil {
		b.Fatalf("the filter %q did not compile", expr)
	}
	return h
}

// bareReader reads the body and answers 202, as hack/bench's bare server does.
var bareReader = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusAccepted)
})

// githubIssue is a GitHub issues event of about n bytes.
func githubIssue(action string, n int) []byte {
	head := fmt.Sprintf(`{"action":%q,"issue":{"number":7,"title":"Login fails","body":"`, action)
	tail := `"},"repository":{"full_name":"acme/web"},"sender":{"login":"alice"}}`
	return []byte(head + strings.Repeat("x", max(0, n-len(head)-len(tail))) + tail)
}

// alertmanager is a firing notification of about n bytes, none of whose
// alerts is critical.
func alertmanager(n int) []byte {
	const alert = `{"status":"firing","labels":{"alertname":"HighLatency","instance":"host-1:9090","severity":"warning"},"annotations":{"summary":"latency is high"},"startsAt":"2026-01-01T00:00:00Z"}`
	var sb strings.Builder
	sb.WriteString(`{"version":"4","status":"firing","commonLabels":{"alertname":"HighLatency"},"alerts":[`)
	for i := 0; sb.Len() < n-len(alert)-4; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(alert)
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

func BenchmarkFilter(b *testing.B) {
	issue := githubIssue("closed", 1<<10)
	notification := alertmanager(1 << 20)
	b.Run("bare, reading 1 KiB", func(b *testing.B) {
		runBenchHandler(b, bareReader, newBenchCall(memFilterID, issue), http.StatusAccepted)
	})
	b.Run("GitHub 1 KiB, filtered out on body.action", func(b *testing.B) {
		h := filteredHandler(b, `headers["x-github-event"] == "issues" && body.action == "opened"`)
		runBench(b, h, newBenchCall(memFilterID, issue, agentsv1alpha1.SecretHeader, memSecret, "X-GitHub-Event", "issues"), http.StatusOK)
	})
	b.Run("bare, reading 1 MiB", func(b *testing.B) {
		runBenchHandler(b, bareReader, newBenchCall(memFilterID, notification), http.StatusAccepted)
	})
	b.Run("Alertmanager 1 MiB, filtered out on body.alerts", func(b *testing.B) {
		h := filteredHandler(b, `body.status == "firing" && body.alerts.exists(a, a.labels.severity == "critical")`)
		runBench(b, h, newBenchCall(memFilterID, notification, agentsv1alpha1.SecretHeader, memSecret), http.StatusOK)
	})
	b.Run("1 MiB, filtered out on a header", func(b *testing.B) {
		h := filteredHandler(b, `headers["x-request-source"] == "ci"`)
		runBench(b, h, newBenchCall(memFilterID, notification, agentsv1alpha1.SecretHeader, memSecret), http.StatusOK)
	})
}

// runBenchHandler is runBench for any handler.
func runBenchHandler(b *testing.B, h http.Handler, c *benchCall, want int) {
	b.Helper()
	w := &statusWriter{discardWriter: discardWriter{h: http.Header{}}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		c.reset()
		h.ServeHTTP(w, c.req)
	}
	if w.status != want {
		b.Fatalf("the last call was answered %d, want %d", w.status, want)
	}
}
