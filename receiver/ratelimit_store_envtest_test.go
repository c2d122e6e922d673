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
	"net"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/redisserver"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

// startStoreReceiver runs a replica (startSecondReceiver) whose limits are
// kept in the store at storeURL, its password from the option as the
// chart's Secret gives it, until the spec ends.
func startStoreReceiver(ctx context.Context, name, storeURL, password string) secondReceiver {
	GinkgoHelper()
	return startSecondReceiver(ctx, func(o *Options) {
		o.PodName = name
		o.RateLimitStore = storeURL
		o.RateLimitStorePassword = password
		Expect(o.Validate()).To(Succeed())
	})
}

// freeAddress is a free port of 127.0.0.1.
func freeAddress() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// waitFor waits until the replica serves endpoint id.
func (r secondReceiver) waitFor(id string) {
	GinkgoHelper()
	Eventually(func() *endpoints.Endpoint { return r.Lookup(id) }).ShouldNot(BeNil())
}

func (r secondReceiver) post(id string) reply {
	GinkgoHelper()
	return call(http.MethodPost, r.url+"/api/webhooks/"+id+"/receive", ptr(secret), strings.NewReader("{}"))
}

// answersOf sends calls alternately to the replicas and counts the status codes.
func answersOf(calls int, id string, replicas ...secondReceiver) map[int]int {
	GinkgoHelper()
	codes := map[int]int{}
	for i := range calls {
		codes[replicas[i%len(replicas)].post(id).status]++
	}
	return codes
}

var _ = Describe("Rate limits kept in a shared store (--rate-limit-store)", Ordered, func() {
	var (
		store *redisserver.Server
		a, b  secondReceiver
		f     *fixture
	)
	BeforeAll(func(ctx SpecContext) {
		if !redisserver.Available() {
			Skip("redis-server is not on PATH: the rate-limit store's specs do not run")
		}
		var err error
		store, err = redisserver.Start("store-password")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
		a = startStoreReceiver(ctx, "receiver-store-a", store.URL(), "store-password")
		b = startStoreReceiver(ctx, "receiver-store-b", store.URL(), "store-password")
	})
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	skippedRuns := func(ctx context.Context) []agentsv1alpha1.AgentRun {
		var skipped []agentsv1alpha1.AgentRun
		for _, run := range runsIn(ctx, f.ns) {
			if run.Status.State == agentsv1alpha1.RunSkipped {
				skipped = append(skipped, run)
			}
		}
		return skipped
	}

	It("lets two replicas together accept exactly the limit, and records one skipped run per window", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "shared", secret: secret})
		a.waitFor(id)
		b.waitFor(id)
		Expect(answersOf(3*testRateLimit, id, a, b)).To(Equal(map[int]int{http.StatusAccepted: testRateLimit, http.StatusTooManyRequests: 2 * testRateLimit}))
		Expect(skippedRuns(ctx)).To(HaveLen(1), "one skipped record per window, of either replica")
		r := a.post(id)
		Expect(r.header.Get("Retry-After")).To(Equal("60"))

		By("the window slides for both")
		fakeClock.Step(limits.Window)
		Expect(answersOf(3*testRateLimit, id, b, a)).To(Equal(map[int]int{http.StatusAccepted: testRateLimit, http.StatusTooManyRequests: 2 * testRateLimit}))
		Expect(skippedRuns(ctx)).To(HaveLen(2))
	})

	It("keeps the unauthenticated window in the store too, before the body is read", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "status-page", unauthenticated: true})
		a.waitFor(id)
		b.waitFor(id)
		Expect(answersOf(3*testUnauthLimit, id, a, b)).To(Equal(map[int]int{http.StatusAccepted: testUnauthLimit, http.StatusTooManyRequests: 2 * testUnauthLimit}))
	})

	It("counts alone while the store is down, stays ready, and uses the store again when it answers", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "store-down", secret: secret})
		a.waitFor(id)
		b.waitFor(id)
		errorsBefore := testutil.ToFloat64(a.handler.metrics.storeErrors)
		Expect(store.Kill()).To(Succeed())
		Expect(answersOf(4*testRateLimit, id, a, b)).To(Equal(map[int]int{http.StatusAccepted: 2 * testRateLimit, http.StatusTooManyRequests: 2 * testRateLimit}),
			"each replica counts alone")
		Expect(testutil.ToFloat64(a.handler.metrics.storeErrors)-errorsBefore).To(BeNumerically(">=", 2), "each replica's first check failed")
		for _, r := range []secondReceiver{a, b} {
			resp, err := http.Get(r.readyz)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Body.Close()).To(Succeed())
			Expect(resp.StatusCode).To(Equal(http.StatusOK), "a replica without its store stays ready")
		}

		By("the store back (empty, as a store that lost its data)")
		Expect(store.Restart()).To(Succeed())
		fakeClock.Step(limits.StoreRetryInterval)
		errorsThen := testutil.ToFloat64(a.handler.metrics.storeErrors)
		Expect(answersOf(3*testRateLimit, id, a, b)).To(Equal(map[int]int{http.StatusAccepted: testRateLimit, http.StatusTooManyRequests: 2 * testRateLimit}))
		Expect(testutil.ToFloat64(a.handler.metrics.storeErrors)).To(Equal(errorsThen), "no failure once it answers")
	})
})
