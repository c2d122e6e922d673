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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/oidc/oidctest"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/test/testenv"
)

// The receive route runs as `hookrun receiver` wires it, against a real
// kube-apiserver (envtest), behind a real HTTP server. Endpoint status is
// written by the specs themselves, as the operator would.

const (
	receiverNamespace = clusterinstall.Namespace
	testRateLimit     = 5
	testUnauthLimit   = 3
	// reportPod names the suite's receiver and so its rejection report.
	reportPod      = "receiver-suite"
	reportInterval = time.Second
)

var (
	testEnv   *envtest.Environment
	k8sClient client.Client
	scheme    = runtime.NewScheme()
	fakeClock = clocktesting.NewFakeClock(time.Now())
	handler   *Handler
	// receiverCache is the receiver's informer cache.
	receiverCache cache.Cache
	srv           *httptest.Server
	// apiRequests counts the receiver's requests to the API server, but watches.
	apiRequests atomic.Int64
	// spans holds the receiver's finished spans.
	spans = tracetest.NewInMemoryExporter()
	// listedIssuer is an OIDC issuer on loopback in --oidc-issuers;
	// downIssuer one listed too, which stopped before it was ever read.
	listedIssuer *oidctest.Issuer
	downIssuer   *oidctest.Issuer
	// tokenClock is the real time, moved by what a spec adds: the API
	// server's tokens carry its real time, and fakeClock may be hours
	// ahead of it.
	tokenClock = &skewedClock{}
)

// skewedClock is the real clock plus skew.
type skewedClock struct{ skew atomic.Int64 }

func (c *skewedClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// add moves the clock by d until the spec ends.
func (c *skewedClock) add(d time.Duration) {
	c.skew.Add(int64(d))
	DeferCleanup(func() { c.skew.Add(-int64(d)) })
}

func TestReceiver(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(20 * time.Millisecond)
	RunSpecs(t, "Receiver suite")
}

type countingTransport struct{ next http.RoundTripper }

// RoundTrip counts every request but watches and the writes of the
// replica's rejection report, which come once a reportInterval whatever the
// calls (report_envtest_test.go).
func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Query().Get("watch") != "true" && !strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/"+receiverNamespace+"/configmaps") {
		apiRequests.Add(1)
	}
	return c.next.RoundTrip(r)
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	Expect(os.Getenv("KUBEBUILDER_ASSETS")).NotTo(BeEmpty(), "KUBEBUILDER_ASSETS is not set: run `make test`")
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(agentsv1alpha1.AddToScheme(scheme)).To(Succeed())

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(testEnv.Stop)
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	// The receiver's RBAC, service account (in receiverNamespace) and the
	// admission policies, as installed in a cluster: the receiver below runs
	// as its service account.
	Expect(clusterinstall.InstallAccessControl(context.Background(), k8sClient, testenv.Root())).To(Succeed())

	counted := testenv.AsServiceAccount(cfg, receiverNamespace, clusterinstall.ReceiverServiceAccount)
	counted.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt} }
	opts := NewOptions()
	opts.ListenAddress = "127.0.0.1:0"
	opts.Namespace = receiverNamespace
	opts.RateLimit = testRateLimit
	opts.UnauthenticatedRateLimit = testUnauthLimit
	opts.PodName = reportPod
	opts.RejectionReportInterval = reportInterval
	listedIssuer = oidctest.NewIssuer()
	DeferCleanup(listedIssuer.Close)
	downIssuer = oidctest.NewIssuer()
	downIssuer.Close()
	opts.OIDCIssuers = []string{listedIssuer.URL, downIssuer.URL}
	mgr, err := ctrl.NewManager(counted, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  CacheOptions(opts),
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	handler, err = Setup(ctx, mgr, opts, Dependencies{
		Clock: fakeClock, TracerProvider: tracing.NewLocalProvider(ServiceName, sdktrace.WithSyncer(spans)),
		OIDCClient: listedIssuer.Client(), TokenClock: tokenClock,
	})
	Expect(err).NotTo(HaveOccurred())
	// The suite's replica has four evaluation turns, as a 4-core one: its
	// specs of one endpoint's two turns hold them while another endpoint
	// is served. The specs of the turns set GOMAXPROCS's.
	handler.filterGate.SetLimit(4)
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	DeferCleanup(func() { cancel(); <-done })
	Eventually(mgr.GetCache().WaitForCacheSync).WithArguments(ctx).Should(BeTrue())
	receiverCache = mgr.GetCache()

	srv = httptest.NewUnstartedServer(handler)
	srv.Config = newHTTPServer(handler)
	srv.Start()
	DeferCleanup(srv.Close)
})

// fixture is one namespace with an Agent "triage" that alice may trigger.
type fixture struct {
	ns string
}

func newFixture(ctx context.Context) *fixture {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rcv-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	f := &fixture{ns: ns.Name}
	Expect(k8sClient.Create(ctx, &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "triage"},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/"}},
	})).To(Succeed())
	f.grantTrigger(ctx, "alice@example.com")
	return f
}

func (f *fixture) grantTrigger(ctx context.Context, user string) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, GenerateName: "agent-user-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hookrun-agent-user"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
}

// endpointSpec describes a test endpoint.
type endpointSpec struct {
	name            string
	secret          string // "" with authenticated: no hash yet
	unauthenticated bool
	mutate          func(*agentsv1alpha1.WebhookEndpoint)
}

var idCounter atomic.Int64

// endpoint creates an endpoint with a status as the operator writes it and
// waits until the receiver serves it. It returns the endpoint ID.
func (f *fixture) endpoint(ctx context.Context, s endpointSpec) (*agentsv1alpha1.WebhookEndpoint, string) {
	GinkgoHelper()
	ep := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: s.name},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun, AllowUnauthenticated: s.unauthenticated,
			Owner: &agentsv1alpha1.Owner{User: "alice@example.com", Groups: []string{"team-a"}},
		},
	}
	if s.mutate != nil {
		s.mutate(ep)
	}
	Expect(k8sClient.Create(ctx, ep)).To(Succeed())
	id := fmt.Sprintf("%s%010d", strings.Repeat("x", 33), idCounter.Add(1))
	patch := client.MergeFrom(ep.DeepCopy())
	ep.Status.EndpointID = id
	ep.Status.Phase = agentsv1alpha1.EndpointActive
	if s.secret != "" {
		ep.Status.SecretHash = agentsv1alpha1.SecretHash([]byte(s.secret))
	}
	Expect(k8sClient.Status().Patch(ctx, ep, patch)).To(Succeed())
	Eventually(func() *endpoints.Endpoint { return handler.table.Lookup(id) }).ShouldNot(BeNil())
	Eventually(func() string { return handler.table.Lookup(id).Obj.ResourceVersion }).Should(Equal(ep.ResourceVersion))
	return ep, id
}

func url(id string) string { return srv.URL + "/api/webhooks/" + id + "/receive" }
