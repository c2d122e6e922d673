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

package thread

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/operatortest"
	"github.com/hookrun/hookrun/test/testenv"
)

// The AgentThread controller's envtest specs: this controller alone, wired
// as controllers.SetupOperator wires it, in a real manager as the
// operator's service account against a real API server with hookrun's
// access control (testenv.StartCluster). Specs of a thread's runs need the
// AgentRun controllers too: they are the whole-operator suites of package
// controllers.

var (
	scheme    *runtime.Scheme
	k8sClient client.Client
	cfg       *rest.Config
)

func TestThreadController(t *testing.T) {
	testenv.RunSuite(t, "AgentThread controller suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	scheme = testenv.Scheme()
	cluster := testenv.StartSuiteCluster(ctx, scheme)
	k8sClient, cfg = cluster.Client, cluster.Config
	DeferCleanup(startManager())
})

// startManager starts a manager with the AgentThread controller alone, as
// the operator's service account, and returns a function that stops it and
// waits until it has stopped.
func startManager() func() {
	return operatortest.StartManager(cfg, scheme, func(ctx context.Context, mgr ctrl.Manager) error {
		return (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
}

// The spec helpers every operator suite has (testenv).

func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	return testenv.NewNamespace(ctx, k8sClient)
}

func newAgent(ns, name string) *agentsv1alpha1.Agent { return testenv.Agent(ns, name) }

func conditionOf(conds []metav1.Condition, t string) *metav1.Condition {
	return testenv.ConditionOf(conds, t)
}

func haveCondition(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return testenv.HaveCondition(status, reason)
}
