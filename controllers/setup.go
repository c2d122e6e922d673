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

package controllers

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/accounting"
	"github.com/hookrun/hookrun/controllers/agent"
	"github.com/hookrun/hookrun/controllers/endpoint"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/status"
	"github.com/hookrun/hookrun/controllers/membership"
	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/controllers/run"
	"github.com/hookrun/hookrun/controllers/thread"
	"github.com/hookrun/hookrun/controllers/tracing"
)

// Dependencies are the operator's sources of nondeterminism; tests inject
// their own.
type Dependencies struct {
	Clock      clock.PassiveClock
	Rand       io.Reader
	Membership membership.Checker
	// A2A makes the clients runs are sent with.
	A2A run.A2AClientFactory
	// Cards reads agent cards; nil: over HTTP, through the agent allow-list.
	Cards agent.CardReader
	// TracerProvider makes the spans of runs; nil: one that exports
	// nothing (traceparents still reach the agents).
	TracerProvider trace.TracerProvider
}

// ClientCacheOptions keeps Secret data out of the operator's cache: typed
// Secret reads go to the API server, while watches on Secrets use metadata
// only.
func ClientCacheOptions() *client.CacheOptions { return cached.ClientOptions() }

// ServiceName is the operator's service.name in its traces.
const ServiceName = run.ServiceName

// MetadataKey is the key under which a run's message metadata carries
// hookrun's facts about the run (run.MetadataKey).
const MetadataKey = run.MetadataKey

// CacheOptions are the operator's cache options: what it caches of which
// kind, in which namespaces (see cached.Options).
func CacheOptions(namespace string) cache.Options { return cached.Options(namespace) }

// SetupOperator registers the field indexes and every reconciler of the
// operator with mgr. Zero-valued dependencies get production defaults.
func SetupOperator(ctx context.Context, mgr ctrl.Manager, opts *OperatorOptions, deps Dependencies) error {
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	if deps.Rand == nil {
		deps.Rand = rand.Reader
	}
	allow, err := opts.AgentAllowList()
	if err != nil {
		return err
	}
	issuers, err := oidc.ParseIssuers(opts.OIDCIssuers)
	if err != nil {
		return err
	}
	apiAudiences, err := oidc.APIAudiences(ctx, mgr.GetConfig(), opts.Namespace)
	if err != nil {
		mgr.GetLogger().Error(err, "the API server's audiences are unknown: an OIDC endpoint whose audience is one of them is not marked OIDCAudienceInvalid")
	}
	callTimeout := cmp.Or(opts.A2ACallTimeout, DefaultA2ACallTimeout)
	clients := a2a.NewClients(allow, callTimeout)
	if deps.A2A == nil {
		deps.A2A = run.NewHTTPA2AClient(clients)
	}
	if deps.Cards == nil {
		deps.Cards = agent.NewHTTPCardReader(allow, clients)
	}
	if deps.TracerProvider == nil {
		deps.TracerProvider = tracing.NewLocalProvider(ServiceName)
	}
	tracer := run.NewRunTracer(deps.TracerProvider)
	if deps.Membership == nil {
		checker, err := membership.NewForAPIServer(mgr.GetClient(), mgr.GetConfig(), mgr.GetHTTPClient(), deps.Clock, membership.DefaultTTL)
		if err != nil {
			return err
		}
		deps.Membership = checker
	}
	if err := cached.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	run.ServeMetricsFrom(mgr.GetCache(), mgr.Elected())
	endpoint.ServeMetricsFrom(mgr.GetCache(), mgr.Elected())
	endpoints := &endpoint.Reconciler{
		Client:               mgr.GetClient(),
		APIReader:            mgr.GetAPIReader(),
		MetadataReader:       mgr.GetCache(),
		Recorder:             mgr.GetEventRecorder(status.FieldOwner),
		Clock:                deps.Clock,
		Rand:                 deps.Rand,
		Membership:           deps.Membership,
		PublicBaseURL:        opts.PublicBaseURL,
		RunCountDelay:        opts.RunCountDelay,
		OwnerRecheckInterval: opts.OwnerRecheckInterval,
		Namespace:            opts.Namespace,
		OIDCIssuers:          issuers,
		APIAudiences:         apiAudiences,
	}
	cards := agent.NewCardRefreshes()
	for name, r := range map[string]interface{ SetupWithManager(ctrl.Manager) error }{
		"WebhookEndpoint": endpoints,
		"WebhookEndpoint runs": &accounting.Reconciler{
			Client: mgr.GetClient(), MetadataReader: mgr.GetCache(), Clock: deps.Clock,
			RunHistoryLimit: opts.RunHistoryLimit, RunTTL: opts.RunTTL, PayloadTTL: opts.PayloadTTL,
			RunCountDelay: opts.RunCountDelay, Namespace: opts.Namespace,
		},
		"Agent": &agent.Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), AllowList: allow,
			ReadCard: deps.Cards, Clock: deps.Clock, Cards: cards, FollowAgent: run.FollowAgent,
		},
		"AgentThread": &thread.Reconciler{Client: mgr.GetClient()},
		"AgentRun admission": &run.AdmissionReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Metadata: mgr.GetCache(),
			Recorder: mgr.GetEventRecorder(status.FieldOwner), Clock: deps.Clock, Tracer: tracer,
		},
		"AgentRun execution": &run.ExecutionReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(status.FieldOwner),
			Clock: deps.Clock, Rand: deps.Rand, NewClient: deps.A2A, Workers: opts.DispatchWorkers, CallTimeout: callTimeout, Tracer: tracer,
			Cards: cards,
		},
		"rejection report": &accounting.ReportReconciler{Client: mgr.GetClient(), Clock: deps.Clock},
	} {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the %s reconciler: %w", name, err)
		}
	}
	return nil
}
