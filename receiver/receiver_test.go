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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

const secret = "s3cr3t-value-of-at-least-thirty-two-bytes"

type reply struct {
	status int
	header http.Header
	body   []byte
	code   string
	runID  string
}

// call sends one request. secret nil: no header.
func call(method, target string, secretHeader *string, body io.Reader) reply {
	GinkgoHelper()
	req, err := http.NewRequest(method, target, body)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if secretHeader != nil {
		req.Header.Set(agentsv1alpha1.SecretHeader, *secretHeader)
	}
	return do(req)
}

func do(req *http.Request) reply {
	GinkgoHelper()
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	r := reply{status: resp.StatusCode, header: resp.Header, body: b}
	var parsed struct {
		Error  struct{ Code, Message string }
		RunID  string `json:"runId"`
		Status string
	}
	Expect(json.Unmarshal(b, &parsed)).To(Succeed(), "every answer is JSON: %s", b)
	r.code, r.runID = parsed.Error.Code, parsed.RunID
	if r.status == http.StatusAccepted {
		Expect(parsed.Status).To(Equal("accepted"))
	}
	return r
}

func ptr(s string) *string { return &s }

// bodyDigest is what a run records of its body: its SHA-256 in hex.
func bodyDigest[B string | []byte](body B) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

func post(id string, secretHeader *string, body string) reply {
	GinkgoHelper()
	return call(http.MethodPost, url(id), secretHeader, strings.NewReader(body))
}

func runsIn(ctx context.Context, ns string) []agentsv1alpha1.AgentRun {
	GinkgoHelper()
	list := &agentsv1alpha1.AgentRunList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	return list.Items
}

var _ = Describe("POST /api/webhooks/{endpointId}/receive", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	It("accepts a call with the right secret: 202, one AgentRun snapshot and its payload Secret", func(ctx SpecContext) {
		ep, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Model = "small"
			ep.Spec.ThreadNamingHint = "use the issue number"
		}})
		body := `{"action":"opened","issue":{"number":7}}`
		r := post(id, ptr(secret), body)
		Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))
		Expect(r.runID).To(MatchRegexp(`^github-issues-[0-9a-hjkmnp-tv-z]{26}$`))

		run := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelEndpoint, "github-issues"))
		Expect(run.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelAgent, "triage"))
		Expect(run.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "WebhookEndpoint"), HaveField("UID", ep.UID))))
		Expect(run.Spec.Prompt).To(Equal("Triage this."))
		Expect(run.Spec.Model).To(Equal("small"))
		Expect(run.Spec.ThreadNamingHint).To(Equal("use the issue number"))
		Expect(run.Spec.Owner.User).To(Equal("alice@example.com"))
		Expect(run.Spec.Trust).To(Equal(agentsv1alpha1.TrustStandard))
		Expect(run.Spec.Payload).To(Equal(&agentsv1alpha1.PayloadReference{SecretName: r.runID, Bytes: int64(len(body)), SHA256: bodyDigest(body), ContentType: "application/json"}))
		Expect(run.Status.State).To(BeEmpty(), "queued")

		payload := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, payload)).To(Succeed())
		Expect(string(payload.Type)).To(Equal(agentsv1alpha1.SecretTypeWebhookPayload))
		Expect(string(payload.Data[agentsv1alpha1.PayloadBodyKey])).To(Equal(body))
		Expect(payload.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "AgentRun"), HaveField("UID", run.UID))))
	})

	It("accepts an unauthenticated endpoint's call without a header, with trust Low, and appends to its thread", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
		})).To(Succeed())
		_, id := f.endpoint(ctx, endpointSpec{name: "status-page", unauthenticated: true, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
			ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		}})
		var r reply
		Eventually(func() int { r = post(id, nil, "down"); return r.status }).Should(Equal(http.StatusAccepted))
		run := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.Spec.Trust).To(Equal(agentsv1alpha1.TrustLow))
		Expect(run.Spec.TargetThreadRef.Name).To(Equal("ops"))
		Expect(run.Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelThread, "ops"))
	})

	It("answers an unknown ID without the header exactly like a real endpoint without it, and 404 with it", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		real := post(id, nil, "{}")
		unknown := post("no-such-endpoint-id", nil, "{}")
		Expect(real.status).To(Equal(http.StatusUnauthorized))
		Expect(real.code).To(Equal(answer.CodeUnauthorized))
		Expect(unknown.status).To(Equal(real.status))
		Expect(unknown.body).To(Equal(real.body))
		real.header.Del("Date")
		unknown.header.Del("Date")
		Expect(unknown.header).To(Equal(real.header))

		r := post("no-such-endpoint-id", ptr(secret), "{}")
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.code).To(Equal(answer.CodeNotFound))
	})

	It("answers 403 for a wrong secret, a secret not generated yet, repeated or padded headers", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		_, noHash := f.endpoint(ctx, endpointSpec{name: "new-endpoint"})
		for _, r := range []reply{
			post(id, ptr("wrong"), "{}"),
			post(id, ptr(secret+"x"), "{}"),
			post(id, ptr(strings.ToUpper(secret)), "{}"),
			post(noHash, ptr(secret), "{}"),
			post(noHash, ptr(""), "{}"),
		} {
			Expect(r.status).To(Equal(http.StatusForbidden), string(r.body))
			Expect(r.code).To(Equal(answer.CodeForbidden))
		}
		req, _ := http.NewRequest(http.MethodPost, url(id), strings.NewReader("{}"))
		req.Header.Add(agentsv1alpha1.SecretHeader, secret)
		req.Header.Add(agentsv1alpha1.SecretHeader, secret)
		Expect(do(req).status).To(Equal(http.StatusForbidden), "two secret headers are refused")
		Expect(runsIn(ctx, f.ns)).To(BeEmpty())
	})

	It("answers 405 with Allow: POST for other methods", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			r := call(m, url(id), ptr(secret), nil)
			Expect(r.status).To(Equal(http.StatusMethodNotAllowed))
			Expect(r.code).To(Equal(answer.CodeMethodNotAllowed))
			Expect(r.header.Get("Allow")).To(Equal("POST"))
		}
	})

	It("answers 422 for a paused endpoint, an unavailable agent and an unavailable thread", func(ctx SpecContext) {
		pausedEp, paused := f.endpoint(ctx, endpointSpec{name: "paused", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Paused = true }})
		r := post(paused, ptr(secret), "{}")
		Expect(r.status).To(Equal(http.StatusUnprocessableEntity))
		Expect(r.code).To(Equal(answer.CodeEndpointPaused))
		Expect(string(r.body)).To(ContainSubstring(`"message":"Endpoint is paused"`))
		Expect(pausedEp).NotTo(BeNil())

		_, noAgent := f.endpoint(ctx, endpointSpec{name: "no-agent", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.AgentRef.Name = "missing" }})
		Expect(post(noAgent, ptr(secret), "{}").code).To(Equal(answer.CodeAgentUnavailable))

		_, noThread := f.endpoint(ctx, endpointSpec{name: "no-thread", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
			ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		}})
		Expect(post(noThread, ptr(secret), "{}").code).To(Equal(answer.CodeThreadUnavailable))
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.Agent{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "other"},
			Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/"}},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "other"}},
		})).To(Succeed())
		Consistently(func() string { return post(noThread, ptr(secret), "{}").code }, 300*time.Millisecond).Should(Equal(answer.CodeThreadUnavailable),
			"a thread of another agent is unavailable")

		// Archiving the agent makes every endpoint of it answer 422.
		_, ok := f.endpoint(ctx, endpointSpec{name: "ok", secret: secret})
		agent := &agentsv1alpha1.Agent{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "triage"}, agent)).To(Succeed())
		patch := client.MergeFrom(agent.DeepCopy())
		agent.Spec.Archived = true
		Expect(k8sClient.Patch(ctx, agent, patch)).To(Succeed())
		Eventually(func() string { return post(ok, ptr(secret), "{}").code }).Should(Equal(answer.CodeAgentUnavailable))
	})

	It("answers 413 for a body over 1 MiB, by Content-Length and while reading a chunked body", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		big := bytes.Repeat([]byte("a"), MaxBodyBytes+1)
		r := call(http.MethodPost, url(id), ptr(secret), bytes.NewReader(big))
		Expect(r.status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(r.code).To(Equal(answer.CodePayloadTooLarge))

		req, _ := http.NewRequest(http.MethodPost, url(id), io.MultiReader(bytes.NewReader(big))) // no length: chunked
		req.ContentLength = -1
		req.Header.Set(agentsv1alpha1.SecretHeader, secret)
		Expect(req.TransferEncoding).To(BeEmpty())
		Expect(do(req).status).To(Equal(http.StatusRequestEntityTooLarge))

		exact := call(http.MethodPost, url(id), ptr(secret), bytes.NewReader(big[:MaxBodyBytes]))
		Expect(exact.status).To(Equal(http.StatusAccepted), "exactly 1 MiB is accepted")
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
	})

	It("rate-limits per endpoint: 429 with Retry-After, the first rejection of a window recorded once", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		_, other := f.endpoint(ctx, endpointSpec{name: "other", secret: secret})
		for range testRateLimit {
			Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusAccepted))
		}
		fakeClock.Step(20 * time.Second)
		first := post(id, ptr(secret), "{}")
		Expect(first.status).To(Equal(http.StatusTooManyRequests))
		Expect(first.code).To(Equal(answer.CodeRateLimited))
		Expect(first.header.Get("Retry-After")).To(Equal("40"))
		second := post(id, ptr(secret), "{}")
		Expect(second.status).To(Equal(http.StatusTooManyRequests))
		Expect(post(other, ptr(secret), "{}").status).To(Equal(http.StatusAccepted), "limits are per endpoint")

		var skipped []agentsv1alpha1.AgentRun
		for _, run := range runsIn(ctx, f.ns) {
			if run.Status.State == agentsv1alpha1.RunSkipped {
				skipped = append(skipped, run)
			}
		}
		Expect(skipped).To(HaveLen(1), "one skipped record per window")
		Expect(skipped[0].Status.Message).To(ContainSubstring("invocation rate limit of 5 calls per minute"))
		Expect(skipped[0].Spec.Payload).To(BeNil())

		fakeClock.Step(40 * time.Second)
		Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusAccepted), "the window slid")
	})

	It("checks the unauthenticated limit before the body is read", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "status-page", unauthenticated: true})
		for range testUnauthLimit {
			Expect(post(id, nil, "{}").status).To(Equal(http.StatusAccepted))
		}
		// A body too large by Content-Length would be 413; the pre-parse limit answers first.
		r := call(http.MethodPost, url(id), nil, bytes.NewReader(bytes.Repeat([]byte("a"), MaxBodyBytes+1)))
		Expect(r.status).To(Equal(http.StatusTooManyRequests))
		Expect(r.header.Get("Retry-After")).To(Equal("60"))
		Expect(runsIn(ctx, f.ns)).To(ContainElement(HaveField("Status.Message", ContainSubstring("unauthenticated rate limit of 3 calls per minute"))))
	})

	It("does not let a wrong-secret flood consume the endpoint's budget", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		for range 50 {
			Expect(post(id, ptr("guess"), "{}").status).To(Equal(http.StatusForbidden))
		}
		for range testRateLimit {
			Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusAccepted))
		}
	})

	It("applies the checks in the documented order", func(ctx SpecContext) {
		big := func() io.Reader { return bytes.NewReader(bytes.Repeat([]byte("a"), MaxBodyBytes+1)) }
		// 4 before 5: a paused endpoint still checks the secret first.
		_, paused := f.endpoint(ctx, endpointSpec{name: "paused", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Paused = true }})
		Expect(post(paused, ptr("wrong"), "{}").status).To(Equal(http.StatusForbidden))
		Expect(post(paused, nil, "{}").status).To(Equal(http.StatusUnauthorized))
		// 5 before 6: paused wins over an oversized body.
		Expect(call(http.MethodPost, url(paused), ptr(secret), big()).status).To(Equal(http.StatusUnprocessableEntity))
		// 6 before 7: once the budget is spent an oversized body is still 413.
		_, id := f.endpoint(ctx, endpointSpec{name: "busy", secret: secret})
		for range testRateLimit {
			Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusAccepted))
		}
		Expect(call(http.MethodPost, url(id), ptr(secret), big()).status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusTooManyRequests))
		// 7 before 8: a non-member owner's spent budget answers 429, not 422.
		_, stranger := f.endpoint(ctx, endpointSpec{name: "stranger", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Owner = &agentsv1alpha1.Owner{User: "mallory@example.com"}
		}})
		handler.invocation.Forget(stranger)
		for range testRateLimit {
			Expect(handler.invocation.Take(ctx, stranger, fakeClock.Now()).Allowed).To(BeTrue())
		}
		Expect(post(stranger, ptr(secret), "{}").status).To(Equal(http.StatusTooManyRequests))
	})

	It("makes no API request for any rejection", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		_, paused := f.endpoint(ctx, endpointSpec{name: "paused", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Paused = true }})
		for range testRateLimit {
			Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusAccepted))
		}
		Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusTooManyRequests)) // the first one is recorded
		before := apiRequests.Load()
		for range 5 {
			Expect(post("unknown-id", nil, "{}").status).To(Equal(http.StatusUnauthorized))
			Expect(post("unknown-id", ptr(secret), "{}").status).To(Equal(http.StatusNotFound))
			Expect(post(id, ptr("wrong"), "{}").status).To(Equal(http.StatusForbidden))
			Expect(post(id, nil, "{}").status).To(Equal(http.StatusUnauthorized))
			Expect(post(paused, ptr(secret), "{}").status).To(Equal(http.StatusUnprocessableEntity))
			Expect(call(http.MethodGet, url(id), nil, nil).status).To(Equal(http.StatusMethodNotAllowed))
			Expect(call(http.MethodPost, url(id), ptr(secret), bytes.NewReader(make([]byte, MaxBodyBytes+1))).status).To(Equal(http.StatusRequestEntityTooLarge))
			Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusTooManyRequests))
		}
		Expect(apiRequests.Load()).To(Equal(before), "rejections must be answered from memory")
	})

	It("skips the call, marked for the operator to pause the endpoint, when the owner is no longer a member", func(ctx SpecContext) {
		ep, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Owner = &agentsv1alpha1.Owner{User: "mallory@example.com"}
		}})
		r := post(id, ptr(secret), "{}")
		Expect(r.status).To(Equal(http.StatusUnprocessableEntity))
		Expect(r.code).To(Equal(answer.CodeOwnerNotMember))
		// Calls racing the operator's pause to the informer are not recorded again.
		for range 3 {
			Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusUnprocessableEntity))
		}
		runs := runsIn(ctx, f.ns)
		Expect(runs).To(HaveLen(1))
		Expect(runs[0].Status.State).To(Equal(agentsv1alpha1.RunSkipped))
		Expect(runs[0].Status.Message).To(ContainSubstring("owner mallory@example.com may no longer trigger Agent triage"))
		Expect(runs[0].Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelSkipReason, agentsv1alpha1.SkipReasonOwnerNotMember),
			"the mark the operator pauses the endpoint for")
		Expect(runs[0].Spec.Owner).To(Equal(ep.Spec.Owner))
		// No operator runs in this suite: the receiver wrote the conditions
		// with the skipped state, and kstatus reads the run as Failed.
		Expect(runs[0].Status.ObservedGeneration).To(Equal(runs[0].Generation))
		Expect(runs[0].Status.Conditions).To(ConsistOf(
			And(HaveField("Type", agentsv1alpha1.ConditionReady), HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", agentsv1alpha1.ReasonSkipped), HaveField("Message", runs[0].Status.Message),
				HaveField("ObservedGeneration", runs[0].Generation)),
			And(HaveField("Type", agentsv1alpha1.ConditionStalled), HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", agentsv1alpha1.ReasonSkipped)),
			And(HaveField("Type", agentsv1alpha1.ConditionSucceeded), HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", agentsv1alpha1.ReasonSkipped)),
		))

		// The operator alone writes endpoint status (its suite shows it
		// pausing for this run): the receiver left the endpoint untouched.
		got := &agentsv1alpha1.WebhookEndpoint{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ep), got)).To(Succeed())
		Expect(got.Status.Phase).To(Equal(agentsv1alpha1.EndpointActive))
		Expect(got.Status.PauseReason).To(BeEmpty())
		Expect(got.ResourceVersion).To(Equal(ep.ResourceVersion))
		Expect(got.ManagedFields).NotTo(ContainElement(HaveField("Manager", store.FieldOwner)))

		// Once the operator's pause is in status, calls are answered from it.
		patch := client.MergeFrom(got.DeepCopy())
		got.Status.Phase, got.Status.PauseReason = agentsv1alpha1.EndpointPaused, agentsv1alpha1.PauseReasonOwnerNotMember
		Expect(k8sClient.Status().Patch(ctx, got, patch)).To(Succeed())
		Eventually(func() string { return post(id, ptr(secret), "{}").code }).Should(Equal(answer.CodeEndpointPaused))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
	})

	It("answers 503 with Retry-After and leaves no run when the payload cannot be stored", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		// An admission policy refuses payload Secrets in this namespace.
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "no-payloads-" + f.ns},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptrTo(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{Expression: "object.type != 'agents.hookrun.dev/webhook-payload'", Message: "payloads refused by test"}},
			},
		}
		Expect(k8sClient.Create(ctx, policy)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(k8sClient.Delete(ctx, policy)).To(Succeed()) })
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"kubernetes.io/metadata.name": f.ns},
				}},
			},
		}
		Expect(k8sClient.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(k8sClient.Delete(ctx, binding)).To(Succeed()) })
		Eventually(func() error {
			probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, GenerateName: "probe-"}, Type: agentsv1alpha1.SecretTypeWebhookPayload}
			return k8sClient.Create(ctx, probe, client.DryRunAll)
		}).Should(MatchError(ContainSubstring("payloads refused by test")))

		r := post(id, ptr(secret), "{}")
		Expect(r.status).To(Equal(http.StatusServiceUnavailable))
		Expect(r.code).To(Equal(answer.CodeUnavailable))
		Expect(r.header.Get("Retry-After")).To(Equal("5"))
		Expect(runsIn(ctx, f.ns)).To(BeEmpty())
	})

	It("answers 503 triggering_disabled while the ConfigMap switch or the flag is on", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: receiverNamespace, Name: ConfigMapName},
			Data:       map[string]string{"triggering": "disabled"},
		}
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		Eventually(func() string { return post(id, ptr(secret), "{}").code }).Should(Equal(answer.CodeTriggeringDisabled))
		Expect(post("unknown", nil, "{}").code).To(Equal(answer.CodeTriggeringDisabled), "checked first")

		cm.Data["triggering"] = "enabled"
		Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		Eventually(func() int { return post(id, ptr(secret), "{}").status }).Should(Equal(http.StatusAccepted))
		cm.Data["triggering"] = "disabled"
		Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		Eventually(func() string { return post(id, ptr(secret), "{}").code }).Should(Equal(answer.CodeTriggeringDisabled))
		Expect(k8sClient.Delete(ctx, cm)).To(Succeed())
		Eventually(func() int { return post(id, ptr(secret), "{}").status }).Should(Equal(http.StatusAccepted))

		handler.triggering.flag = true
		DeferCleanup(func() { handler.triggering.flag = false })
		Expect(post(id, ptr(secret), "{}").code).To(Equal(answer.CodeTriggeringDisabled))
	})

	It("forgets a deleted endpoint: its URL answers like an unknown one", func(ctx SpecContext) {
		ep, id := f.endpoint(ctx, endpointSpec{name: "github-issues", secret: secret})
		Expect(post(id, ptr(secret), "{}").status).To(Equal(http.StatusAccepted))
		Expect(k8sClient.Delete(ctx, ep)).To(Succeed())
		Eventually(func() int { return post(id, ptr(secret), "{}").status }).Should(Equal(http.StatusNotFound))
		Expect(post(id, nil, "{}").status).To(Equal(http.StatusUnauthorized))
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(ep), &agentsv1alpha1.WebhookEndpoint{})
		}).Should(Satisfy(apierrors.IsNotFound))
	})
})

func ptrTo[T any](v T) *T { return &v }
