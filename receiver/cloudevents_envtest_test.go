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
	"io"
	"net/http"
	"strings"
	"sync"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/senders"
	"github.com/hookrun/hookrun/receiver/internal/store"
	"github.com/hookrun/hookrun/test/testenv"
)

// The CloudEvents sender type, with the CloudEvents Go SDK as the client.

// sdkCall is what one SDK Send put on the wire and got back.
type sdkCall struct {
	reply
	sent []byte // the request body as sent
}

// roundTripFunc lets the SDK's HTTP client go through do, to see the answer.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sendCloudEvent sends e with the CloudEvents SDK to id on base with the
// Bearer token (none when ""), in structured or binary mode.
func sendCloudEvent(ctx context.Context, base, id, token string, e cloudevents.Event, structured bool) sdkCall {
	GinkgoHelper()
	var got sdkCall
	opts := []cehttp.Option{
		cehttp.WithTarget(base + "/api/webhooks/" + id + "/receive"),
		cehttp.WithRoundTripper(roundTripFunc(func(req *http.Request) (*http.Response, error) {
			body, err := io.ReadAll(req.Body)
			Expect(err).NotTo(HaveOccurred())
			got.sent = body
			req.Body = io.NopCloser(bytes.NewReader(body))
			got.reply = do(req)
			return &http.Response{StatusCode: got.status, Header: got.header, Body: io.NopCloser(bytes.NewReader(got.body)), Request: req}, nil
		})),
	}
	if token != "" {
		opts = append(opts, cehttp.WithHeader("Authorization", "Bearer "+token))
	}
	p, err := cehttp.New(opts...)
	Expect(err).NotTo(HaveOccurred())
	c, err := cloudevents.NewClient(p)
	Expect(err).NotTo(HaveOccurred())
	if structured {
		ctx = binding.WithForceStructured(ctx)
	} else {
		ctx = binding.WithForceBinary(ctx)
	}
	res := c.Send(ctx, e)
	Expect(cloudevents.IsUndelivered(res)).To(BeFalse(), "%v", res)
	return got
}

// newCloudEvent is an event as a cluster service would send it.
func newCloudEvent(source, id, typ string) cloudevents.Event {
	GinkgoHelper()
	e := cloudevents.NewEvent()
	e.SetID(id)
	e.SetSource(source)
	e.SetType(typ)
	Expect(e.SetData(cloudevents.ApplicationJSON, map[string]any{"order": "A-1001", "reason": "arrived broken"})).To(Succeed())
	return e
}

// rawCloudEvent POSTs body with headers and the Bearer token to id.
func rawCloudEvent(id, body string, headers map[string]string) reply {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPost, url(id), strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+senderSecret)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(req)
}

// options sends the abuse-protection handshake to id.
func options(id string, headers map[string]string) *http.Response {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodOptions, url(id), nil)
	Expect(err).NotTo(HaveOccurred())
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	_, _ = io.Copy(io.Discard, resp.Body)
	Expect(resp.Body.Close()).To(Succeed())
	return resp
}

var _ = Describe("Sender type CloudEvents", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	DescribeTable("takes an event from the CloudEvents SDK: 202, the run records type, id, source and subject, the payload is the body as sent, the same source and id again is its run",
		func(ctx SpecContext, structured bool) {
			_, id := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents), senderSecret)
			e := newCloudEvent("/apis/v1/namespaces/shop/orders", "A-1001-1", "com.example.order.refunded")
			e.SetSubject("orders/A-1001")
			r := sendCloudEvent(ctx, srv.URL, id, senderSecret, e, structured)
			Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))

			run := &agentsv1alpha1.AgentRun{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
			Expect(run.Spec.Sender).To(Equal(&agentsv1alpha1.RunSender{
				Type: agentsv1alpha1.SenderCloudEvents, Event: "com.example.order.refunded", DeliveryID: "A-1001-1",
				Source: "/apis/v1/namespaces/shop/orders", Subject: "orders/A-1001",
			}))
			payload := &corev1.Secret{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, payload)).To(Succeed())
			Expect(payload.Data[agentsv1alpha1.PayloadBodyKey]).To(Equal(r.sent))
			if structured {
				Expect(run.Spec.Payload.ContentType).To(HavePrefix("application/cloudevents+json"))
				Expect(string(r.sent)).To(ContainSubstring(`"specversion":"1.0"`), "the whole envelope")
			} else {
				Expect(string(r.sent)).To(MatchJSON(`{"order":"A-1001","reason":"arrived broken"}`), "the event's data")
			}

			again := sendCloudEvent(ctx, srv.URL, id, senderSecret, e, !structured)
			Expect(again.status).To(Equal(http.StatusAccepted))
			Expect(again.runID).To(Equal(r.runID), "the same source and id, in either mode")

			By("the same id from another source is another delivery; the source and id never run together")
			for _, other := range []cloudevents.Event{
				newCloudEvent("/apis/v1/namespaces/shop/orders/A", "-1001-1", "com.example.order.refunded"),
				newCloudEvent("/apis/v1/namespaces/shop/order", "sA-1001-1", "com.example.order.refunded"),
				newCloudEvent("/apis/v1/namespaces/billing", "A-1001-1", "com.example.order.refunded"),
			} {
				o := sendCloudEvent(ctx, srv.URL, id, senderSecret, other, structured)
				Expect(o.status).To(Equal(http.StatusAccepted))
				Expect(o.runID).NotTo(Equal(r.runID), "%s %s", other.Source(), other.ID())
			}
			Expect(runsIn(ctx, f.ns)).To(HaveLen(4))
		},
		Entry("binary mode", false),
		Entry("structured mode", true),
	)

	It("refuses the SDK's call without the Bearer token (401) or with a wrong one (403), like Bearer", func(ctx SpecContext) {
		_, id := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents), senderSecret)
		e := newCloudEvent("urn:test", "1", "com.example.test")
		for _, structured := range []bool{false, true} {
			r := sendCloudEvent(ctx, srv.URL, id, "", e, structured)
			Expect(r.status).To(Equal(http.StatusUnauthorized))
			Expect(r.body).To(Equal(answer.Unauthorized.Body()))
			r = sendCloudEvent(ctx, srv.URL, id, strings.Replace(senderSecret, "a-sender", "b-sender", 1), e, structured)
			Expect(r.status).To(Equal(http.StatusForbidden))
			Expect(r.code).To(Equal(answer.CodeForbidden))
			r = sendCloudEvent(ctx, srv.URL, strings.Repeat("u", 43), senderSecret, e, structured)
			Expect(r.status).To(Equal(http.StatusNotFound), "an unknown ID with a credential")
		}
		Expect(rawCloudEvent(id, "{}", map[string]string{"Authorization": "Basic " + senderSecret}).status).To(Equal(http.StatusForbidden))
		Expect(runsIn(ctx, f.ns)).To(BeEmpty())
	})

	It("answers a call that is not one CloudEvents 1.0 event 400 bad_request, a batch 415 unsupported_media_type, without a run or an API request", func(ctx SpecContext) {
		_, id := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents), senderSecret)
		binary := map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "urn:test", "ce-type": "com.example.test", "Content-Type": "application/json"}
		without := func(k string) map[string]string {
			h := map[string]string{}
			for kk, v := range binary {
				if kk != k {
					h[kk] = v
				}
			}
			return h
		}
		structured := map[string]string{"Content-Type": "application/cloudevents+json; charset=utf-8"}
		before := apiRequests.Load()
		for _, bad := range []struct {
			body    string
			headers map[string]string
		}{
			{`{}`, without("ce-id")},
			{`{}`, without("ce-source")},
			{`{}`, without("ce-type")},
			{`{}`, without("ce-specversion")},
			{`{}`, map[string]string{"ce-specversion": "0.3", "ce-id": "1", "ce-source": "urn:test", "ce-type": "t"}},
			{`{"specversion":"1.0","source":"urn:test","type":"t"}`, structured},
			{`{"specversion":"1.0","id":"","source":"urn:test","type":"t"}`, structured},
			{`{"specversion":"1.0","id":7,"source":"urn:test","type":"t"}`, structured},
			{`{"id":"1","source":"urn:test","type":"t"}`, structured},
			{`[{"specversion":"1.0","id":"1","source":"urn:test","type":"t"}]`, structured},
			{`not json`, structured},
		} {
			r := rawCloudEvent(id, bad.body, bad.headers)
			Expect(r.status).To(Equal(http.StatusBadRequest), "%s %v", bad.body, bad.headers)
			Expect(r.code).To(Equal(answer.CodeBadRequest))
			Expect(string(r.body)).To(ContainSubstring("specversion 1.0, id, source and type are required"))
		}
		batch := `[{"specversion":"1.0","id":"1","source":"urn:test","type":"t"}]`
		for _, ct := range []string{"application/cloudevents-batch+json", "Application/CloudEvents-Batch+JSON; charset=utf-8", "application/cloudevents+avro"} {
			r := rawCloudEvent(id, batch, map[string]string{"Content-Type": ct})
			Expect(r.status).To(Equal(http.StatusUnsupportedMediaType), ct)
			Expect(r.code).To(Equal(answer.CodeUnsupportedMediaType))
		}
		Expect(apiRequests.Load()).To(Equal(before), "refused from memory")
		Expect(runsIn(ctx, f.ns)).To(BeEmpty())

		By("an event with no Content-Type and no data is an event")
		Expect(rawCloudEvent(id, "", without("Content-Type")).status).To(Equal(http.StatusAccepted))
	})

	It("filters on the event type with spec.sender.events", func(ctx SpecContext) {
		_, id := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents, "com.example.order.refunded"), senderSecret)
		r := sendCloudEvent(ctx, srv.URL, id, senderSecret, newCloudEvent("urn:shop", "1", "com.example.order.created"), false)
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(string(r.body)).To(MatchJSON(`{"status":"ignored"}`))
		r = sendCloudEvent(ctx, srv.URL, id, senderSecret, newCloudEvent("urn:shop", "2", "com.example.order.refunded"), true)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
	})

	It("answers the abuse-protection handshake of a CloudEvents endpoint, without a credential, run or API request; any other OPTIONS 405", func(ctx SpecContext) {
		_, ce := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents), senderSecret)
		_, bearer := f.senderEndpoint(ctx, "bearer", senderSpec(agentsv1alpha1.SenderBearer), senderSecret)
		origin := map[string]string{"WebHook-Request-Origin": "eventemitter.example.com"}
		before := apiRequests.Load()
		for range 50 {
			resp := options(ce, origin)
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(resp.Header.Get("WebHook-Allowed-Origin")).To(Equal("eventemitter.example.com"))
			Expect(resp.Header.Get("Allow")).To(Equal(http.MethodPost))
			Expect(resp.Header.Get("WebHook-Allowed-Rate")).To(Equal("5"), "the invocation rate limit per minute")
		}
		Expect(options(ce, map[string]string{"WebHook-Request-Origin": "eventemitter.example.com", "WebHook-Request-Rate": "120"}).StatusCode).To(Equal(http.StatusOK))
		for _, refused := range []struct {
			id      string
			headers map[string]string
		}{
			{ce, nil},                         // no origin
			{bearer, origin},                  // another sender type
			{strings.Repeat("u", 43), origin}, // no such endpoint
		} {
			resp := options(refused.id, refused.headers)
			Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed))
			Expect(resp.Header.Get("Allow")).To(Equal(http.MethodPost))
			Expect(resp.Header.Get("WebHook-Allowed-Origin")).To(BeEmpty())
		}
		req, err := http.NewRequest(http.MethodGet, url(ce), nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("WebHook-Request-Origin", "eventemitter.example.com")
		Expect(do(req).status).To(Equal(http.StatusMethodNotAllowed))
		Expect(apiRequests.Load()).To(Equal(before), "answered from memory")
		Expect(runsIn(ctx, f.ns)).To(BeEmpty())
	})

	It("starts one run for one source and id sent to two receivers at once", func(ctx SpecContext) {
		second := startSecondReceiver(ctx)
		_, id := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents), senderSecret)
		Eventually(func() *endpoints.Endpoint { return second.Lookup(id) }).ShouldNot(BeNil())

		e := newCloudEvent("//storage.googleapis.com/projects/_/buckets/bucket", "1096434104173400", "google.cloud.storage.object.v1.finalized")
		var wg sync.WaitGroup
		replies := make([]sdkCall, 2)
		for i, base := range []string{srv.URL, second.url} {
			wg.Go(func() {
				defer GinkgoRecover()
				replies[i] = sendCloudEvent(ctx, base, id, senderSecret, e, true)
			})
		}
		wg.Wait()
		Expect(replies[0].status).To(Equal(http.StatusAccepted), string(replies[0].body))
		Expect(replies[1].status).To(Equal(http.StatusAccepted), string(replies[1].body))
		Expect(replies[1].runID).To(Equal(replies[0].runID))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))

		By("a redelivery in the other mode, with other data, is still the same delivery: the body does not name it")
		e2 := e.Clone()
		Expect(e2.SetData(cloudevents.ApplicationJSON, map[string]any{"other": true})).To(Succeed())
		r := sendCloudEvent(ctx, second.url, id, senderSecret, e2, false)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(r.runID).To(Equal(replies[0].runID))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
	})

	It("never stores another body of the same length as the payload of a delivery whose run waits for its own", func(ctx SpecContext) {
		ep, id := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents), senderSecret)
		headers := map[string]string{"ce-specversion": "1.0", "ce-id": "42", "ce-source": "urn:shop", "ce-type": "order.created", "Content-Type": "application/json"}
		first, second := `{"order":"aaaa"}`, `{"order":"bbbb"}` // the same length
		h := http.Header{}
		for k, v := range headers {
			h.Set(k, v)
		}
		d := senders.DescribeCloudEvent(h, []byte(first))
		Expect(d.Refusal).To(BeNil())

		By("the first call's run is stored, its payload not yet (its writer is still at it)")
		asReceiver := testenv.AsServiceAccount(testEnv.Config, receiverNamespace, clusterinstall.ReceiverServiceAccount)
		direct, err := client.New(asReceiver, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		run, err := handler.newRun(ctx, handler.table.Lookup(id), &d, fakeClock.Now())
		Expect(err).NotTo(HaveOccurred())
		run.Name = store.DeliveryRunName(ep, d.Identity(), nil)
		run.Spec.Payload = &agentsv1alpha1.PayloadReference{SecretName: run.Name, Bytes: int64(len(first)), SHA256: bodyDigest(first), ContentType: "application/json"}
		Expect(direct.Create(ctx, run)).To(Succeed())

		By("the same source and id with another body of the same length: its body is not that run's payload")
		r := rawCloudEvent(id, second, headers)
		Expect(r.status).To(Equal(http.StatusServiceUnavailable), "the first writer has not stored its payload yet: retry")
		payload := &corev1.Secret{}
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: run.Name}, payload))).To(BeTrue(), "nothing stored under the first call's run")

		By("once the first writer's payload is there, the same delivery is answered with its run")
		Expect(store.NewKube(direct, direct).CreatePayload(ctx, run, map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte(first)})).To(Succeed())
		r = rawCloudEvent(id, second, headers)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(r.runID).To(Equal(run.Name))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: run.Name}, payload)).To(Succeed())
		Expect(string(payload.Data[agentsv1alpha1.PayloadBodyKey])).To(Equal(first))
	})

	It("answers 400 bad_request to an attribute holding a character the CloudEvents String type excludes, in binary and structured mode", func(ctx SpecContext) {
		_, id := f.senderEndpoint(ctx, "ce", senderSpec(agentsv1alpha1.SenderCloudEvents), senderSecret)
		binary := func(attr, value string) map[string]string {
			h := map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "urn:test", "ce-type": "t", "Content-Type": "application/json"}
			h["ce-"+attr] = value
			return h
		}
		structured := map[string]string{"Content-Type": "application/cloudevents+json"}
		for _, bad := range []struct {
			body    string
			headers map[string]string
		}{
			{`{}`, binary("id", "a\tb")},
			{`{}`, binary("source", "urn:\u0085")},
			{`{}`, binary("type", "t\uFFFE")},
			{`{}`, binary("subject", "s\xff")},
			{`{"specversion":"1.0","id":"a\u0000","source":"urn:test","type":"t"}`, structured},
			{`{"specversion":"1.0","id":"1","source":"urn:\u001b[31m","type":"t"}`, structured},
			{`{"specversion":"1.0","id":"1","source":"urn:test","type":"t\ud800"}`, structured},
			{`{"specversion":"1.0","id":"1","source":"urn:test","type":"t","subject":"\u009f"}`, structured},
		} {
			r := rawCloudEvent(id, bad.body, bad.headers)
			Expect(r.status).To(Equal(http.StatusBadRequest), "%s %q", bad.body, bad.headers)
			Expect(r.code).To(Equal(answer.CodeBadRequest))
			Expect(string(r.body)).To(ContainSubstring("the String type excludes"))
		}
		Expect(runsIn(ctx, f.ns)).To(BeEmpty())
		Expect(rawCloudEvent(id, `{}`, binary("source", "urn:é")).status).To(Equal(http.StatusAccepted), "other non-ASCII characters are Strings")
	})
})
