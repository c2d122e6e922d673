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
	"context"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/test/a2apeers"
	"github.com/hookrun/hookrun/test/testenv"
)

// The operator's reconcilers run in a real manager against a real
// kube-apiserver (envtest). Assertions read through k8sClient, which has no
// cache. Time is a fake clock the specs step; randomness is a seeded source.

const publicBaseURL = "https://hooks.example.com"

// listedIssuer is in the suite operator's --oidc-issuers; the operator
// never contacts an issuer (the receiver reads their keys).
const listedIssuer = "https://token.actions.githubusercontent.com"

// testCallTimeout bounds each A2A call of the suite's operator, so a spec
// can outlast it quickly.
const testCallTimeout = 2 * time.Second

var (
	cfg         *rest.Config
	k8sClient   client.Client
	watchClient client.WithWatch
	scheme      = testenv.Scheme()
	fakeClock   = clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	stopManager func()
	// ownerDefaulting is the mode of the owner policies installed on the
	// API server the specs talk to (hack/clusterinstall decides).
	ownerDefaulting clusterinstall.OwnerDefaulting
	// randomSource is shared by every manager the suite starts, so a value
	// generated again after a restart would differ from the first one.
	randomSource = &lockedReader{r: rand.NewChaCha8([32]byte{'h', 'o', 'o', 'k', 'r', 'u', 'n'})}
	// operatorRequests records the requests of the operator the suite runs.
	operatorRequests = &requestLog{}
	// operatorSpans holds the finished spans of the operator the suite runs.
	operatorSpans = tracetest.NewInMemoryExporter()
	testOptions   = &OperatorOptions{
		PublicBaseURL:        publicBaseURL,
		RunHistoryLimit:      3,
		RunTTL:               time.Hour,
		PayloadTTL:           10 * time.Minute,
		RunCountDelay:        500 * time.Millisecond,
		OwnerRecheckInterval: 200 * time.Millisecond,
		DispatchWorkers:      DefaultDispatchWorkers,
		A2ACallTimeout:       testCallTimeout,
		Namespace:            clusterinstall.Namespace,
		OIDCIssuers:          []string{listedIssuer},
	}
)

func TestControllers(t *testing.T) {
	testenv.RunSuite(t, "Operator suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	Expect(os.Getenv("KUBEBUILDER_ASSETS")).NotTo(BeEmpty(), "KUBEBUILDER_ASSETS is not set: run `make test`")
	// The API server, with the operator's RBAC, service account and the
	// admission policies as installed in a cluster: the operator below runs
	// as its service account.
	useCluster(context.Background(), nil)
	stopManager = startManager()
	DeferCleanup(func() { stopManager() })
})

// useCluster starts an API server (flags added to envtest's) and points
// the suite's cfg, k8sClient, watchClient and ownerDefaulting at it; it
// stops at the end of the container it is called in.
func useCluster(ctx context.Context, flags map[string]string) {
	GinkgoHelper()
	cluster, err := testenv.StartCluster(ctx, scheme, flags)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cluster.Stop)
	cfg, k8sClient, watchClient, ownerDefaulting = cluster.Config, cluster.Client, cluster.Watch, cluster.OwnerDefaulting
}

// startManager starts the operator's manager, as `hookrun operator` wires
// it, as the operator's service account (impersonated: its ClusterRole is
// all it may do), and returns a function that stops it and waits until it
// has stopped.
func startManager() func() { return startManagerWith(testOptions) }

// startManagerWith is startManager with other options.
func startManagerWith(opts *OperatorOptions) func() {
	asOperator := testenv.AsServiceAccount(cfg, clusterinstall.Namespace, clusterinstall.OperatorServiceAccount)
	asOperator.Wrap(operatorRequests.wrap)
	return testenv.StartManager(asOperator, ctrl.Options{
		Scheme: scheme,
		Client: client.Options{Cache: ClientCacheOptions()},
		Cache:  CacheOptions(testOptions.Namespace),
	}, func(ctx context.Context, mgr ctrl.Manager) error {
		return SetupOperator(ctx, mgr, opts, Dependencies{Clock: fakeClock, Rand: randomSource,
			TracerProvider: tracing.NewLocalProvider(ServiceName, sdktrace.WithSyncer(operatorSpans))})
	})
}

// newNamespace creates a namespace for one spec.
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	return testenv.NewNamespace(ctx, k8sClient)
}

func newAgent(ns, name string) *agentsv1alpha1.Agent { return testenv.Agent(ns, name) }

func newEndpoint(ns, name, agent string) *agentsv1alpha1.WebhookEndpoint {
	return testenv.Endpoint(ns, name, agent)
}

// get reads obj fresh from the API server.
func get[T client.Object](ctx context.Context, obj T) T {
	GinkgoHelper()
	return testenv.Get(ctx, k8sClient, obj)
}

// conditionOf returns a matcher-friendly view of one condition.
func conditionOf(conds []metav1.Condition, t string) *metav1.Condition {
	return testenv.ConditionOf(conds, t)
}

// haveCondition matches a *metav1.Condition with the status and reason.
func haveCondition(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return testenv.HaveCondition(status, reason)
}

// poke makes the operator reconcile obj now (any metadata change does).
func poke[T client.Object](ctx context.Context, obj T) {
	GinkgoHelper()
	testenv.Poke(ctx, k8sClient, obj)
}

type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

func mustJSON(v any) []byte {
	GinkgoHelper()
	return testenv.MustJSON(v)
}

func endpointState(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) func() *agentsv1alpha1.WebhookEndpoint {
	return testenv.Fresh(ctx, k8sClient, ep)
}

func readyEndpoint(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) *agentsv1alpha1.WebhookEndpoint {
	GinkgoHelper()
	return testenv.ReadyEndpoint(ctx, k8sClient, ep)
}

func generatedSecret(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) *corev1.Secret {
	GinkgoHelper()
	return testenv.GeneratedSecret(ctx, k8sClient, ep)
}

// eventsFor lists the events.k8s.io events about obj with reason.
func eventsFor(ctx SpecContext, obj client.Object, reason string) func() []eventsv1.Event {
	return testenv.Events(ctx, k8sClient, obj, reason)
}

// recordOwnerSkip records a call to ep after its owner lost membership, as
// the receiver does (testenv.RecordOwnerSkip).
func recordOwnerSkip(ctx SpecContext, ep *agentsv1alpha1.WebhookEndpoint) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	return testenv.RecordOwnerSkip(ctx, cfg, scheme, endpointState(ctx, ep)(), fakeClock.Now())
}

func skipAsReceiver(ctx SpecContext, c client.Client, run *agentsv1alpha1.AgentRun, message string) {
	GinkgoHelper()
	testenv.SkipAsReceiver(ctx, c, run, message)
}

// startPeer, servePeer and messagesOf start and watch the suite's
// agents as every operator suite does (testenv, test/a2apeers).
func startPeer() *a2apeers.Peer { return testenv.StartPeer() }

func servePeer(ctx SpecContext, ns string, mutate func(*agentsv1alpha1.Agent)) *a2apeers.Peer {
	GinkgoHelper()
	return testenv.ServePeer(ctx, k8sClient, ns, mutate)
}

func messagesOf(peer *a2apeers.Peer) func(string) int { return testenv.MessagesTo(peer) }

// referableLabels mark a Secret for hookrun (DESIGN section 9).
func referableLabels() map[string]string { return testenv.ReferableLabels() }
