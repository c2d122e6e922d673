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
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ScopeName names hookrun's tracer (the instrumentation scope of its spans).
const ScopeName = "github.com/hookrun/hookrun"

// The spans hookrun makes, one per step of a run.
const (
	// SpanReceive is the receiver's answer to a call that stores a run.
	SpanReceive = "receive"
	// SpanAdmission is the operator taking the run out of its queue.
	SpanAdmission = "admission"
	// SpanSend is the A2A request that sends the run to its agent.
	SpanSend = "send"
	// SpanPoll is one A2A request that looks at the run's task.
	SpanPoll = "poll"
	// SpanCancel is the A2A request that cancels the task of a run past
	// its timeout.
	SpanCancel = "cancel"
)

// The attributes of hookrun's spans.
const (
	// AttrEndpoint is the WebhookEndpoint, as namespace/name.
	AttrEndpoint = attribute.Key("hookrun.endpoint")
	// AttrRun is the AgentRun's name (the runId the caller got).
	AttrRun = attribute.Key("hookrun.run")
	// AttrAgent is the Agent's name (in the endpoint's namespace).
	AttrAgent = attribute.Key("hookrun.agent")
	// AttrSender is the endpoint's sender type (receive span).
	AttrSender = attribute.Key("hookrun.sender")
	// AttrRunState is the run's state admission wrote (admission span).
	AttrRunState = attribute.Key("hookrun.run.state")
	// AttrTaskState is the A2A task's state the agent answered with
	// (send, poll and cancel spans).
	AttrTaskState = attribute.Key("hookrun.task.state")
	// AttrStatusCode is the HTTP status the receiver answered (receive span).
	AttrStatusCode = attribute.Key("http.response.status_code")
)

// The standard variables that point the exporter at a collector when
// --otlp-endpoint is not set.
const (
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
)

// tracesPath is where an OTLP/HTTP collector takes traces.
const tracesPath = "/v1/traces"

// FlushTimeout bounds exporting the last spans when a binary stops (its
// provider's Shutdown).
const FlushTimeout = 5 * time.Second

// Propagator reads and writes the W3C traceparent and tracestate headers.
var Propagator = propagation.TraceContext{}

// NewProvider is the tracer provider of one binary, named service (the
// service.name of its spans). Its spans go over OTLP/HTTP to endpoint (the
// collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces is
// added), or when endpoint is empty to where the standard OTEL_EXPORTER_OTLP_*
// variables say; when neither is set, nowhere. Either way every span has
// its IDs, so traces propagate with export off. A sender's sampling
// decision is kept (a parent not sampled makes spans that are not
// recorded); a new trace is always sampled. Shutdown flushes the exporter.
func NewProvider(ctx context.Context, endpoint, service string) (*sdktrace.TracerProvider, error) {
	exp, err := newExporter(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	if exp == nil {
		return NewLocalProvider(service), nil
	}
	return sdktrace.NewTracerProvider(append(providerOptions(service), sdktrace.WithBatcher(exp))...), nil
}

// NewLocalProvider is a tracer provider that exports nothing: spans get
// their IDs and propagate, at the cost of a few allocations each.
func NewLocalProvider(service string, opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(append(providerOptions(service), opts...)...)
}

// providerOptions are the sampler and resource of hookrun's providers.
func providerOptions(service string) []sdktrace.TracerProviderOption {
	return []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))),
	}
}

// newExporter is the OTLP/HTTP exporter for endpoint or the environment, or
// nil when tracing is off.
func newExporter(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
	var opts []otlptracehttp.Option
	switch {
	case endpoint != "":
		u, err := TracesURL(endpoint)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	case os.Getenv(envEndpoint) == "" && os.Getenv(envTracesEndpoint) == "":
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("creating the OTLP trace exporter: %w", err)
	}
	return exp, nil
}

// TracesURL is the URL traces are posted to for a collector's base URL
// (http or https, a host, optionally a path prefix): base + /v1/traces, as
// for OTEL_EXPORTER_OTLP_ENDPOINT.
func TracesURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("--otlp-endpoint must be an http or https URL such as http://otel-collector:4318")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + tracesPath
	return u.String(), nil
}
