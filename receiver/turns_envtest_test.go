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
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

// Evaluation turns (DESIGN.md section 12, "Filters and shares"): one
// namespace's long evaluations do not change another namespace's verdicts.
var _ = Describe("Evaluation turns", func() {
	It("answers another namespace's matching calls 202 while one namespace floods its endpoints with evaluations that run to their limit, never 200 ignored", func(ctx SpecContext) {
		// The replica's own turns, as in production: GOMAXPROCS.
		limit := handler.filterGate.SetLimit(runtime.GOMAXPROCS(0))
		DeferCleanup(func() { handler.filterGate.SetLimit(limit) })
		flooder, victim := newFixture(ctx), newFixture(ctx)
		// Three comprehensions of 125,000 steps: more steps than an
		// evaluation may take, tens of milliseconds of a core each call.
		long := filter.NestedAll(50, 3) + " && " + filter.NestedAll(50, 3) + " && " + filter.NestedAll(50, 3)
		_, flood1 := flooder.filtered(ctx, "long-1", agentsv1alpha1.SenderHeader, long)
		_, flood2 := flooder.filtered(ctx, "long-2", agentsv1alpha1.SenderHeader, long)
		// Some 30 ms of a core, and true.
		_, wanted := victim.filtered(ctx, "wanted", agentsv1alpha1.SenderHeader, filter.NestedAll(victimSide, 3)+` && body.wanted == true`)

		stop := make(chan struct{})
		var flooding sync.WaitGroup
		for i := range 16 {
			flooding.Go(func() {
				defer GinkgoRecover()
				id := []string{flood1, flood2}[i%2]
				for {
					select {
					case <-stop:
						return
					default:
					}
					r := post(id, ptr(senderSecret), `{"wanted":true}`)
					Expect(r.status).To(SatisfyAny(Equal(http.StatusOK), Equal(http.StatusServiceUnavailable)), string(r.body))
				}
			})
		}
		var stopOnce sync.Once
		DeferCleanup(func() { stopOnce.Do(func() { close(stop) }); flooding.Wait() })
		// Its evaluations end at their steps (filter_error), or, under
		// -race, at the clock (filter_timeout).
		ended := func() float64 {
			return testutil.ToFloat64(handler.metrics.filterErrors) + testutil.ToFloat64(handler.metrics.filterTimeouts)
		}
		before := ended()
		Eventually(ended).Should(BeNumerically(">", before), "the flood runs")

		answers := map[string]int{}
		for i := range 30 {
			if i%testRateLimit == 0 {
				fakeClock.Step(limits.Window)
			}
			r := post(wanted, ptr(senderSecret), `{"wanted":true}`)
			switch {
			case r.status == http.StatusAccepted:
				answers["202"]++
			case r.status == http.StatusServiceUnavailable && r.code == answer.CodeUnavailable && r.header.Get("Retry-After") != "":
				answers["503 with Retry-After"]++
			default:
				answers[fmt.Sprintf("%d %s", r.status, r.body)]++
			}
		}
		AddReportEntry("the other namespace's 30 matching calls under the flood", answers)
		for answer := range answers {
			Expect(answer).To(BeElementOf("202", "503 with Retry-After"), "every answer 202, or 503 with Retry-After (a replica too busy), none ignored: %v", answers)
		}
		stopOnce.Do(func() { close(stop) })
		flooding.Wait()
		fakeClock.Step(limits.Window)
		Expect(post(wanted, ptr(senderSecret), `{"wanted":true}`).status).To(Equal(http.StatusAccepted), "the filter matches")
	})

	It("answers 503 with Retry-After, counted as filter_timeout, a call whose evaluation the clock stopped", func(ctx SpecContext) {
		real := evaluate
		evaluate = func(ctx context.Context, p *filter.Program, call filter.Call) (bool, error) {
			if strings.Contains(string(call.Body), "busy") {
				return false, filter.ErrTimeout
			}
			return real(ctx, p, call)
		}
		DeferCleanup(func() { evaluate = real })
		f := newFixture(ctx)
		ep, id := f.filtered(ctx, "stopped", agentsv1alpha1.SenderHeader, `body.wanted == true`)
		before := testutil.ToFloat64(handler.metrics.filterTimeouts)
		r := post(id, ptr(senderSecret), `{"wanted":true,"busy":1}`)
		Expect(r.status).To(Equal(http.StatusServiceUnavailable), string(r.body))
		Expect(r.code).To(Equal(answer.CodeUnavailable))
		Expect(r.header.Get("Retry-After")).To(Equal("1"))
		Expect(testutil.ToFloat64(handler.metrics.filterTimeouts)).To(Equal(before + 1))
		Eventually(func(g Gomega) {
			entry := reportEntryOf(ctx, g, ep)
			g.Expect(entry.Counts).To(Equal(map[string]int64{answer.CodeFilterTimeout: 1}))
		}).WithTimeout(2*reportInterval + 2*time.Second).Should(Succeed())
		Expect(post(id, ptr(senderSecret), `{"wanted":true}`).status).To(Equal(http.StatusAccepted), "the retry is decided")
	})
})
