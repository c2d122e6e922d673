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
	"context"
	"crypto/rand"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/tracing"
)

// ServiceName is the operator's service.name in its traces.
const ServiceName = "hookrun-operator"

// The operator's spans of a run (admission, send, poll, cancel) are children
// of the run's context (tracing.RunContext): the receive span the receiver
// annotated the run with. A2A requests made inside a span carry it as
// their traceparent (the a2a client), so the agent can join the trace.

// RunTracer starts the operator's spans of runs (SetupOperator gives the
// reconcilers one, NewRunTracer).
type RunTracer struct{ tracer trace.Tracer }

// NewRunTracer starts the spans of runs with tp's tracer of hookrun's scope.
func NewRunTracer(tp trace.TracerProvider) RunTracer {
	return RunTracer{tp.Tracer(tracing.ScopeName)}
}

// start starts span name of run inside ctx.
func (t RunTracer) start(ctx context.Context, name string, run *agentsv1alpha1.AgentRun, sc trace.SpanContext) (context.Context, trace.Span) {
	if sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	kind := trace.SpanKindInternal
	if name != tracing.SpanAdmission {
		kind = trace.SpanKindClient
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(tracing.RunAttributes(run)...))
}

// admit records run's trace in its status (a new one for a run that
// carries none) and starts its admission span. cached is the run as
// admission read it, run the status it is about to write.
func (t RunTracer) admit(ctx context.Context, cached, run *agentsv1alpha1.AgentRun) trace.Span {
	sc := tracing.NewRunContext(cached, newTraceID)
	run.Status.TraceID = tracing.TraceID(sc)
	_, span := t.start(ctx, tracing.SpanAdmission, run, sc)
	return span
}

// call starts the span of an A2A request for run (send, poll, cancel).
func (t RunTracer) call(ctx context.Context, name string, run *agentsv1alpha1.AgentRun) (context.Context, trace.Span) {
	return t.start(ctx, name, run, tracing.RunContext(run))
}

// endAdmission ends an admission span with the state written, or err.
func endAdmission(span trace.Span, run *agentsv1alpha1.AgentRun, err error) {
	span.SetAttributes(tracing.AttrRunState.String(string(run.Status.State)))
	endSpan(span, err)
}

// endCall ends the span of an A2A request with the task's state, or err.
func endCall(span trace.Span, state string, err error) {
	if state != "" {
		span.SetAttributes(tracing.AttrTaskState.String(state))
	}
	endSpan(span, err)
}

func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// newTraceID is a random trace ID, for a run that came without one.
func newTraceID() trace.TraceID {
	var id trace.TraceID
	_, _ = rand.Read(id[:])
	return id
}

// taskState is the state of task, "" when there is none.
func taskState(task *a2a.Task) string {
	if task == nil {
		return ""
	}
	return string(task.State)
}
