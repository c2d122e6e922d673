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
	"testing"

	"go.opentelemetry.io/otel/trace"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestTracesURL(t *testing.T) {
	for base, want := range map[string]string{
		"http://otel-collector:4318":    "http://otel-collector:4318/v1/traces",
		"http://otel-collector:4318/":   "http://otel-collector:4318/v1/traces",
		"https://otel.example.com/otlp": "https://otel.example.com/otlp/v1/traces",
		"otel-collector:4318":           "",
		"ftp://otel.example.com":        "",
		"http://":                       "",
	} {
		got, err := TracesURL(base)
		if (err == nil) != (want != "") || got != want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
}

// With no endpoint and none in the environment, spans still get IDs.
func TestLocalProviderPropagates(t *testing.T) {
	t.Setenv(envEndpoint, "")
	t.Setenv(envTracesEndpoint, "")
	tp, err := NewProvider(context.Background(), "", "test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer(ScopeName).Start(context.Background(), "x")
	if !span.SpanContext().IsValid() || !span.SpanContext().IsSampled() {
		t.Errorf("span context %+v: want a valid, sampled one", span.SpanContext())
	}
	span.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestRunContext(t *testing.T) {
	run := &agentsv1alpha1.AgentRun{}
	run.UID = "6b1c2a4e-0000-4000-8000-000000000001"
	if RunContext(run).IsValid() {
		t.Error("a run without trace has no context")
	}
	id := trace.TraceID{1, 2, 3}
	sc := NewRunContext(run, func() trace.TraceID { return id })
	if sc.TraceID() != id || !sc.IsRemote() {
		t.Errorf("new context %+v", sc)
	}
	run.Status.TraceID = TraceID(sc)
	if again := RunContext(run); !again.Equal(sc) {
		t.Errorf("from status.traceID: %+v, want %+v (the same parent on every replica)", again, sc)
	}
	Annotate(run, sc)
	run.Annotations[agentsv1alpha1.AnnotationTraceparent] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if got := RunContext(run); got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || got.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("from the annotation: %+v", got)
	}
	run.Annotations[agentsv1alpha1.AnnotationTraceparent] = "garbage"
	if got := RunContext(run); !got.Equal(sc) {
		t.Errorf("a malformed annotation falls back to status.traceID: %+v", got)
	}
}
