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
	"crypto/sha256"
	"encoding/hex"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Annotate records sc, the receive span's context, on run: the operator's
// spans of the run continue it. A tracestate over
// agentsv1alpha1.MaxTracestateBytes loses list members from its end.
func Annotate(run *agentsv1alpha1.AgentRun, sc trace.SpanContext) {
	if !sc.IsValid() {
		return
	}
	carrier := propagation.MapCarrier{}
	Propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc.WithTraceState(bounded(sc.TraceState()))), carrier)
	if run.Annotations == nil {
		run.Annotations = map[string]string{}
	}
	run.Annotations[agentsv1alpha1.AnnotationTraceparent] = carrier.Get("traceparent")
	if ts := carrier.Get("tracestate"); ts != "" {
		run.Annotations[agentsv1alpha1.AnnotationTracestate] = ts
	}
}

// bounded is ts cut to agentsv1alpha1.MaxTracestateBytes by dropping list
// members from its end (the W3C rule: the first are the most recent).
func bounded(ts trace.TraceState) trace.TraceState {
	for ts.Len() > 0 && len(ts.String()) > agentsv1alpha1.MaxTracestateBytes {
		var last string
		ts.Walk(func(key, _ string) bool { last = key; return true })
		ts = ts.Delete(last)
	}
	return ts
}

// RunContext is the context the operator's spans of run continue, as a
// remote parent: the receive span the receiver annotated the run with;
// for a run without a valid annotation (created by an administrator, or by
// an older receiver) a span of status.traceID derived from the run's UID,
// which no one exports, so that all the run's spans share one parent. It is
// not valid when the run has neither.
func RunContext(run *agentsv1alpha1.AgentRun) trace.SpanContext {
	if tp := run.Annotations[agentsv1alpha1.AnnotationTraceparent]; tp != "" {
		carrier := propagation.MapCarrier{"traceparent": tp, "tracestate": run.Annotations[agentsv1alpha1.AnnotationTracestate]}
		if sc := trace.SpanContextFromContext(Propagator.Extract(context.Background(), carrier)); sc.IsValid() {
			return sc
		}
	}
	id, err := trace.TraceIDFromHex(run.Status.TraceID)
	if err != nil {
		return trace.SpanContext{}
	}
	return derived(run, id)
}

// NewRunContext is RunContext for a run that has none yet: a new trace
// (new), under the span derived from the run's UID.
func NewRunContext(run *agentsv1alpha1.AgentRun, newTraceID func() trace.TraceID) trace.SpanContext {
	if sc := RunContext(run); sc.IsValid() {
		return sc
	}
	return derived(run, newTraceID())
}

// derived is the run's own parent span in trace id: its span ID is the
// start of the SHA-256 of the run's UID, the same on every replica.
func derived(run *agentsv1alpha1.AgentRun, id trace.TraceID) trace.SpanContext {
	sum := sha256.Sum256([]byte(run.UID))
	var span trace.SpanID
	copy(span[:], sum[:])
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: id, SpanID: span, TraceFlags: trace.FlagsSampled, Remote: true})
}

// TraceID is the form of status.traceID: 32 lower-case hex digits.
func TraceID(sc trace.SpanContext) string {
	id := sc.TraceID()
	return hex.EncodeToString(id[:])
}

// RunAttributes are the attributes of a span of run.
func RunAttributes(run *agentsv1alpha1.AgentRun) []attribute.KeyValue {
	return []attribute.KeyValue{
		AttrEndpoint.String(run.Namespace + "/" + run.Spec.EndpointRef.Name),
		AttrRun.String(run.Name),
		AttrAgent.String(run.Spec.AgentRef.Name),
	}
}
