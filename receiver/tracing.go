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
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/tracing"
)

// traceparentKey is the traceparent header in canonical form.
const traceparentKey = "Traceparent"

// startReceive starts the receive span of a call that is about to store
// run, back-dated to when the call came in, and records its context on the
// run (tracing.Annotate) for the operator's spans. Only such calls get a
// span: a refused, ignored or duplicate call costs nothing of tracing.
//
// On an authenticated endpoint a valid traceparent (with its tracestate)
// from the sender is the span's parent: the run continues the sender's
// trace. On an unauthenticated endpoint, where anyone may call, it is only
// a link of a new trace: no caller can put a run into a trace of its
// choosing. A malformed traceparent, or more than one, is ignored (a new
// trace).
func (h *Handler) startReceive(c *callState, run *agentsv1alpha1.AgentRun) trace.Span {
	ctx := c.r.Context()
	opts := []trace.SpanStartOption{
		trace.WithTimestamp(c.start),
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(tracing.RunAttributes(run)...),
		trace.WithAttributes(tracing.AttrSender.String(string(c.snd.Kind))),
	}
	var remote trace.SpanContext
	if len(c.r.Header[traceparentKey]) == 1 {
		remote = trace.SpanContextFromContext(tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(c.r.Header)))
	}
	switch {
	case remote.IsValid() && !c.ep.Spec.AllowUnauthenticated:
		ctx = trace.ContextWithRemoteSpanContext(ctx, remote)
	case remote.IsValid():
		opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: remote.WithTraceState(trace.TraceState{})}))
	default:
		opts = append(opts, trace.WithNewRoot())
	}
	_, span := h.tracer.Start(ctx, tracing.SpanReceive, opts...)
	tracing.Annotate(run, span.SpanContext())
	return span
}

// endReceive ends the receive span with the call's answer.
func endReceive(span trace.Span, code int) {
	span.SetAttributes(tracing.AttrStatusCode.Int(code))
	if code >= 500 {
		span.SetStatus(codes.Error, "the run could not be stored")
	}
	span.End()
}
