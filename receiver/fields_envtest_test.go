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
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

// spec.fields through the real receiver and API server: what a run keeps of
// a real GitHub delivery, fields that fail or do not compile, and the
// evaluation slots they share with the filter.

// issueFields are four fields of a GitHub issues delivery, and one that
// fails.
var issueFields = map[string]agentsv1alpha1.FieldExpression{
	"title":   `body.issue.title`,
	"number":  `body.issue.number`,
	"labels":  `body.issue.labels.map(l, l.name)`,
	"text":    `body.issue.body`,
	"missing": `body.issue.no_such_key`,
}

// withFields creates a Header endpoint with fields and payload mode.
func (f *fixture) withFields(ctx SpecContext, name string, fields map[string]agentsv1alpha1.FieldExpression, mode agentsv1alpha1.PayloadMode) (*agentsv1alpha1.WebhookEndpoint, string) {
	GinkgoHelper()
	return f.endpoint(ctx, endpointSpec{name: name, secret: senderSecret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
		ep.Spec.Fields = fields
		ep.Spec.Payload = mode
	}})
}

func payloadSecret(ctx context.Context, ns, run string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: run}, s)).To(Succeed())
	return s
}

var _ = Describe("spec.fields", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	It("stores the fields of an accepted call beside its body, a field that fails null and named, and marks the runs of a Fields endpoint", func(ctx SpecContext) {
		// octokit/webhooks' issues.opened example (controllers/filter/testdata/github).
		body, err := os.ReadFile(filepath.Join("..", "controllers", "filter", "testdata", "github", "issues-opened.json"))
		Expect(err).NotTo(HaveOccurred())
		ep, id := f.withFields(ctx, "triage-fields", issueFields, agentsv1alpha1.PayloadFields)
		before := testutil.ToFloat64(handler.metrics.fieldErrors)
		r := post(id, ptr(senderSecret), string(body))
		Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))
		Expect(testutil.ToFloat64(handler.metrics.fieldErrors)).To(Equal(before + 1))

		run := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.Spec.Payload.Send).To(Equal(agentsv1alpha1.PayloadFields))
		Expect(run.Spec.Payload.Bytes).To(Equal(int64(len(body))), "the body is kept whole")
		s := payloadSecret(ctx, f.ns, r.runID)
		Expect(s.Data[agentsv1alpha1.PayloadBodyKey]).To(Equal(body))
		Expect(string(s.Data[agentsv1alpha1.PayloadFieldsKey])).To(Equal(
			`{"labels":["bug"],"missing":null,"number":1,"text":"It looks like you accidently spelled 'commit' with two 't's.","title":"Spelling error in the README file"}`)) //nolint:misspell // the example delivery's own text
		Expect(string(s.Data[agentsv1alpha1.PayloadFieldErrorsKey])).To(Equal(`["missing"]`))

		By("the rejection report counts the call as field_error and says why, for the endpoint's status")
		Eventually(func(g Gomega) {
			entry := reportEntryOf(ctx, g, ep)
			g.Expect(entry.Counts).To(Equal(map[string]int64{answer.CodeFieldError: 1}))
			g.Expect(entry.LastError).NotTo(BeNil())
			g.Expect(entry.LastError.Expression).To(Equal(agentsv1alpha1.ExpressionFields))
			g.Expect(entry.LastError.Message).To(Equal("1 of 5 fields failed (missing); missing: no such key: no_such_key"))
		}).WithTimeout(2*reportInterval + 2*time.Second).Should(Succeed())

		By("an endpoint that sends the body keeps the fields too, and its runs do not send them")
		_, body2 := f.withFields(ctx, "body-fields", map[string]agentsv1alpha1.FieldExpression{"action": `body.action`}, "")
		r = post(body2, ptr(senderSecret), `{"action":"opened"}`)
		Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.Spec.Payload.Send).To(BeEmpty())
		s = payloadSecret(ctx, f.ns, r.runID)
		Expect(string(s.Data[agentsv1alpha1.PayloadFieldsKey])).To(Equal(`{"action":"opened"}`))
		Expect(s.Data).NotTo(HaveKey(agentsv1alpha1.PayloadFieldErrorsKey))
	})

	It("answers 422 fields_invalid for fields that do not compile, after authentication, until they are fixed", func(ctx SpecContext) {
		ep, id := f.withFields(ctx, "invalid-fields", map[string]agentsv1alpha1.FieldExpression{
			"ok": `body.action`, "broken": `body.action ==`,
		}, agentsv1alpha1.PayloadFields)
		r := post(id, ptr(senderSecret), `{"action":"opened"}`)
		Expect(r.status).To(Equal(http.StatusUnprocessableEntity), string(r.body))
		Expect(r.code).To(Equal(answer.CodeFieldsInvalid))
		Expect(post(id, nil, `{}`).status).To(Equal(http.StatusUnauthorized), "only after authentication")
		Expect(runsIn(ctx, f.ns)).To(BeEmpty())

		patch := client.MergeFrom(ep.DeepCopy())
		ep.Spec.Fields = map[string]agentsv1alpha1.FieldExpression{"ok": `body.action`}
		Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed())
		Eventually(func() int { return post(id, ptr(senderSecret), `{"action":"opened"}`).status }).Should(Equal(http.StatusAccepted))
	})

	It("shows no field the call's credentials, and answers 413 when a body leaves its fields no room in the payload Secret", func(ctx SpecContext) {
		_, id := f.withFields(ctx, "no-credentials", map[string]agentsv1alpha1.FieldExpression{
			"secret": `"x-service-webhook-secret" in headers`, "auth": `"authorization" in headers`, "kind": `headers["content-type"]`,
		}, agentsv1alpha1.PayloadFields)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url(id), strings.NewReader(`{}`))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(agentsv1alpha1.SecretHeader, senderSecret)
		req.Header.Set("Authorization", "Bearer not-for-the-agent")
		r := do(req)
		Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))
		Expect(string(payloadSecret(ctx, f.ns, r.runID).Data[agentsv1alpha1.PayloadFieldsKey])).To(Equal(`{"auth":false,"kind":"application/json","secret":false}`))

		By("a body of 1 MiB less 6 bytes fits alone, not with its fields")
		_, sized := f.withFields(ctx, "sized", map[string]agentsv1alpha1.FieldExpression{"n": `size(rawBody)`}, agentsv1alpha1.PayloadFields)
		body := `{"p":"` + strings.Repeat("x", agentsv1alpha1.MaxPayloadBytes-6-8) + `"}`
		tooLarge := post(sized, ptr(senderSecret), body)
		Expect(tooLarge.status).To(Equal(http.StatusRequestEntityTooLarge), string(tooLarge.body))
		Expect(tooLarge.code).To(Equal(answer.CodePayloadTooLarge))
		_, plain := f.withFields(ctx, "plain", nil, "")
		Expect(post(plain, ptr(senderSecret), body).status).To(Equal(http.StatusAccepted), "the same body without fields")
	})

	It("evaluates the fields within the endpoint's evaluation slots: a third call waits, then gets 503 with Retry-After, while another endpoint is served", func(ctx SpecContext) {
		var evaluating sync.WaitGroup
		evaluating.Add(2)
		release := make(chan struct{})
		real := evaluateFieldsOf
		evaluateFieldsOf = func(ctx context.Context, fs *filter.Fields, call filter.Call) filter.Values {
			if strings.Contains(string(call.Body), "hold") {
				evaluating.Done()
				<-release
			}
			return real(ctx, fs, call)
		}
		DeferCleanup(func() { evaluateFieldsOf = real })
		var releaseOnce sync.Once
		free := func() { releaseOnce.Do(func() { close(release) }) }
		DeferCleanup(free)

		fields := map[string]agentsv1alpha1.FieldExpression{"n": `body.n`}
		_, slow := f.withFields(ctx, "slow", fields, agentsv1alpha1.PayloadFields)
		_, other := f.withFields(ctx, "other", fields, agentsv1alpha1.PayloadFields)
		held := make(chan reply, 2)
		for i := range 2 {
			go func() {
				defer GinkgoRecover()
				held <- post(slow, ptr(senderSecret), fmt.Sprintf(`{"n":%d,"hold":1}`, i))
			}()
		}
		evaluating.Wait()
		busy := post(slow, ptr(senderSecret), `{"n":3}`)
		Expect(busy.status).To(Equal(http.StatusServiceUnavailable), string(busy.body))
		Expect(busy.header.Get("Retry-After")).To(Equal("1"))
		Expect(post(other, ptr(senderSecret), `{"n":4}`).status).To(Equal(http.StatusAccepted), "another endpoint's calls are evaluated")

		free()
		Expect((<-held).status).To(Equal(http.StatusAccepted))
		Expect((<-held).status).To(Equal(http.StatusAccepted))
		Expect(handler.filterGate.InUse()).To(BeZero())
	})

	DescribeTable("the API server refuses fields the receiver could not take",
		func(ctx SpecContext, mutate func(*agentsv1alpha1.WebhookEndpointSpec), want string) {
			ep := &agentsv1alpha1.WebhookEndpoint{}
			ep.Namespace, ep.Name = f.ns, "refused"
			ep.Spec = agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			}
			mutate(&ep.Spec)
			err := k8sClient.Create(ctx, ep)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("payload Fields without fields", func(s *agentsv1alpha1.WebhookEndpointSpec) { s.Payload = agentsv1alpha1.PayloadFields },
			"spec.fields is required when spec.payload is Fields"),
		Entry("a name that is not an identifier", func(s *agentsv1alpha1.WebhookEndpointSpec) {
			s.Fields = map[string]agentsv1alpha1.FieldExpression{"pr-title": "body.title"}
		}, "spec.fields names must be identifiers"),
		Entry("33 fields", func(s *agentsv1alpha1.WebhookEndpointSpec) {
			s.Fields = map[string]agentsv1alpha1.FieldExpression{}
			for i := range 33 {
				s.Fields[fmt.Sprintf("f%d", i)] = "1"
			}
		}, "must have at most 32 items"),
		Entry("an expression over 1024 characters", func(s *agentsv1alpha1.WebhookEndpointSpec) {
			s.Fields = map[string]agentsv1alpha1.FieldExpression{"long": agentsv1alpha1.FieldExpression(`"` + strings.Repeat("x", 1024) + `"`)}
		}, "may not be more than 1024"),
		Entry("another payload mode", func(s *agentsv1alpha1.WebhookEndpointSpec) { s.Payload = "Summary" },
			`supported values: "Body", "Fields"`),
	)
})
