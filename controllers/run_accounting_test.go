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
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

var _ = Describe("Run counts and retention", func() {
	var (
		ns string
		ep *agentsv1alpha1.WebhookEndpoint
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		ep = newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		ep = readyEndpoint(ctx, ep)
	})

	// createRun stores a run of ep as the receiver would, with its payload
	// Secret, and gives it state; finished runs complete at completed.
	createRun := func(ctx SpecContext, name string, state agentsv1alpha1.RunState, completed time.Time) *agentsv1alpha1.AgentRun {
		GinkgoHelper()
		run := &agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint: ep.Name, agentsv1alpha1.LabelAgent: "triage",
			}},
			Spec: agentsv1alpha1.AgentRunSpec{
				EndpointRef: agentsv1alpha1.LocalObjectReference{Name: ep.Name}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
				Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Payload:    &agentsv1alpha1.PayloadReference{SecretName: name, Bytes: 2},
				ReceivedAt: metav1.NewTime(completed.Add(-time.Second)),
			},
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{agentsv1alpha1.LabelEndpoint: ep.Name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: run.Name, UID: run.UID}}},
			Type: agentsv1alpha1.SecretTypeWebhookPayload,
			Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("{}")},
		})).To(Succeed())
		if state != agentsv1alpha1.RunQueued {
			patch := client.MergeFrom(run.DeepCopy())
			run.Status.State = state
			if state.IsFinished() {
				run.Status.CompletedAt = &metav1.Time{Time: completed}
			}
			Expect(k8sClient.Status().Patch(ctx, run, patch)).To(Succeed())
		}
		return run
	}
	runNames := func(ctx SpecContext) func() []string {
		return func() []string {
			list := &agentsv1alpha1.AgentRunList{}
			Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			var names []string
			for _, r := range list.Items {
				names = append(names, r.Name)
			}
			return names
		}
	}
	payloadExists := func(ctx SpecContext, name string) bool {
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
		Expect(client.IgnoreNotFound(err)).To(Succeed())
		return !apierrors.IsNotFound(err)
	}

	It("counts the runs that exist", func(ctx SpecContext) {
		now := fakeClock.Now()
		createRun(ctx, "run-a", agentsv1alpha1.RunQueued, now)
		createRun(ctx, "run-b", agentsv1alpha1.RunRunning, now)
		last := createRun(ctx, "run-c", agentsv1alpha1.RunSuccess, now.Add(time.Second))
		Eventually(func() agentsv1alpha1.RunCounts { return endpointState(ctx, ep)().Status.Runs }).Should(And(
			HaveField("Total", int64(3)), HaveField("Running", int64(2)),
			HaveField("LastRunTime", HaveField("Time", BeTemporally("==", last.Spec.ReceivedAt.Time)))))

		Expect(k8sClient.Delete(ctx, last)).To(Succeed())
		Eventually(func() int64 { return endpointState(ctx, ep)().Status.Runs.Total }).Should(Equal(int64(2)))
	})

	It("batches a burst of runs into a few status writes", func(ctx SpecContext) {
		w, err := watchClient.Watch(ctx, &agentsv1alpha1.WebhookEndpointList{}, client.InNamespace(ns))
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		// Writes that count arrivals: the runs also start and end meanwhile
		// (their Agent answers nothing), which moves status.runs.running in
		// writes of their own, later on a loaded machine.
		var writes atomic.Int64
		go func() {
			var total int64
			for e := range w.ResultChan() {
				if ep, ok := e.Object.(*agentsv1alpha1.WebhookEndpoint); ok && e.Type == watch.Modified && ep.Status.Runs.Total != total {
					total = ep.Status.Runs.Total
					writes.Add(1)
				}
			}
		}()
		const burst = 40
		now := fakeClock.Now()
		start := time.Now()
		for i := range burst {
			createRun(ctx, fmt.Sprintf("burst-%02d", i), agentsv1alpha1.RunQueued, now)
		}
		arriving := time.Since(start)
		Eventually(func() int64 { return endpointState(ctx, ep)().Status.Runs.Total }).Should(Equal(int64(burst)))
		Consistently(func() int64 { return endpointState(ctx, ep)().Status.Runs.Total }, 500*time.Millisecond).Should(Equal(int64(burst)))
		// At most one write per batching window while the runs arrive, and
		// the last: on a loaded machine the 40 creates may take several
		// windows (make test runs the suites side by side on two cores).
		limit := min(max(burst/4, int64(arriving/testOptions.RunCountDelay)+3), burst/2)
		GinkgoWriter.Printf("%d runs arriving over %s caused %d endpoint writes of the count (limit %d)\n", burst, arriving, writes.Load(), limit)
		Expect(writes.Load()).To(BeNumerically("<=", limit), "status.runs must be batched, not written per run")
	})

	It("counts runs in a controller of its own, which the endpoint's status writes do not wake", func(ctx SpecContext) {
		total := func() int64 { return endpointState(ctx, ep)().Status.Runs.Total }
		// Run events reach the accounting only after an hour here: until
		// then, only its watch of the endpoint itself could count a run.
		slow := *testOptions
		slow.RunCountDelay = time.Hour
		stopManager()
		DeferCleanup(func() {
			stopManager()
			stopManager = startManager()
		})
		By("a run stored while no operator runs is counted when the accounting first looks at the endpoint")
		createRun(ctx, "run-a", agentsv1alpha1.RunQueued, fakeClock.Now())
		stopManager = startManagerWith(&slow)
		Eventually(total).Should(Equal(int64(1)))

		By("the endpoint's status write, saying its generated Secret was deleted, does not wake the accounting")
		createRun(ctx, "run-b", agentsv1alpha1.RunQueued, fakeClock.Now())
		Expect(k8sClient.Delete(ctx, generatedSecret(ctx, ep))).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionSecretReady)
		}).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonGeneratedSecretDeleted), "the WebhookEndpoint reconciler wrote the status")
		Consistently(total, 2*time.Second).Should(Equal(int64(1)), "no accounting write: run-b waits for its event")

		By("the run's event, here at the restart with the suite's delay, counts it")
		stopManager()
		stopManager = startManager()
		Eventually(total).Should(Equal(int64(2)))
	})

	It("writes status.runs without waking the WebhookEndpoint reconciler, which any other status write wakes", func(ctx SpecContext) {
		By("a rotation whose overlap has run out: only a reconcile of the endpoint drops its previous secret")
		rotating := newEndpoint(ns, "rotating", "triage")
		rotating.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, RotationOverlap: &metav1.Duration{Duration: time.Hour}}
		Expect(k8sClient.Create(ctx, rotating)).To(Succeed())
		rotating = readyEndpoint(ctx, rotating)
		patch := client.MergeFrom(rotating.DeepCopy())
		metav1.SetMetaDataAnnotation(&rotating.ObjectMeta, agentsv1alpha1.AnnotationRotateSecret, "r1")
		Expect(k8sClient.Patch(ctx, rotating, patch)).To(Succeed())
		previous := func() string { return endpointState(ctx, rotating)().Status.PreviousSecretHash }
		Eventually(previous).ShouldNot(BeEmpty())
		// The rotation's own writes wake the reconciler again; once they
		// are done, none is left to see the clock stepped.
		version := func() string { return endpointState(ctx, rotating)().ResourceVersion }
		Eventually(func(g Gomega) {
			g.Consistently(version, time.Second).Should(Equal(version()))
		}).Should(Succeed(), "the endpoint settles after the rotation")
		fakeClock.Step(time.Hour)

		By("writes of status.runs, as the accounting makes them, leave it")
		for i := range 20 {
			// Locked to what was read, as the accounting writes; read again
			// on a conflict.
			Eventually(func() error {
				current := endpointState(ctx, rotating)()
				patch := client.MergeFromWithOptions(current.DeepCopy(), client.MergeFromWithOptimisticLock{})
				current.Status.Runs.Total = int64(100 + i)
				return k8sClient.Status().Patch(ctx, current, patch)
			}).Should(Succeed())
		}
		Consistently(previous, 2*time.Second).ShouldNot(BeEmpty(), "an accounting write woke the endpoint reconciler")

		By("a status write of another field wakes it: it drops the previous secret and puts the URL back")
		current := endpointState(ctx, rotating)()
		url := current.Status.URL
		patch = client.MergeFrom(current.DeepCopy())
		current.Status.URL = "https://elsewhere.example.com/"
		Expect(k8sClient.Status().Patch(ctx, current, patch)).To(Succeed())
		Eventually(previous).Should(BeEmpty())
		Eventually(func() string { return endpointState(ctx, rotating)().Status.URL }).Should(Equal(url))
	})

	It("keeps the newest finished runs up to the history limit and never prunes unfinished ones", func(ctx SpecContext) {
		now := fakeClock.Now()
		for i := range 5 { // run-0 finished first, run-4 last
			createRun(ctx, fmt.Sprintf("run-%d", i), agentsv1alpha1.RunSuccess, now.Add(time.Duration(i-10)*time.Second))
		}
		createRun(ctx, "run-queued", agentsv1alpha1.RunQueued, now.Add(-time.Hour*100))
		Eventually(runNames(ctx)).Should(ConsistOf("run-2", "run-3", "run-4", "run-queued"))
		Eventually(func() int64 { return endpointState(ctx, ep)().Status.Runs.Total }).Should(Equal(int64(4)))
		Consistently(runNames(ctx)).Should(ConsistOf("run-2", "run-3", "run-4", "run-queued"))
	})

	It("drops payloads after the payload TTL and runs after the run TTL", func(ctx SpecContext) {
		now := fakeClock.Now()
		createRun(ctx, "old", agentsv1alpha1.RunError, now.Add(-2*time.Minute))
		createRun(ctx, "new", agentsv1alpha1.RunSuccess, now)
		createRun(ctx, "busy", agentsv1alpha1.RunRunning, now)
		Eventually(func() int64 { return endpointState(ctx, ep)().Status.Runs.Total }).Should(Equal(int64(3)))
		Expect(payloadExists(ctx, "old")).To(BeTrue())

		// 9 minutes later "old" finished 11 minutes ago: its payload goes, its record stays.
		fakeClock.Step(9 * time.Minute)
		poke(ctx, ep)
		Eventually(func() bool { return payloadExists(ctx, "old") }).Should(BeFalse())
		Consistently(func() bool { return payloadExists(ctx, "new") }).Should(BeTrue())
		Expect(runNames(ctx)()).To(ConsistOf("old", "new", "busy"))
		Expect(payloadExists(ctx, "busy")).To(BeTrue())

		// An hour after "new" finished both finished runs are past the run TTL.
		fakeClock.Step(time.Hour)
		poke(ctx, ep)
		Eventually(runNames(ctx)).Should(ConsistOf("busy"))
		Expect(payloadExists(ctx, "busy")).To(BeTrue(), "a running run keeps its payload")
		Eventually(func() agentsv1alpha1.RunCounts { return endpointState(ctx, ep)().Status.Runs }).Should(And(
			HaveField("Total", int64(1)), HaveField("Running", int64(1))))
	})
})
