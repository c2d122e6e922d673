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

package run

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// a2aRequest is what an agent saw of one A2A request: its JSON-RPC method
// and its trace headers.
type a2aRequest struct{ method, traceparent, tracestate string }

// a2aRequests are the A2A requests peer got, by method and trace headers.
func a2aRequests(peer *a2apeers.Peer) []a2aRequest {
	var out []a2aRequest
	for _, r := range peer.Requests() {
		var call struct{ Method string }
		_ = json.Unmarshal(r.Body, &call)
		out = append(out, a2aRequest{call.Method, r.Header.Get("traceparent"), r.Header.Get("tracestate")})
	}
	return out
}

// runSpans are the operator's finished spans of run ns/name, by span name.
func runSpans(ns, name string) map[string][]tracetest.SpanStub {
	out := map[string][]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		var endpoint, run bool
		for _, a := range s.Attributes {
			endpoint = endpoint || a.Key == tracing.AttrEndpoint && a.Value.AsString() == ns+"/hook"
			run = run || a.Key == tracing.AttrRun && a.Value.AsString() == name
		}
		if endpoint && run {
			out[s.Name] = append(out[s.Name], s)
		}
	}
	return out
}

// traceparentOf is the traceparent header of span.
func traceparentOf(s tracetest.SpanStub) string {
	return "00-" + s.SpanContext.TraceID().String() + "-" + s.SpanContext.SpanID().String() + "-01"
}

var _ = Describe("Traces of runs", func() {
	const (
		senderTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		receiveSpan = "00f067aa0ba902b7"
	)
	var (
		ns    string
		agent *a2apeers.Peer
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		agent = startPeer()
		a := newAgent(ns, "triage")
		a.Spec.A2A.URL = agent.URL
		a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
		a.Spec.RunTimeout = &metav1.Duration{Duration: time.Minute}
		create(ctx, a)
	})

	It("records the receiver's trace in status.traceID and sends, polls and cancels in it, each A2A request with its span's traceparent", func(ctx SpecContext) {
		run := queueTestRun(ctx, ns, "traced", "hang on", func(run *agentsv1alpha1.AgentRun) {
			run.Annotations = map[string]string{
				agentsv1alpha1.AnnotationTraceparent: "00-" + senderTrace + "-" + receiveSpan + "-01",
				agentsv1alpha1.AnnotationTracestate:  "vendor=abc",
			}
		})
		Eventually(func() string { return get(ctx, run).Status.TraceID }).Should(Equal(senderTrace))
		Eventually(func() []string {
			var methods []string
			for _, r := range a2aRequests(agent) {
				methods = append(methods, r.method)
			}
			return methods
		}).Should(ContainElements("message/send", "tasks/get"))
		// Past its timeout: the task is canceled.
		fakeClock.Step(2 * time.Minute)
		Eventually(func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }).Should(Equal(agentsv1alpha1.RunError))

		spans := runSpans(ns, "traced")
		Expect(spans[tracing.SpanAdmission]).To(HaveLen(1))
		Expect(spans[tracing.SpanSend]).To(HaveLen(1))
		Expect(spans[tracing.SpanPoll]).NotTo(BeEmpty())
		Expect(spans[tracing.SpanCancel]).To(HaveLen(1))
		byTraceparent := map[string]tracetest.SpanStub{}
		for _, ss := range spans {
			for _, s := range ss {
				Expect(s.SpanContext.TraceID().String()).To(Equal(senderTrace), "span %s", s.Name)
				Expect(s.Parent.SpanID().String()).To(Equal(receiveSpan), "span %s continues the receive span", s.Name)
				Expect(s.Attributes).To(ContainElements(tracing.AttrEndpoint.String(ns+"/hook"),
					tracing.AttrRun.String("traced"), tracing.AttrAgent.String("triage")), "span %s", s.Name)
				Expect(s.Resource.Attributes()).To(ContainElement(HaveField("Value.AsString()", ServiceName)))
				byTraceparent[traceparentOf(s)] = s
			}
		}
		Expect(spans[tracing.SpanAdmission][0].Attributes).To(ContainElement(tracing.AttrRunState.String(string(agentsv1alpha1.RunRunning))))
		Expect(spans[tracing.SpanSend][0].SpanKind).To(Equal(trace.SpanKindClient))
		Expect(spans[tracing.SpanSend][0].Attributes).To(ContainElement(HaveField("Key", tracing.AttrTaskState)))

		want := map[string]string{"message/send": tracing.SpanSend, "tasks/get": tracing.SpanPoll, "tasks/cancel": tracing.SpanCancel}
		requests := a2aRequests(agent)
		Expect(requests).NotTo(BeEmpty())
		for _, r := range requests {
			Expect(byTraceparent).To(HaveKey(r.traceparent), "%s carries the traceparent of a span of the run", r.method)
			Expect(byTraceparent[r.traceparent].Name).To(Equal(want[r.method]))
			Expect(r.tracestate).To(Equal("vendor=abc"))
		}
	})

	It("starts a trace for a run that came without one, records it, and sends in it", func(ctx SpecContext) {
		run := queueTestRun(ctx, ns, "untraced", "{}", nil)
		Eventually(func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }).Should(Equal(agentsv1alpha1.RunSuccess))
		traceID := get(ctx, run).Status.TraceID
		Expect(traceID).To(MatchRegexp(`^[0-9a-f]{32}$`))
		requests := a2aRequests(agent)
		Expect(requests).NotTo(BeEmpty())
		Expect(requests[0].method).To(Equal("message/send"))
		for _, r := range requests {
			Expect(r.traceparent).To(MatchRegexp(`^00-`+traceID+`-[0-9a-f]{16}-01$`), "%s carries the run's trace", r.method)
		}
		spans := runSpans(ns, "untraced")
		Expect(spans[tracing.SpanAdmission]).To(HaveLen(1))
		Expect(spans[tracing.SpanAdmission][0].SpanContext.TraceID().String()).To(Equal(traceID))
		Expect(traceparentOf(spans[tracing.SpanSend][0])).To(Equal(requests[0].traceparent))
		// The spans of a run that came without a trace share one parent.
		Expect(spans[tracing.SpanSend][0].Parent.SpanID()).To(Equal(spans[tracing.SpanAdmission][0].Parent.SpanID()))
	})

	It("keeps no trace of a finished run in the cache", func() {
		run := &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			agentsv1alpha1.AnnotationTraceparent: "00-" + senderTrace + "-" + receiveSpan + "-01",
			agentsv1alpha1.AnnotationTracestate:  "vendor=abc",
		}}, Spec: agentsv1alpha1.AgentRunSpec{Payload: &agentsv1alpha1.PayloadReference{SecretName: "p"}}}
		run.Status.TraceID = senderTrace
		queued := run.DeepCopy()
		cached.Strip(queued)
		Expect(queued.Annotations).To(HaveLen(2))
		Expect(queued.Status.TraceID).To(Equal(senderTrace))
		run.Status.State = agentsv1alpha1.RunSuccess
		cached.Strip(run)
		Expect(run.Annotations).To(BeNil())
		Expect(run.Status.TraceID).To(BeEmpty())
	})
})
