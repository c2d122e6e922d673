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
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/internal/operatortest"
	"github.com/hookrun/hookrun/controllers/internal/status"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/test/a2apeers"
	"github.com/hookrun/hookrun/test/testenv"
)

// The AgentRun controllers' envtest specs: admission and execution alone,
// wired as controllers.SetupOperator wires them, in a real manager as the
// operator's service account against a real API server with hookrun's
// access control (testenv.StartCluster). The agents are test/a2apeers.
// Time is a fake clock the specs step; randomness is a seeded source.
// Specs that need the other controllers too (a thread's status, an
// Agent's card or conditions, the accounting) are the whole-operator
// suites of package controllers.

// testCallTimeout bounds each A2A call of the suite's controllers, so a
// spec can outlast it quickly.
const testCallTimeout = 2 * time.Second

// dispatchWorkers is the operator's default --dispatch-workers.
const dispatchWorkers = 8

var (
	scheme      *runtime.Scheme
	k8sClient   client.Client
	watchClient client.WithWatch
	cfg         *rest.Config
	// stopManager stops the manager startManager started.
	stopManager func()
	fakeClock   = clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	// randomSource is shared by every manager the suite starts.
	randomSource = &lockedReader{r: rand.NewChaCha8([32]byte{'h', 'o', 'o', 'k', 'r', 'u', 'n'})}
	// spans holds the finished spans of the controllers the suite runs.
	spans = tracetest.NewInMemoryExporter()
)

func TestRunControllers(t *testing.T) {
	testenv.RunSuite(t, "AgentRun controllers suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	scheme = testenv.Scheme()
	cluster := testenv.StartSuiteCluster(ctx, scheme)
	k8sClient, watchClient, cfg = cluster.Client, cluster.Watch, cluster.Config
	stopManager = startManager()
	DeferCleanup(func() { stopManager() })
})

// startManager starts a manager with AgentRun admission and execution,
// sending to any agent; it returns a function that stops it and waits until
// it has stopped.
func startManager() func() {
	allow, err := a2a.NewAllowList(nil, nil)
	Expect(err).NotTo(HaveOccurred())
	return startManagerWith(allow)
}

// startManagerWith is startManager with the agent allow-list allow.
func startManagerWith(allow *a2a.AllowList) func() {
	return operatortest.StartManager(cfg, scheme, func(ctx context.Context, mgr ctrl.Manager) error {
		ServeMetricsFrom(mgr.GetCache(), mgr.Elected())
		tracer := NewRunTracer(tracing.NewLocalProvider(ServiceName, sdktrace.WithSyncer(spans)))
		if err := (&AdmissionReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Metadata: mgr.GetCache(),
			Recorder: mgr.GetEventRecorder(status.FieldOwner), Clock: fakeClock, Tracer: tracer,
		}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&ExecutionReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(status.FieldOwner),
			Clock: fakeClock, Rand: randomSource, NewClient: NewHTTPA2AClient(a2a.NewClients(allow, testCallTimeout)),
			Workers: dispatchWorkers, CallTimeout: testCallTimeout, Tracer: tracer,
		}).SetupWithManager(mgr)
	})
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

// The spec helpers every operator suite has (testenv).

func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	return testenv.NewNamespace(ctx, k8sClient)
}

func newAgent(ns, name string) *agentsv1alpha1.Agent { return testenv.Agent(ns, name) }

func get[T client.Object](ctx context.Context, obj T) T {
	GinkgoHelper()
	return testenv.Get(ctx, k8sClient, obj)
}

func poke[T client.Object](ctx context.Context, obj T) {
	GinkgoHelper()
	testenv.Poke(ctx, k8sClient, obj)
}

func conditionOf(conds []metav1.Condition, t string) *metav1.Condition {
	return testenv.ConditionOf(conds, t)
}

func haveCondition(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return testenv.HaveCondition(status, reason)
}

func eventsFor(ctx context.Context, obj client.Object, reason string) func() []eventsv1.Event {
	return testenv.Events(ctx, k8sClient, obj, reason)
}

func referableLabels() map[string]string { return testenv.ReferableLabels() }

// queueTestRun stores a run of Agent triage and its payload body as the
// receiver does (testenv.QueueRun), received now by the suite's clock.
func queueTestRun(ctx context.Context, ns, name, body string, mutate func(*agentsv1alpha1.AgentRun)) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	return queueTestRunWith(ctx, ns, name, map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte(body)}, mutate)
}

// queueTestRunWith is queueTestRun with the payload Secret's data.
func queueTestRunWith(ctx context.Context, ns, name string, data map[string][]byte, mutate func(*agentsv1alpha1.AgentRun)) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	return testenv.QueueRun(ctx, k8sClient, ns, name, data, fakeClock.Now(), mutate)
}

func startPeer() *a2apeers.Peer { return testenv.StartPeer() }

func servePeer(ctx context.Context, ns string, mutate func(*agentsv1alpha1.Agent)) *a2apeers.Peer {
	GinkgoHelper()
	return testenv.ServePeer(ctx, k8sClient, ns, mutate)
}

func callsTo(peer *a2apeers.Peer) func() int { return testenv.CallsTo(peer) }

func messagesOf(peer *a2apeers.Peer) func(string) int { return testenv.MessagesTo(peer) }

func create[T client.Object](ctx context.Context, obj T) T {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	return obj
}
