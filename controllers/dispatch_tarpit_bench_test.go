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

package controllers

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentrun "github.com/hookrun/hookrun/controllers/run"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// BenchmarkQueueToSendBesideTarpit measures BenchmarkQueueToSend's 202 to
// agent for one Agent three times in one run: alone; while four Agents of
// another namespace (tarpits that hold every request open) have 20 runs
// running each (their four Agent shares would be all the dispatch workers;
// their namespace's share is half); and while a second namespace's four
// tarpits do the same (the two namespaces' shares would be all the
// workers: the reserve keeps a quarter for a third). It reports the three
// p99s and the ratio of the second to the first (make bench).
func BenchmarkQueueToSendBesideTarpit(b *testing.B) {
	ctx, c := benchOperator(b)
	agent := newBenchAgent(b)
	for _, ns := range []string{"bench", "tarpit", "tarpit-b"} {
		must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	must(b, c.Create(ctx, benchAgentObject("bench", "demo", agent.srv.URL)))
	b.ResetTimer()
	alone := agent.queueToSend(ctx, b, c, "bench", "demo", "alone", b.N)

	b.StopTimer()
	pit := a2apeers.V1JSONRPC(a2apeers.Tarpit())
	defer pit.Close()
	held := func() int32 {
		open, _, _ := pit.Held()
		return int32(open)
	}
	// fill starts four tarpit Agents of ns with 20 runs each, and waits
	// until the tarpits hold want requests.
	fill := func(ns string, want int32) {
		for a := range 4 {
			name := fmt.Sprintf("tarpit-%d", a)
			tarpit := benchAgentObject(ns, name, pit.URL)
			tarpit.Spec.MaxConcurrentRuns = 20
			must(b, c.Create(ctx, tarpit))
			for i := range 20 {
				storeBenchRun(ctx, b, c, ns, name, fmt.Sprintf("%s-held-%02d", name, i))
			}
		}
		for deadline := time.Now().Add(30 * time.Second); held() < want; {
			if time.Now().After(deadline) {
				b.Fatalf("the tarpits hold %d requests, want %d", held(), want)
			}
			<-time.After(time.Millisecond)
		}
	}
	share := int32(agentrun.NamespaceShare(DefaultDispatchWorkers))
	fill("tarpit", share)
	b.StartTimer()
	beside := agent.queueToSend(ctx, b, c, "bench", "demo", "beside", b.N)
	b.StopTimer()
	if n := held(); n > share {
		b.Fatalf("the tarpits held %d requests at the end, more than their namespace's share of %d", n, share)
	}

	both := int32(DefaultDispatchWorkers - agentrun.Reserve(DefaultDispatchWorkers))
	fill("tarpit-b", both)
	b.StartTimer()
	besideTwo := agent.queueToSend(ctx, b, c, "bench", "demo", "beside-two", b.N)
	b.StopTimer()
	if n := held(); n > both {
		b.Fatalf("two namespaces' tarpits held %d requests at the end, more than the %d the reserve leaves them", n, both)
	}

	p99Alone, p99Beside, p99BesideTwo := percentile(alone, 0.99), percentile(beside, 0.99), percentile(besideTwo, 0.99)
	b.ReportMetric(ms(p99Alone), "p99-alone-ms")
	b.ReportMetric(ms(p99Beside), "p99-beside-ms")
	b.ReportMetric(float64(p99Beside)/float64(p99Alone), "p99-ratio")
	b.ReportMetric(ms(p99BesideTwo), "p99-beside-two-ms")
}
