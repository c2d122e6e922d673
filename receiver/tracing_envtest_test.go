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
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/tracing"
)

// The sender's span: a call with senderParent continues (or links) it.
const (
	senderTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	senderSpan   = "00f067aa0ba902b7"
	senderParent = "00-" + senderTrace + "-" + senderSpan + "-01"
)

// tracedPost posts body to id with the secret (if any) and the trace
// headers given, name then value.
func tracedPost(id string, secretHeader *string, headers ...string) reply {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPost, url(id), strings.NewReader(`{"action":"opened"}`))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if secretHeader != nil {
		req.Header.Set(agentsv1alpha1.SecretHeader, *secretHeader)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	return do(req)
}

// receiveSpan is the one receive span of run.
func receiveSpan(run string) tracetest.SpanStub {
	GinkgoHelper()
	var found []tracetest.SpanStub
	for _, s := range spans.GetSpans() {
		for _, a := range s.Attributes {
			if a.Key == tracing.AttrRun && a.Value.AsString() == run {
				found = append(found, s)
			}
		}
	}
	Expect(found).To(HaveLen(1), "one receive span of run %s", run)
	return found[0]
}

// storedRun reads run ns/name from the API server.
func storedRun(ctx context.Context, ns, name string) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	run := &agentsv1alpha1.AgentRun{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run)).To(Succeed())
	return run
}

var _ = Describe("Traces", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	It("continues the sender's trace on an authenticated endpoint: the run records its receive span, with the sender's tracestate", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "traced", secret: secret})
		r := tracedPost(id, ptr(secret), "traceparent", senderParent, "tracestate", "vendor=abc,other=x")
		Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))

		s := receiveSpan(r.runID)
		Expect(s.Name).To(Equal(tracing.SpanReceive))
		Expect(s.SpanContext.TraceID().String()).To(Equal(senderTrace))
		Expect(s.Parent.SpanID().String()).To(Equal(senderSpan))
		Expect(s.Parent.IsRemote()).To(BeTrue())
		Expect(s.Links).To(BeEmpty())
		Expect(s.SpanKind).To(Equal(trace.SpanKindServer))
		Expect(s.Attributes).To(ContainElements(
			tracing.AttrEndpoint.String(f.ns+"/traced"), tracing.AttrRun.String(r.runID),
			tracing.AttrAgent.String("triage"), tracing.AttrStatusCode.Int(http.StatusAccepted)))
		Expect(s.Resource.Attributes()).To(ContainElement(HaveField("Value.AsString()", ServiceName)))

		run := storedRun(ctx, f.ns, r.runID)
		Expect(run.Annotations).To(HaveKeyWithValue(agentsv1alpha1.AnnotationTraceparent,
			"00-"+senderTrace+"-"+s.SpanContext.SpanID().String()+"-01"))
		Expect(run.Annotations).To(HaveKeyWithValue(agentsv1alpha1.AnnotationTracestate, "vendor=abc,other=x"))
	})

	It("starts a new trace on an unauthenticated endpoint: the sender's traceparent is only a link", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "open", unauthenticated: true})
		r := tracedPost(id, nil, "traceparent", senderParent, "tracestate", "vendor=abc")
		Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))

		s := receiveSpan(r.runID)
		Expect(s.SpanContext.TraceID().String()).NotTo(Equal(senderTrace))
		Expect(s.Parent.IsValid()).To(BeFalse())
		Expect(s.Links).To(HaveLen(1))
		Expect(s.Links[0].SpanContext.TraceID().String()).To(Equal(senderTrace))
		Expect(s.Links[0].SpanContext.SpanID().String()).To(Equal(senderSpan))
		Expect(s.Links[0].SpanContext.TraceState().Len()).To(BeZero())

		run := storedRun(ctx, f.ns, r.runID)
		Expect(run.Annotations).To(HaveKeyWithValue(agentsv1alpha1.AnnotationTraceparent,
			"00-"+s.SpanContext.TraceID().String()+"-"+s.SpanContext.SpanID().String()+"-01"))
		Expect(run.Annotations).NotTo(HaveKey(agentsv1alpha1.AnnotationTracestate))
	})

	DescribeTable("ignores a malformed traceparent: a new trace, no link",
		func(ctx SpecContext, headers ...string) {
			_, id := f.endpoint(ctx, endpointSpec{name: "malformed", secret: secret})
			r := tracedPost(id, ptr(secret), headers...)
			Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))

			s := receiveSpan(r.runID)
			Expect(s.SpanContext.TraceID().String()).NotTo(Equal(senderTrace))
			Expect(s.Parent.IsValid()).To(BeFalse())
			Expect(s.Links).To(BeEmpty())
			Expect(storedRun(ctx, f.ns, r.runID).Annotations).To(And(
				HaveKeyWithValue(agentsv1alpha1.AnnotationTraceparent, ContainSubstring(s.SpanContext.TraceID().String())),
				Not(HaveKey(agentsv1alpha1.AnnotationTracestate))))
		},
		Entry("upper-case hex", "traceparent", strings.ToUpper(senderParent), "tracestate", "vendor=abc"),
		Entry("a short trace ID", "traceparent", "00-"+senderTrace[2:]+"-"+senderSpan+"-01"),
		Entry("an all-zero trace ID", "traceparent", "00-"+strings.Repeat("0", 32)+"-"+senderSpan+"-01"),
		Entry("version ff", "traceparent", "ff"+senderParent[2:]),
		Entry("extra fields in version 00", "traceparent", senderParent+"-00"),
		Entry("two traceparent headers", "traceparent", senderParent, "traceparent", senderParent),
		Entry("garbage of header size", "traceparent", strings.Repeat("x", 16<<10)),
	)

	It("keeps at most 512 bytes of the sender's tracestate, dropping list members from the end", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "big-state", secret: secret})
		members := make([]string, 32)
		for i := range members {
			members[i] = "k" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "=" + strings.Repeat("v", 40)
		}
		r := tracedPost(id, ptr(secret), "traceparent", senderParent, "tracestate", strings.Join(members, ","))
		Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))

		state := storedRun(ctx, f.ns, r.runID).Annotations[agentsv1alpha1.AnnotationTracestate]
		Expect(len(state)).To(BeNumerically("<=", agentsv1alpha1.MaxTracestateBytes))
		Expect(state).To(HavePrefix(members[0] + "," + members[1] + ","))
		Expect(receiveSpan(r.runID).SpanContext.TraceID().String()).To(Equal(senderTrace))
	})

	It("makes no span for a refused call", func(ctx SpecContext) {
		_, id := f.endpoint(ctx, endpointSpec{name: "refused", secret: secret})
		before := len(spans.GetSpans())
		Expect(tracedPost(id, ptr("wrong-"+secret), "traceparent", senderParent).status).To(Equal(http.StatusForbidden))
		Expect(tracedPost(id, nil, "traceparent", senderParent).status).To(Equal(http.StatusUnauthorized))
		for _, s := range spans.GetSpans()[before:] {
			Expect(s.Attributes).NotTo(ContainElement(tracing.AttrEndpoint.String(f.ns + "/refused")))
		}
	})
})
