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
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

// spec.filter through the real receiver and API server: the examples of
// docs/filters.md, what an ignored call costs, and filters that fail.

const (
	filterIssuesOpened   = `event == "issues" && body.action == "opened"`
	filterPushToMain     = `event == "push" && body.ref == "refs/heads/main"`
	filterCriticalFiring = `body.status == "firing" && body.alerts.exists(a, a.labels.severity == "critical")`
)

// filtered creates an endpoint of sender type t with filter expr.
func (f *fixture) filtered(ctx SpecContext, name string, t agentsv1alpha1.SenderType, expr string) (*agentsv1alpha1.WebhookEndpoint, string) {
	GinkgoHelper()
	ep, id := f.endpoint(ctx, endpointSpec{name: name, secret: secretFor(t), mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
		ep.Spec.Sender = senderSpec(t)
		ep.Spec.Filter = expr
	}})
	if t.Signed() {
		putSigningKey(ctx, ep, []byte(secretFor(t)), agentsv1alpha1.SecretHash([]byte(secretFor(t))), nil, "")
	}
	return ep, id
}

// expectIgnored checks that r is the answer of an ignored call.
func expectIgnored(r reply) {
	GinkgoHelper()
	Expect(r.status).To(Equal(http.StatusOK), string(r.body))
	Expect(r.body).To(Equal(answer.Ignored))
}

var _ = Describe("spec.filter", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	It("starts runs only for GitHub issues that were opened, and pushes to main", func(ctx SpecContext) {
		gh := agentsv1alpha1.SenderGitHub
		_, issues := f.filtered(ctx, "issues-opened", gh, filterIssuesOpened)
		_, pushes := f.filtered(ctx, "push-to-main", gh, filterPushToMain)
		event := func(e string) map[string]string { return map[string]string{"X-GitHub-Event": e} }

		opened := send(srv.URL, issues, gh, `{"action":"opened","issue":{"number":7}}`, senderSecret, event("issues"))
		Expect(opened.status).To(Equal(http.StatusAccepted), string(opened.body))
		expectIgnored(send(srv.URL, issues, gh, `{"action":"closed","issue":{"number":7}}`, senderSecret, event("issues")))
		expectIgnored(send(srv.URL, issues, gh, `{"ref":"refs/heads/main"}`, senderSecret, event("push")))

		main := send(srv.URL, pushes, gh, `{"ref":"refs/heads/main","commits":[]}`, senderSecret, event("push"))
		Expect(main.status).To(Equal(http.StatusAccepted), string(main.body))
		expectIgnored(send(srv.URL, pushes, gh, `{"ref":"refs/heads/feature"}`, senderSecret, event("push")))
		expectIgnored(send(srv.URL, pushes, gh, `{"action":"opened"}`, senderSecret, event("issues")))

		By("a ping is answered before the filter")
		Expect(send(srv.URL, pushes, gh, `{"zen":"hi"}`, senderSecret, event("ping")).body).To(Equal([]byte(`{"status":"pong"}`+"\n")), "the pong of a ping")
		Expect(runsIn(ctx, f.ns)).To(ConsistOf(HaveField("Name", opened.runID), HaveField("Name", main.runID)))
	})

	It("starts runs only for firing Alertmanager notifications of a critical alert", func(ctx SpecContext) {
		bearer := agentsv1alpha1.SenderBearer
		_, id := f.filtered(ctx, "critical", bearer, filterCriticalFiring)
		critical := send(srv.URL, id, bearer, `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"Disk","severity":"warning"}},{"status":"firing","labels":{"alertname":"Down","severity":"critical"}}]}`, senderSecret, nil)
		Expect(critical.status).To(Equal(http.StatusAccepted), string(critical.body))
		expectIgnored(send(srv.URL, id, bearer, `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"Disk","severity":"warning"}}]}`, senderSecret, nil))
		expectIgnored(send(srv.URL, id, bearer, `{"version":"4","status":"resolved","alerts":[{"status":"resolved","labels":{"alertname":"Down","severity":"critical"}}]}`, senderSecret, nil))
		Expect(runsIn(ctx, f.ns)).To(ConsistOf(HaveField("Name", critical.runID)))
	})

	It("ignores calls without taking from the invocation rate limit: a full window afterwards still accepts the allowed number", func(ctx SpecContext) {
		_, id := f.filtered(ctx, "wanted", agentsv1alpha1.SenderHeader, `body.wanted == true`)
		for range 3 * testRateLimit {
			expectIgnored(post(id, ptr(senderSecret), `{"wanted":false}`))
		}
		Expect(runsIn(ctx, f.ns)).To(BeEmpty(), "no run, nothing recorded")
		for range testRateLimit {
			Expect(post(id, ptr(senderSecret), `{"wanted":true}`).status).To(Equal(http.StatusAccepted))
		}
		Expect(post(id, ptr(senderSecret), `{"wanted":true}`).code).To(Equal(answer.CodeRateLimited))
	})

	It("ignores a call whose filter fails to evaluate, and counts it in the rejection report and a metric; a body that is not JSON is null", func(ctx SpecContext) {
		ep, id := f.filtered(ctx, "errors", agentsv1alpha1.SenderHeader, `body == null || body.action == "opened"`)
		before := testutil.ToFloat64(handler.metrics.filterErrors)
		expectIgnored(post(id, ptr(senderSecret), `{"issue":{"number":7}}`)) // no key action: an error
		Expect(testutil.ToFloat64(handler.metrics.filterErrors)).To(Equal(before + 1))
		Expect(post(id, ptr(senderSecret), `{"action":"opened"}`).status).To(Equal(http.StatusAccepted))
		Expect(post(id, ptr(senderSecret), `action=opened`).status).To(Equal(http.StatusAccepted), "body == null")
		Expect(runsIn(ctx, f.ns)).To(HaveLen(2))

		Eventually(func(g Gomega) {
			entry := reportEntryOf(ctx, g, ep)
			g.Expect(entry.Counts).To(Equal(map[string]int64{answer.CodeFilterError: 1}))
			g.Expect(entry.LastError).NotTo(BeNil(), "why the call was ignored")
			g.Expect(entry.LastError.Expression).To(Equal(agentsv1alpha1.ExpressionFilter))
			g.Expect(entry.LastError.Message).To(ContainSubstring("no such key: action"))
		}).WithTimeout(2*reportInterval + 2*time.Second).Should(Succeed())
	})

	It("evaluates at most two calls of one endpoint at a time: a third waits, then gets 503 with Retry-After, while another endpoint is served", func(ctx SpecContext) {
		// Evaluations of a body that says "hold" wait until released, as
		// an expression that runs for its whole 100 ms would.
		var evaluating sync.WaitGroup
		evaluating.Add(2)
		release := make(chan struct{})
		real := evaluate
		evaluate = func(ctx context.Context, p *filter.Program, call filter.Call) (bool, error) {
			if strings.Contains(string(call.Body), "hold") {
				evaluating.Done()
				<-release
			}
			return real(ctx, p, call)
		}
		DeferCleanup(func() { evaluate = real })
		var releaseOnce sync.Once
		free := func() { releaseOnce.Do(func() { close(release) }) }
		DeferCleanup(free) // also when an expectation fails: the held calls must end

		slowEndpoint, slow := f.filtered(ctx, "slow", agentsv1alpha1.SenderHeader, `body.wanted == true`)
		_, other := f.filtered(ctx, "other", agentsv1alpha1.SenderHeader, `body.wanted == true`)
		held := make(chan reply, 2)
		for range 2 {
			go func() {
				defer GinkgoRecover()
				held <- post(slow, ptr(senderSecret), `{"wanted":false,"hold":1}`)
			}()
		}
		evaluating.Wait()

		// The filter pushed out of the compiled ones meanwhile: a call that
		// gets no turn does not compile it either.
		handler.table.Forget(slowEndpoint.UID)
		busy := post(slow, ptr(senderSecret), `{"wanted":true}`)
		Expect(busy.status).To(Equal(http.StatusServiceUnavailable), string(busy.body))
		compiled, _, _ := handler.table.Compiled(slowEndpoint.UID)
		Expect(compiled).To(BeFalse(), "a call waiting for its turn compiles nothing")
		Expect(busy.code).To(Equal(answer.CodeUnavailable))
		Expect(busy.header.Get("Retry-After")).To(Equal("1"))
		Expect(post(other, ptr(senderSecret), `{"wanted":true}`).status).To(Equal(http.StatusAccepted), "another endpoint's calls are evaluated")

		free()
		expectIgnored(<-held)
		expectIgnored(<-held)
		Expect(post(slow, ptr(senderSecret), `{"wanted":true}`).status).To(Equal(http.StatusAccepted), "the slots are given back")
		Expect(handler.filterGate.InUse()).To(BeZero(), "nothing is kept of an endpoint between its calls")
	})

	It("ignores a call whose evaluation would take more than 4 times its body, and counts it as a filter error", func(ctx SpecContext) {
		_, id := f.filtered(ctx, "critical", agentsv1alpha1.SenderHeader, filterCriticalFiring)
		before := testutil.ToFloat64(handler.metrics.filterErrors)
		// A critical alert with 60,000 more keys: reading its labels reads
		// every key into the alert's index, about 100 bytes for each 10 of
		// the body.
		var alert strings.Builder
		alert.WriteString(`{"labels":{"severity":"critical"}`)
		for i := range 60_000 {
			fmt.Fprintf(&alert, `,"k%d":0`, i)
		}
		alert.WriteString("}")
		expectIgnored(post(id, ptr(senderSecret), `{"status":"firing","alerts":[`+alert.String()+`]}`))
		Expect(testutil.ToFloat64(handler.metrics.filterErrors)).To(Equal(before + 1))
		Expect(post(id, ptr(senderSecret), `{"status":"firing","alerts":[{"labels":{"severity":"critical"}}]}`).status).To(Equal(http.StatusAccepted))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
	})

	DescribeTable("answers 422 filter_invalid for a filter that does not compile, whatever the operator says, until it is fixed",
		func(ctx SpecContext, expr string) {
			ep, id := f.filtered(ctx, "invalid", agentsv1alpha1.SenderHeader, expr)
			r := post(id, ptr(senderSecret), `{"action":"opened"}`)
			Expect(r.status).To(Equal(http.StatusUnprocessableEntity))
			Expect(r.code).To(Equal(answer.CodeFilterInvalid))
			Expect(post(id, nil, `{}`).status).To(Equal(http.StatusUnauthorized), "only after authentication")

			patch := client.MergeFrom(ep.DeepCopy())
			ep.Spec.Filter = `body.action == "opened"`
			Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed())
			Eventually(func() int { return post(id, ptr(senderSecret), `{"action":"opened"}`).status }).Should(Equal(http.StatusAccepted))
		},
		Entry("a syntax error", `body.action = "opened"`),
		Entry("not a bool", `body.action`),
		Entry("too expensive: a comprehension within a comprehension over the body", `body.alerts.exists(a, body.alerts.exists(b, a != b && a.labels == b.labels))`),
		Entry("too expensive: a scan of rawBody per element", `body.alerts.exists(a, rawBody.contains(string(a.labels.severity)))`),
		Entry("too expensive: the size of rawBody per element", `body.alerts.all(a, size(rawBody) > 0)`),
		Entry("too expensive: a short pattern of a large program", `rawBody.matches("(a*){500}b")`),
		Entry("a pattern that does not compile", `rawBody.matches("(")`),
		Entry("a pattern that is not a literal", `rawBody.matches(headers["x-pattern"])`),
	)
})
