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

package endpoint

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/operatortest"
	"github.com/hookrun/hookrun/controllers/internal/status"
	"github.com/hookrun/hookrun/controllers/membership"
	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/test/testenv"
)

// The WebhookEndpoint controller's envtest specs: this controller alone, in
// a real manager as the operator's service account, against a real API
// server with hookrun's access control (testenv.StartCluster). Specs that
// need the other controllers too are the whole-operator suites of package
// controllers.

const publicBaseURL = "https://hooks.example.com"

var (
	scheme    *runtime.Scheme
	k8sClient client.Client
	cfg       *rest.Config
	// stopManager stops the manager startManager started.
	stopManager func()
	fakeClock   = clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
)

func TestEndpointController(t *testing.T) {
	testenv.RunSuite(t, "WebhookEndpoint controller suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	scheme = testenv.Scheme()
	cluster := testenv.StartSuiteCluster(ctx, scheme)
	k8sClient, cfg = cluster.Client, cluster.Config
	stopManager = startManager()
	DeferCleanup(func() { stopManager() })
})

// startManager starts a manager with the WebhookEndpoint controller alone,
// wired as controllers.SetupOperator wires it, as the operator's service
// account, and returns a function that stops it and waits until it has
// stopped.
func startManager() func() {
	return operatortest.StartManager(cfg, scheme, func(ctx context.Context, mgr ctrl.Manager) error {
		issuers, err := oidc.ParseIssuers([]string{listedIssuer})
		if err != nil {
			return err
		}
		apiAudiences, err := oidc.APIAudiences(ctx, mgr.GetConfig(), clusterinstall.Namespace)
		if err != nil {
			return err
		}
		checker, err := membership.NewForAPIServer(mgr.GetClient(), mgr.GetConfig(), mgr.GetHTTPClient(), fakeClock, membership.DefaultTTL)
		if err != nil {
			return err
		}
		return (&Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), MetadataReader: mgr.GetCache(),
			Recorder: mgr.GetEventRecorder(status.FieldOwner), Clock: fakeClock, Rand: rand.Reader,
			Membership: checker, PublicBaseURL: publicBaseURL, RunCountDelay: 500 * time.Millisecond,
			OwnerRecheckInterval: 200 * time.Millisecond, Namespace: clusterinstall.Namespace,
			OIDCIssuers: issuers, APIAudiences: apiAudiences,
		}).SetupWithManager(mgr)
	})
}

// newNamespace, newAgent and newEndpoint start a spec's objects as every
// operator suite does (testenv).
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	return testenv.NewNamespace(ctx, k8sClient)
}

func newAgent(ns, name string) *agentsv1alpha1.Agent { return testenv.Agent(ns, name) }

func newEndpoint(ns, name, agent string) *agentsv1alpha1.WebhookEndpoint {
	return testenv.Endpoint(ns, name, agent)
}

func endpointState(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) func() *agentsv1alpha1.WebhookEndpoint {
	return testenv.Fresh(ctx, k8sClient, ep)
}

func readyEndpoint(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) *agentsv1alpha1.WebhookEndpoint {
	GinkgoHelper()
	return testenv.ReadyEndpoint(ctx, k8sClient, ep)
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

func get[T client.Object](ctx context.Context, obj T) T {
	GinkgoHelper()
	return testenv.Get(ctx, k8sClient, obj)
}

func poke[T client.Object](ctx context.Context, obj T) {
	GinkgoHelper()
	testenv.Poke(ctx, k8sClient, obj)
}

func referableLabels() map[string]string { return testenv.ReferableLabels() }

func setReferable(ctx context.Context, ns, name string, on bool) {
	GinkgoHelper()
	testenv.SetReferable(ctx, k8sClient, ns, name, on)
}

func generatedSecret(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) *corev1.Secret {
	GinkgoHelper()
	return testenv.GeneratedSecret(ctx, k8sClient, ep)
}

func sha256Hex(b []byte) string { return testenv.SHA256Hex(b) }

func recordOwnerSkip(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	return testenv.RecordOwnerSkip(ctx, cfg, scheme, endpointState(ctx, ep)(), fakeClock.Now())
}

func mustJSON(v any) []byte {
	GinkgoHelper()
	return testenv.MustJSON(v)
}
