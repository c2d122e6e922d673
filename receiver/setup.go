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
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/membership"
	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/rejections"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

// ServiceName is the receiver's service.name in its traces.
const ServiceName = "hookrun-receiver"

// ConfigMapName is the ConfigMap in the receiver's namespace whose key
// "triggering" set to "disabled" answers every call with 503 at run time.
const ConfigMapName = "hookrun-receiver"

// Dependencies are the receiver's sources of nondeterminism; tests inject their own.
type Dependencies struct {
	Clock      clock.PassiveClock
	Rand       io.Reader
	Membership membership.Checker
	// TracerProvider makes the receive spans; nil: one that exports
	// nothing (traces still propagate to the operator).
	TracerProvider trace.TracerProvider
	// TokenClock is what OIDC senders' tokens are checked against (exp,
	// nbf) and their issuers' key reads paced by; nil: Clock. Tokens of the
	// API server carry its real time, whatever Clock a test injects.
	TokenClock clock.PassiveClock
	// OIDCClient reads the keys of the issuers in --oidc-issuers; nil: a
	// client with oidc.FetchTimeout.
	OIDCClient *http.Client
}

// CacheOptions limits the receiver's informers to the watched namespaces
// and its ConfigMap cache to the one ConfigMap it reads.
func CacheOptions(opts *Options) cache.Options {
	o := cache.Options{
		// The receiver keeps every endpoint, Agent and AgentThread in
		// memory: only the fields it reads.
		DefaultTransform: endpoints.StripToUse,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {
				Namespaces: map[string]cache.Config{opts.Namespace: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", ConfigMapName),
			},
			// The signing keys of signed senders: only the operator's
			// signing-key Secrets in the receiver's own namespace (a Role,
			// not a ClusterRole, lets it read them).
			&corev1.Secret{}: {
				Namespaces: map[string]cache.Config{opts.Namespace: {}},
				Label:      labels.SelectorFromSet(labels.Set{agentsv1alpha1.LabelSigningKey: "true"}),
			},
		},
	}
	if len(opts.WatchNamespaces) > 0 {
		o.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range opts.WatchNamespaces {
			o.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return o
}

// Setup wires the receiver into mgr: informers feeding the in-memory table,
// the runtime switch, the readiness checks and the HTTP server on
// opts.ListenAddress. It returns the handler for tests.
func Setup(ctx context.Context, mgr ctrl.Manager, opts *Options, deps Dependencies) (*Handler, error) {
	deps, err := deps.withDefaults(mgr)
	if err != nil {
		return nil, err
	}
	h, err := newHandler(ctx, mgr, opts, deps)
	if err != nil {
		return nil, err
	}
	synced, err := watchInformers(ctx, mgr, h.table, &h.triggering)
	if err != nil {
		return nil, err
	}
	ready := allSynced(synced)
	if err := mgr.AddReadyzCheck("informers", func(*http.Request) error {
		if !ready() {
			return errors.New("informers have not synced yet")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck(servedCheckName, servesEndpoint(h.table)); err != nil {
		return nil, err
	}
	srv := &server{addr: opts.ListenAddress, handler: h, ready: ready, log: h.log, delay: opts.ShutdownDelay, drained: make(chan struct{})}
	if err := mgr.AddReadyzCheck(drainingCheckName, srv.readyz); err != nil {
		return nil, err
	}
	if err := mgr.Add(srv); err != nil {
		return nil, err
	}
	if err := mgr.Add(&rejections.Writer{
		Counter: h.rejections, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Until: srv.drained,
		Key:      types.NamespacedName{Namespace: opts.Namespace, Name: agentsv1alpha1.RejectionReportPrefix + opts.PodName},
		Interval: opts.RejectionReportInterval, Clock: deps.Clock, Log: h.log,
	}); err != nil {
		return nil, err
	}
	return h, nil
}

// withDefaults fills in what tests did not inject: the real clock,
// crypto/rand and the membership check against mgr's API server.
func (deps Dependencies) withDefaults(mgr ctrl.Manager) (Dependencies, error) {
	if deps.OIDCClient == nil {
		deps.OIDCClient = oidcClient()
	}
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	if deps.TokenClock == nil {
		deps.TokenClock = deps.Clock
	}
	if deps.Rand == nil {
		deps.Rand = rand.Reader
	}
	if deps.Membership == nil {
		checker, err := membership.NewForAPIServer(mgr.GetClient(), mgr.GetConfig(), mgr.GetHTTPClient(), deps.Clock, membership.DefaultTTL)
		if err != nil {
			return deps, err
		}
		deps.Membership = checker
	}
	if deps.TracerProvider == nil {
		deps.TracerProvider = tracing.NewLocalProvider(ServiceName)
	}
	return deps, nil
}

// newHandler builds the handler from opts, its metrics registered, its table
// telling the backlog and the handler of changed and deleted endpoints.
func newHandler(ctx context.Context, mgr ctrl.Manager, opts *Options, deps Dependencies) (*Handler, error) {
	m, err := newMetrics(crmetrics.Registry)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		table:                endpoints.NewTable(),
		store:                store.NewKube(mgr.GetClient(), mgr.GetAPIReader()),
		membership:           deps.Membership,
		clock:                deps.Clock,
		rand:                 deps.Rand,
		log:                  ctrl.Log.WithName("receiver"),
		metrics:              m,
		tracer:               deps.TracerProvider.Tracer(tracing.ScopeName),
		invocationLimit:      opts.RateLimit,
		unauthenticatedLimit: opts.UnauthenticatedRateLimit,
		backlog:              limits.NewBacklog(opts.MaxQueuedRunsPerEndpoint, opts.MaxQueuedRunsPerAgent),
		bodies:               limits.NewBodyBudget(opts.MaxInflightBodyBytes),
		bodyReadTimeout:      BodyReadTimeout,
		rejections:           rejections.NewCounter(),
	}
	h.triggering.flag = opts.DisableTriggering
	if h.invocation, h.preParse, err = rateLimiters(mgr, opts, m.storeErrors.Inc, h.log); err != nil {
		return nil, err
	}
	get, err := clusterGetter(mgr)
	if err != nil {
		return nil, err
	}
	issuers, err := oidc.ParseIssuers(opts.OIDCIssuers)
	if err != nil {
		return nil, err
	}
	apiAudiences, err := oidc.APIAudiences(ctx, mgr.GetConfig(), opts.Namespace)
	if err != nil {
		h.log.Error(err, "the API server's audiences are unknown: an OIDC endpoint whose audience is one of them is not refused")
	}
	h.oidc = oidc.NewVerifier(oidc.Config{Cluster: get, Issuers: issuers, Client: deps.OIDCClient, Clock: deps.TokenClock,
		MaxLifetime: opts.OIDCMaxTokenLifetime, APIAudiences: apiAudiences,
		Failed: func(issuer string, err error) {
			h.log.Error(err, "reading an OIDC issuer's keys; calls of its senders are answered 503 until they are read", "issuer", cmp.Or(issuer, "the cluster's"))
		}})
	h.table.OnUpsert = h.backlog.Observe
	h.table.OnDelete = h.forget
	return h, nil
}

// clusterGetter reads paths of mgr's API server with the receiver's
// credentials: the cluster's issuer discovery.
func clusterGetter(mgr ctrl.Manager) (oidc.Getter, error) {
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	rc := dc.RESTClient()
	return func(ctx context.Context, path string) ([]byte, error) {
		return rc.Get().AbsPath(path).DoRaw(ctx)
	}, nil
}

// oidcClient is the HTTP client that reads the listed issuers' keys. It
// follows at most three redirects, each to an https URL: a redirect must
// not take the read to plain HTTP.
func oidcClient() *http.Client {
	return &http.Client{Timeout: oidc.FetchTimeout, CheckRedirect: httpsRedirectsOnly}
}

func httpsRedirectsOnly(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "https" || len(via) >= 3 {
		return fmt.Errorf("redirected to %s: an issuer's keys are read over https, through at most three redirects", req.URL.Redacted())
	}
	return nil
}

// watchInformers feeds the table and the runtime switch from mgr's informers: every
// kind is tried, and the errors are joined. It returns what tells whether
// each informer has synced.
func watchInformers(ctx context.Context, mgr ctrl.Manager, t *endpoints.Table, sw *triggering) ([]toolscache.InformerSynced, error) {
	var synced []toolscache.InformerSynced
	watch := func(obj client.Object, upsert, remove func(client.Object)) error {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { withObject(o, upsert) },
			UpdateFunc: func(_, o any) { withObject(o, upsert) },
			DeleteFunc: func(o any) { withObject(o, remove) },
		})
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		synced = append(synced, reg.HasSynced)
		return nil
	}
	errs := []error{
		watch(&agentsv1alpha1.WebhookEndpoint{}, typed(t.UpsertEndpoint), typed(t.DeleteEndpoint)),
		watch(&agentsv1alpha1.Agent{}, typed(t.UpsertAgent), typed(t.DeleteAgent)),
		watch(&agentsv1alpha1.AgentThread{}, typed(t.UpsertThread), typed(t.DeleteThread)),
		watch(&corev1.Secret{}, typed(t.UpsertKey), typed(t.DeleteKey)),
		watch(&corev1.ConfigMap{}, typed(sw.observe), typed(sw.forget)),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return synced, nil
}

// allSynced tells whether every informer has synced.
func allSynced(synced []toolscache.InformerSynced) func() bool {
	return func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	}
}

// withObject unwraps informer tombstones.
func withObject(o any, f func(client.Object)) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if obj, ok := o.(client.Object); ok {
		f(obj)
	}
}

func typed[T client.Object](f func(T)) func(client.Object) {
	return func(o client.Object) {
		if t, ok := o.(T); ok {
			f(t)
		}
	}
}

// rateLimiters makes the invocation and unauthenticated limits: each
// replica's own, or kept in the store of --rate-limit-store (its errors
// counted by storeErrors), whose client closes when mgr stops.
func rateLimiters(mgr manager.Manager, opts *Options, storeErrors func(), log logr.Logger) (invocation, preParse limits.RateLimiter, err error) {
	inv, pre := limits.NewLocal(opts.RateLimit), limits.NewLocal(opts.UnauthenticatedRateLimit)
	if opts.RateLimitStore == "" {
		return inv, pre, nil
	}
	store, closeStore, err := limits.NewStore(opts.RateLimitStore, opts.RateLimitStorePassword, storeErrors, log)
	if err != nil {
		return nil, nil, err
	}
	invocation = &limits.Shared{Name: limitInvocation, Store: store, Local: inv}
	preParse = &limits.Shared{Name: limitUnauthenticated, Store: store, Local: pre}
	return invocation, preParse, mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return closeStore()
	}))
}
