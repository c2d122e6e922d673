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

package tracing

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// traceparentKey is the traceparent header in canonical form.
const traceparentKey = "Traceparent"

// StartReceive starts the receiver's span of a call that is about to store
// run, back-dated to start (when the call came in), and records its context
// on the run (Annotate) for the operator's spans. Only such calls get a
// span: a refused, ignored or duplicate call costs nothing of tracing.
//
// When the sender is trusted (an authenticated endpoint) a valid
// traceparent in header (with its tracestate) is the span's parent: the run
// continues the sender's trace. Otherwise, where anyone may call, it is
// only a link of a new trace: no caller can put a run into a trace of its
// choosing. A malformed traceparent, or more than one, is ignored (a new
// trace).
func StartReceive(ctx context.Context, tracer trace.Tracer, header http.Header, start time.Time, sender agentsv1alpha1.SenderType, trusted bool, run *agentsv1alpha1.AgentRun) trace.Span {
	opts := []trace.SpanStartOption{
		trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(RunAttributes(run)...),
		trace.WithAttributes(AttrSender.String(string(sender))),
	}
	var remote trace.SpanContext
	if len(header[traceparentKey]) == 1 {
		remote = trace.SpanContextFromContext(Propagator.Extract(ctx, propagation.HeaderCarrier(header)))
	}
	switch {
	case remote.IsValid() && trusted:
		ctx = trace.ContextWithRemoteSpanContext(ctx, remote)
	case remote.IsValid():
		opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: remote.WithTraceState(trace.TraceState{})}))
	default:
		opts = append(opts, trace.WithNewRoot())
	}
	_, span := tracer.Start(ctx, SpanReceive, opts...)
	Annotate(run, span.SpanContext())
	return span
}

// EndReceive ends the receive span with the call's answer.
func EndReceive(span trace.Span, code int) {
	span.SetAttributes(AttrStatusCode.Int(code))
	if code >= 500 {
		span.SetStatus(codes.Error, "the run could not be stored")
	}
	span.End()
}
