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
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/a2apeers"
	"github.com/hookrun/hookrun/test/testenv"
)

// The health each kind shows, computed from objects read from the API
// server after the operator handled them: kstatus (sigs.k8s.io/cli-utils,
// what Flux and other kstatus tools compute) as the oracle, and the Argo CD
// health check shipped in charts/hookrun/argocd run as Argo CD runs it.
var _ = Describe("Health as kstatus and Argo CD compute it", func() {
	var scripts map[string]string
	BeforeEach(func() {
		var err error
		scripts, err = argoCDHealthScripts()
		Expect(err).NotTo(HaveOccurred())
	})

	// arrange puts an object in a state in namespace ns and returns it as
	// read from the API server.
	type arrange func(ctx SpecContext, ns string) *unstructured.Unstructured

	DescribeTable("object state → kstatus status and Argo CD health",
		func(ctx SpecContext, arrange arrange, wantStatus status.Status, wantHealth string) {
			obj := arrange(ctx, newNamespace(ctx))
			res, err := status.Compute(obj)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Status).To(Equal(wantStatus), "kstatus: %s", res.Message)
			Expect(res.Message).NotTo(BeEmpty())
			health, msg, err := argoCDHealth(obj, scripts[obj.GetKind()])
			Expect(err).NotTo(HaveOccurred())
			Expect(health).To(Equal(wantHealth), "Argo CD: %s", msg)
			Expect(msg).NotTo(BeEmpty())
		},

		Entry("Agent not looked at yet", justCreated(func(ns string) client.Object { return newAgent(ns, "triage") }),
			status.InProgressStatus, "Progressing"),
		Entry("Agent available", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			return settled(ctx, create(ctx, newAgent(ns, "triage")), metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable)
		}, status.CurrentStatus, "Healthy"),
		Entry("Agent archived", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			return settled(ctx, create(ctx, archivedAgent(ns)), metav1.ConditionTrue, agentsv1alpha1.ReasonAgentArchived)
		}, status.CurrentStatus, "Suspended"),
		Entry("Agent whose token Secret is missing", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			return settled(ctx, create(ctx, agentWithToken(ns)), metav1.ConditionFalse, agentsv1alpha1.ReasonAuthSecretNotFound)
		}, status.FailedStatus, "Degraded"),
		Entry("Agent whose token Secret is not labelled for hookrun", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token"}, StringData: map[string]string{"token": "t"}})
			return settled(ctx, create(ctx, agentWithToken(ns)), metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable)
		}, status.FailedStatus, "Degraded"),
		Entry("Agent whose TLS CA Secret is missing", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			a := newAgent(ns, "triage")
			a.Spec.A2A.URL = "https://127.0.0.1:1/"
			a.Spec.A2A.TLS = &agentsv1alpha1.A2ATLS{CASecretRef: &agentsv1alpha1.SecretKeyReference{Name: "ca", Key: "ca.crt"}}
			return settled(ctx, create(ctx, a), metav1.ConditionFalse, agentsv1alpha1.ReasonTLSSecretNotFound)
		}, status.FailedStatus, "Degraded"),
		Entry("Agent being deleted", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			agent := held(ctx, newAgent(ns, "triage"))
			settled(ctx, agent, metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable)
			return deleted(ctx, agent)
		}, status.TerminatingStatus, "Progressing"),

		Entry("WebhookEndpoint not looked at yet", justCreated(func(ns string) client.Object { return newEndpoint(ns, "hook", "triage") }),
			status.InProgressStatus, "Progressing"),
		Entry("WebhookEndpoint ready", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			return settled(ctx, create(ctx, newEndpoint(ns, "hook", "triage")), metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable)
		}, status.CurrentStatus, "Healthy"),
		Entry("WebhookEndpoint paused", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			ep := newEndpoint(ns, "hook", "triage")
			ep.Spec.Paused = true
			return settled(ctx, create(ctx, ep), metav1.ConditionTrue, agentsv1alpha1.ReasonPaused)
		}, status.CurrentStatus, "Suspended"),
		Entry("WebhookEndpoint of an archived Agent", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, archivedAgent(ns))
			return settled(ctx, create(ctx, newEndpoint(ns, "hook", "triage")), metav1.ConditionTrue, agentsv1alpha1.ReasonAgentArchived)
		}, status.CurrentStatus, "Suspended"),
		Entry("WebhookEndpoint whose Agent is missing", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			return settled(ctx, create(ctx, newEndpoint(ns, "hook", "triage")), metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound)
		}, status.FailedStatus, "Degraded"),
		Entry("WebhookEndpoint whose secretRef Secret is missing", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			return settled(ctx, create(ctx, endpointWithSecretRef(ns)), metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotFound)
		}, status.FailedStatus, "Degraded"),
		Entry("WebhookEndpoint whose secretRef Secret is not labelled for hookrun", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"},
				StringData: map[string]string{"token": "a secret of at least thirty-two bytes"}})
			return settled(ctx, create(ctx, endpointWithSecretRef(ns)), metav1.ConditionFalse, agentsv1alpha1.ReasonSecretNotReferable)
		}, status.FailedStatus, "Degraded"),
		Entry("WebhookEndpoint whose thread is missing", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			ep := newEndpoint(ns, "hook", "triage")
			ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
			ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
			return settled(ctx, create(ctx, ep), metav1.ConditionFalse, agentsv1alpha1.ReasonThreadNotFound)
		}, status.FailedStatus, "Degraded"),
		Entry("WebhookEndpoint paused because its owner is no longer a member", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			ep := create(ctx, newEndpoint(ns, "hook", "triage"))
			readyEndpoint(ctx, ep)
			recordOwnerSkip(ctx, ep)
			return settled(ctx, ep, metav1.ConditionFalse, agentsv1alpha1.ReasonOwnerNotMember)
		}, status.FailedStatus, "Degraded"),
		Entry("WebhookEndpoint whose ID an older endpoint holds", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			return settled(ctx, endpointWithTakenID(ctx, ns), metav1.ConditionFalse, agentsv1alpha1.ReasonEndpointIDConflict)
		}, status.FailedStatus, "Degraded"),
		Entry("WebhookEndpoint being deleted", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			ep := held(ctx, newEndpoint(ns, "hook", "triage"))
			settled(ctx, ep, metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable)
			return deleted(ctx, ep)
		}, status.TerminatingStatus, "Progressing"),

		Entry("AgentThread not looked at yet", justCreated(func(ns string) client.Object { return newThread(ns) }),
			status.InProgressStatus, "Progressing"),
		Entry("AgentThread of an available Agent", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, newAgent(ns, "triage"))
			return settled(ctx, create(ctx, newThread(ns)), metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable)
		}, status.CurrentStatus, "Healthy"),
		Entry("AgentThread of an archived Agent", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			create(ctx, archivedAgent(ns))
			return settled(ctx, create(ctx, newThread(ns)), metav1.ConditionTrue, agentsv1alpha1.ReasonAgentArchived)
		}, status.CurrentStatus, "Suspended"),
		Entry("AgentThread whose Agent is missing", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			return settled(ctx, create(ctx, newThread(ns)), metav1.ConditionFalse, agentsv1alpha1.ReasonAgentNotFound)
		}, status.FailedStatus, "Degraded"),

		Entry("AgentRun queued", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			agentOfRuns(ctx, ns)
			settled(ctx, queueTestRun(ctx, ns, "first", "hang", nil), metav1.ConditionFalse, agentsv1alpha1.ReasonRunning)
			queued := queueTestRun(ctx, ns, "second", "{}", nil)
			Consistently(func() agentsv1alpha1.RunState { return get(ctx, queued).Status.State }, "500ms").Should(BeEmpty())
			return read(ctx, queued)
		}, status.InProgressStatus, "Progressing"),
		Entry("AgentRun running", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			agentOfRuns(ctx, ns)
			return settled(ctx, queueTestRun(ctx, ns, "run", "hang", nil), metav1.ConditionFalse, agentsv1alpha1.ReasonRunning)
		}, status.InProgressStatus, "Progressing"),
		Entry("AgentRun waiting to be sent again", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			ta := agentOfRuns(ctx, ns)
			ta.TurnAway(1, http.StatusTooManyRequests, "300")
			return settled(ctx, queueTestRun(ctx, ns, "run", "{}", nil), metav1.ConditionFalse, agentsv1alpha1.ReasonRetrying)
		}, status.InProgressStatus, "Progressing"),
		Entry("AgentRun succeeded", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			agentOfRuns(ctx, ns)
			return settled(ctx, queueTestRun(ctx, ns, "run", "{}", nil), metav1.ConditionTrue, agentsv1alpha1.ReasonSucceeded)
		}, status.CurrentStatus, "Healthy"),
		Entry("AgentRun failed", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			agentOfRuns(ctx, ns)
			return settled(ctx, queueTestRun(ctx, ns, "run", "fail", nil), metav1.ConditionFalse, agentsv1alpha1.ReasonFailed)
		}, status.FailedStatus, "Degraded"),
		Entry("AgentRun skipped", func(ctx SpecContext, ns string) *unstructured.Unstructured {
			agentOfRuns(ctx, ns)
			skipped := queueTestRun(ctx, ns, "run", "", func(r *agentsv1alpha1.AgentRun) { r.Spec.Payload = nil })
			skipAsReceiver(ctx, k8sClient, skipped, "Skipped: the invocation rate limit of 60 calls per minute was exceeded")
			return settled(ctx, skipped, metav1.ConditionFalse, agentsv1alpha1.ReasonSkipped)
		}, status.FailedStatus, "Degraded"),
	)
})

// create creates obj and returns it.
func create[T client.Object](ctx SpecContext, obj T) T {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	return obj
}

// justCreated returns an arrangement that creates the object newObj makes
// and returns it as the API server answered the create, before the operator
// could look at it.
func justCreated(newObj func(ns string) client.Object) func(SpecContext, string) *unstructured.Unstructured {
	return func(ctx SpecContext, ns string) *unstructured.Unstructured {
		GinkgoHelper()
		obj := newObj(ns)
		u := &unstructured.Unstructured{}
		var err error
		u.Object, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		Expect(err).NotTo(HaveOccurred())
		u.SetGroupVersionKind(gvkOf(obj))
		Expect(k8sClient.Create(ctx, u)).To(Succeed())
		return u
	}
}

func gvkOf(obj client.Object) schema.GroupVersionKind {
	GinkgoHelper()
	gvk, err := apiutil.GVKForObject(obj, scheme)
	Expect(err).NotTo(HaveOccurred())
	return gvk
}

// read returns obj as the API server has it now.
func read(ctx SpecContext, obj client.Object) *unstructured.Unstructured {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkOf(obj))
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
	return u
}

// settled waits until the operator has handled obj's generation and its
// Ready condition has the status and reason, and returns obj as read then.
func settled(ctx SpecContext, obj client.Object, ready metav1.ConditionStatus, reason string) *unstructured.Unstructured {
	GinkgoHelper()
	var u *unstructured.Unstructured
	Eventually(func(g Gomega) {
		u = read(ctx, obj)
		var st struct {
			Status struct {
				ObservedGeneration int64              `json:"observedGeneration"`
				Conditions         []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &st)).To(Succeed())
		g.Expect(st.Status.ObservedGeneration).To(Equal(u.GetGeneration()))
		g.Expect(conditionOf(st.Status.Conditions, agentsv1alpha1.ConditionReady)).To(haveCondition(ready, reason))
	}).Should(Succeed())
	return u
}

// held creates obj with a finalizer of the test, so that it stays while
// being deleted until the spec ends.
func held[T client.Object](ctx SpecContext, obj T) T {
	GinkgoHelper()
	const finalizer = "test.hookrun.dev/hold"
	controllerutil.AddFinalizer(obj, finalizer)
	create(ctx, obj)
	DeferCleanup(func(ctx SpecContext) {
		// Locked: the operator may drop a finalizer of its own meanwhile.
		Eventually(func(g Gomega) {
			cur, ok := obj.DeepCopyObject().(T)
			g.Expect(ok).To(BeTrue())
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), cur)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			before, ok := cur.DeepCopyObject().(client.Object)
			g.Expect(ok).To(BeTrue())
			controllerutil.RemoveFinalizer(cur, finalizer)
			patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
			g.Expect(client.IgnoreNotFound(k8sClient.Patch(ctx, cur, patch))).To(Succeed())
		}).Should(Succeed())
	})
	return obj
}

// deleted deletes obj and returns it as read once the API server marked it.
func deleted(ctx SpecContext, obj client.Object) *unstructured.Unstructured {
	GinkgoHelper()
	Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
	u := read(ctx, obj)
	Expect(u.GetDeletionTimestamp()).NotTo(BeNil())
	return u
}

func archivedAgent(ns string) *agentsv1alpha1.Agent {
	a := newAgent(ns, "triage")
	a.Spec.Archived = true
	return a
}

func agentWithToken(ns string) *agentsv1alpha1.Agent {
	a := newAgent(ns, "triage")
	a.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "token", Key: "token"}
	return a
}

func endpointWithSecretRef(ns string) *agentsv1alpha1.WebhookEndpoint {
	ep := newEndpoint(ns, "hook", "triage")
	ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "mine", Key: "token"}
	return ep
}

func newThread(ns string) *agentsv1alpha1.AgentThread {
	return &agentsv1alpha1.AgentThread{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
	}
}

// endpointWithTakenID makes an endpoint in ns whose endpoint ID an older
// endpoint in another namespace has (as controllers/endpoint/id_conflict_envtest_test.go does).
func endpointWithTakenID(ctx SpecContext, ns string) *agentsv1alpha1.WebhookEndpoint {
	GinkgoHelper()
	otherNS := newNamespace(ctx)
	create(ctx, newAgent(otherNS, "triage"))
	older := readyEndpoint(ctx, create(ctx, newEndpoint(otherNS, "older", "triage")))
	// creationTimestamp has whole seconds: make the other one older by one.
	Eventually(time.Now).Should(BeTemporally(">=", older.CreationTimestamp.Add(time.Second)))
	create(ctx, newAgent(ns, "triage"))
	newer := readyEndpoint(ctx, create(ctx, newEndpoint(ns, "hook", "triage")))
	patch := client.MergeFrom(newer.DeepCopy())
	newer.Status.EndpointID = older.Status.EndpointID
	Expect(k8sClient.Status().Patch(ctx, newer, patch)).To(Succeed())
	return newer
}

// agentOfRuns creates Agent triage in ns, sending to a test agent one run at
// a time.
func agentOfRuns(ctx SpecContext, ns string) *a2apeers.Peer {
	GinkgoHelper()
	ta := startPeer()
	a := newAgent(ns, "triage")
	a.Spec.A2A.URL = ta.URL
	a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
	a.Spec.MaxConcurrentRuns = 1
	create(ctx, a)
	return ta
}

// queueTestRun stores a run of Agent triage and its payload body as the
// receiver does (no payload Secret when mutate drops the payload), and
// deletes it when the spec ends.
func queueTestRun(ctx SpecContext, ns, name, body string, mutate func(*agentsv1alpha1.AgentRun)) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	return queueTestRunWith(ctx, ns, name, map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte(body)}, mutate)
}

// queueTestRunWith is queueTestRun with the payload Secret's data (the
// body, and the fields).
func queueTestRunWith(ctx SpecContext, ns, name string, data map[string][]byte, mutate func(*agentsv1alpha1.AgentRun)) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	return testenv.QueueRun(ctx, k8sClient, ns, name, data, fakeClock.Now(), mutate)
}
