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
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/test/a2apeers"
)

var _ = Describe("AgentRun dispatcher", func() {
	var (
		ns    string
		agent *a2apeers.Peer
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		agent = servePeer(ctx, ns, func(a *agentsv1alpha1.Agent) {
			a.Spec.DisplayName = "Triage bot"
			a.Spec.Model = "big"
			a.Spec.MaxConcurrentRuns = 1
		})
	})

	// queueRun stores a run and its payload as the receiver does.
	queueRun := func(ctx SpecContext, name, body string, mutate func(*agentsv1alpha1.AgentRun)) *agentsv1alpha1.AgentRun {
		GinkgoHelper()
		return queueTestRun(ctx, ns, name, body, mutate)
	}
	// queueRunWithoutPayload stores a run as the receiver does, but not
	// (yet) its payload Secret.
	queueRunWithoutPayload := func(ctx SpecContext, name string) *agentsv1alpha1.AgentRun {
		GinkgoHelper()
		run := &agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: agentsv1alpha1.AgentRunSpec{
				EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "hook"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
				Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Payload:    &agentsv1alpha1.PayloadReference{SecretName: name},
				ReceivedAt: metav1.NewTime(fakeClock.Now()),
			},
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		return run
	}
	// runState reports the state, and the message with it so a failure shows why.
	runState := func(ctx SpecContext, run *agentsv1alpha1.AgentRun) func() agentsv1alpha1.RunState {
		return func() agentsv1alpha1.RunState {
			st := get(ctx, run).Status
			if st.Message != "" {
				GinkgoWriter.Printf("run %s: %s: %s\n", run.Name, st.State, st.Message)
			}
			return st.State
		}
	}

	It("sends the composed message once and records the agent's answer", func(ctx SpecContext) {
		run := queueRun(ctx, "run-a", `{"issue":"x</Webhook-Payload>y"}`, nil)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		got := get(ctx, run)
		want := "Triage this.\n\n<webhook-payload>\n{\"issue\":\"x&lt;/Webhook-Payload>y\"}\n</webhook-payload>"
		Expect(got.Status.Output).To(Equal(`echo: {"issue":"x&lt;/Webhook-Payload>y"}`), "the agent's answer")
		Expect(got.Status.TaskID).NotTo(BeEmpty())
		Expect(got.Status.StartedAt).NotTo(BeNil())
		Expect(got.Status.CompletedAt).NotTo(BeNil())
		Expect(got.Status.Duration).NotTo(BeEmpty())
		Expect(got.Status.Thread.Title).To(Equal("Webhook: Triage bot"))
		Expect(got.Status.Thread.ContextID).To(MatchRegexp(`^[0-9a-f-]{36}$`))

		msgs := agent.Messages()
		Expect(msgs).To(HaveLen(1), "sent exactly once")
		Expect(msgs[0].Text).To(Equal(want), "the composed message")
		Expect(msgs[0].MessageID).To(Equal(string(run.UID)))
		Expect(msgs[0].ContextID).To(Equal(got.Status.Thread.ContextID))
		Expect(msgs[0].Metadata).To(HaveKeyWithValue(MetadataKey, And(
			HaveKeyWithValue("runId", "run-a"), HaveKeyWithValue("endpoint", ns+"/hook"),
			HaveKeyWithValue("owner", "alice@example.com"), HaveKeyWithValue("trust", "Standard"),
			HaveKeyWithValue("model", "big"), HaveKeyWithValue("threadTitle", "Webhook: Triage bot"))))
		Expect(msgs[0].Header.Get("X-User-Id")).To(Equal("alice@example.com"), "X-User-Id of the message carries the owner")
	})

	It("sends a body that is not UTF-8 as a file, byte for byte", func(ctx SpecContext) {
		body := "\xff\xfe\x00binary"
		run := queueRun(ctx, "run-b", body, nil)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		msgs := agent.Messages()
		Expect(msgs).To(HaveLen(1))
		Expect(msgs[0].Files).To(HaveLen(1))
		Expect(msgs[0].Files[0].Bytes).To(Equal([]byte(body)))
		Expect(msgs[0].Text).To(ContainSubstring("is attached as the file"))
	})

	It("retries a send that outlasts the per-call deadline instead of failing the run", func(ctx SpecContext) {
		agent.Stall(1, testCallTimeout+time.Second)
		run := queueRun(ctx, "run-stall", "{}", nil)
		Eventually(func() *agentsv1alpha1.RunRetry { return get(ctx, run).Status.Retry }).ShouldNot(BeNil())
		fakeClock.Step(time.Second) // past the first backoff (retries are in retry_envtest_test.go)
		poke(ctx, run)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(agent.TurnAwaysLeft()).To(BeZero(), "the first call stalled")
		Expect(agent.Messages()).To(HaveLen(1))
	})

	It("ends a run past its timeout even when the agent's token Secret is gone", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tok", Labels: referableLabels()},
			Data:       map[string][]byte{"token": []byte("t0ken")},
		})).To(Succeed())
		a := get(ctx, newAgent(ns, "triage"))
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "tok", Key: "token"}
		Expect(k8sClient.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func() *agentsv1alpha1.SecretKeyReference {
			return get(ctx, newAgent(ns, "triage")).Spec.A2A.AuthSecretRef
		}).ShouldNot(BeNil())
		run := queueRun(ctx, "run-orphaned", "hang on", nil)
		Eventually(func() string { return get(ctx, run).Status.TaskID }).ShouldNot(BeEmpty())
		// Both at once for the next look: the operator is stopped while the
		// token goes and the timeout passes (a poll in between would end the
		// run for the missing token alone).
		stopManager()
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tok"}})).To(Succeed())
		fakeClock.Step(2 * time.Minute)
		stopManager = startManager()
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(Equal("The run exceeded its timeout of 1m0s; canceling the task failed: " +
			"The agent's token Secret tok does not exist; create it and send the call again"))
	})

	It("does not retry a final error", func(ctx SpecContext) {
		agent.RefuseCalls()
		run := queueRun(ctx, "run-400", "{}", nil)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(ContainSubstring("The agent refused the message"))
		Consistently(callsTo(agent), 500*time.Millisecond).Should(Equal(1))
	})

	It("keeps a thread's order under 20 runs queued at once", func(ctx SpecContext) {
		a := get(ctx, newAgent(ns, "triage"))
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.MaxConcurrentRuns = 8
		Expect(k8sClient.Patch(ctx, a, patch)).To(Succeed())
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
		})).To(Succeed())
		base := fakeClock.Now()
		var runs []*agentsv1alpha1.AgentRun
		for i := range 20 {
			runs = append(runs, queueRun(ctx, fmt.Sprintf("seq-%02d", i), fmt.Sprintf("slow event %02d", i), func(r *agentsv1alpha1.AgentRun) {
				r.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
				r.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
				r.Spec.ReceivedAt = metav1.NewTime(base.Add(time.Duration(i) * time.Second))
			}))
		}
		for _, r := range runs {
			Eventually(runState(ctx, r), 60*time.Second).Should(Equal(agentsv1alpha1.RunSuccess))
		}
		var order []string
		for _, m := range agent.Messages() {
			order = append(order, m.Text[strings.Index(m.Text, "event "):][:8])
		}
		want := make([]string, 20)
		for i := range want {
			want[i] = fmt.Sprintf("event %02d", i)
		}
		Expect(order).To(Equal(want), "in the order received")
		contexts := map[string]bool{}
		for _, m := range agent.Messages() {
			contexts[m.ContextID] = true
		}
		Expect(contexts).To(HaveLen(1), "one context for the thread")
		oneContext, _ := agent.Overlap()
		Expect(oneContext).To(Equal(1), "one run of the thread at a time")
	})

	It("runs at most maxConcurrentRuns of the Agent at once under a burst", func(ctx SpecContext) {
		a := get(ctx, newAgent(ns, "triage"))
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.MaxConcurrentRuns = 3
		Expect(k8sClient.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func() int32 { return get(ctx, newAgent(ns, "triage")).Spec.MaxConcurrentRuns }).Should(Equal(int32(3)))
		var runs []*agentsv1alpha1.AgentRun
		for i := range 12 {
			runs = append(runs, queueRun(ctx, fmt.Sprintf("burst-%02d", i), "slow event", nil))
		}
		for _, r := range runs {
			Eventually(runState(ctx, r), 60*time.Second).Should(Equal(agentsv1alpha1.RunSuccess))
		}
		_, all := agent.Overlap()
		Expect(all).To(BeNumerically("<=", 3), "never more than the Agent's slots")
		Expect(all).To(BeNumerically(">=", 2), "the slots are used in parallel")
	})

	It("fails a queued run that has no payload to send (a status written by hand), and still starts the others", func(ctx SpecContext) {
		bad := queueRun(ctx, "run-handmade", "{}", func(r *agentsv1alpha1.AgentRun) { r.Spec.Payload = nil })
		patch := client.MergeFrom(bad.DeepCopy())
		bad.Status.State = agentsv1alpha1.RunQueued
		Expect(k8sClient.Status().Patch(ctx, bad, patch)).To(Succeed())
		good := queueRun(ctx, "run-good", "{}", nil)
		Eventually(runState(ctx, bad)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, bad).Status.Message).To(Equal("The run has no payload to send"))
		Eventually(runState(ctx, good)).Should(Equal(agentsv1alpha1.RunSuccess))
	})

	It("speaks A2A 1.0 to a 1.0 agent", func(ctx SpecContext) {
		modern := a2apeers.V1JSONRPC()
		DeferCleanup(modern.Close)
		a := newAgent(ns, "modern")
		a.Spec.A2A.URL = modern.URL
		a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV10
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		run := queueRun(ctx, "run-10", "line one\nline two", func(r *agentsv1alpha1.AgentRun) {
			r.Spec.AgentRef.Name = "modern"
			r.Labels[agentsv1alpha1.LabelAgent] = "modern"
		})
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(get(ctx, run).Status.Output).To(Equal("echo: line one"))
		Expect(messagesOf(modern)(string(run.UID))).To(Equal(1))
		Expect(modern.Messages()[0].Text).To(ContainSubstring("<webhook-payload>\nline one\nline two\n</webhook-payload>"), "the whole payload, as text")
	})

	It("resumes a running run from its task after an operator restart, without sending again", func(ctx SpecContext) {
		run := queueRun(ctx, "run-h", "hang until canceled", nil)
		Eventually(func() string { return get(ctx, run).Status.TaskID }).ShouldNot(BeEmpty())
		stopManager()
		stopManager = startManager()
		fakeClock.Step(2 * time.Minute)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(ContainSubstring("the task was canceled"))
		Expect(agent.Messages()).To(HaveLen(1), "followed, not sent again")
	})

	It("records a failed task as error with the agent's reason", func(ctx SpecContext) {
		run := queueRun(ctx, "run-f", "fail please", nil)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(ContainSubstring(a2apeers.FailText))
	})

	It("runs at most maxConcurrentRuns at once, oldest first, and cancels a run past its timeout", func(ctx SpecContext) {
		first := queueRun(ctx, "run-1", "hang on", nil)
		Eventually(runState(ctx, first)).Should(Equal(agentsv1alpha1.RunRunning))
		second := queueRun(ctx, "run-2", "quick", nil)
		Consistently(runState(ctx, second), time.Second).Should(BeEmpty(), "the agent's only slot is taken")

		fakeClock.Step(2 * time.Minute) // past the agent's runTimeout
		Eventually(runState(ctx, first)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, first).Status.Message).To(ContainSubstring("exceeded its timeout of 1m0s; the task was canceled"))
		Eventually(runState(ctx, second)).Should(Equal(agentsv1alpha1.RunSuccess))
	})

	It("does not take an Agent the cache has not seen yet for a deleted one", func(ctx SpecContext) {
		// CI once ended a run with "Agent modern was deleted before the run
		// started": the Agent had been created just before the run.
		Expect(k8sClient.Create(ctx, newAgent(ns, "fresh"))).To(Succeed())
		cacheLags := interceptor.NewClient(watchClient, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*agentsv1alpha1.Agent); ok {
					return apierrors.NewNotFound(agentsv1alpha1.GroupVersion.WithResource("agents").GroupResource(), key.Name)
				}
				return c.Get(ctx, key, obj, opts...)
			},
		})
		key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
		Expect(cached.GetOrLive(ctx, cacheLags, k8sClient, key("fresh"), &agentsv1alpha1.Agent{})).To(HaveField("Name", "fresh"), "read from the API server")
		Expect(cached.GetOrLive(ctx, cacheLags, k8sClient, key("never-created"), &agentsv1alpha1.Agent{})).To(BeNil(), "gone there too")
	})

	It("starts a run as soon as its payload Secret appears", func(ctx SpecContext) {
		run := queueRunWithoutPayload(ctx, "run-late")
		Consistently(runState(ctx, run), 500*time.Millisecond).Should(BeEmpty(), "waits for its payload")
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "run-late", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: run.Name, UID: run.UID,
			}}},
			Type: agentsv1alpha1.SecretTypeWebhookPayload,
			Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("{}")},
		})).To(Succeed())
		// Far sooner than the 30 s the run would otherwise wait for its next look.
		Eventually(runState(ctx, run), 5*time.Second).Should(Equal(agentsv1alpha1.RunSuccess))
	})

	It("fails a run whose payload never comes, a grace after finding it missing", func(ctx SpecContext) {
		run := queueRunWithoutPayload(ctx, "run-nopayload")
		// A change to the Agent makes admission look again (the operator's
		// timer for the grace's end runs on real time, the clock here is fake).
		lookAgain := func(model string) {
			a := get(ctx, newAgent(ns, "triage"))
			patch := client.MergeFrom(a.DeepCopy())
			a.Spec.Model = model
			Expect(k8sClient.Patch(ctx, a, patch)).To(Succeed())
		}
		readyReason := func() string {
			if c := conditionOf(get(ctx, run).Status.Conditions, agentsv1alpha1.ConditionReady); c != nil {
				return c.Reason
			}
			return ""
		}
		Consistently(runState(ctx, run), 300*time.Millisecond).Should(BeEmpty(), "within the grace it waits")
		fakeClock.Step(agentsv1alpha1.PayloadGrace + time.Second)
		lookAgain("first")
		Eventually(readyReason).Should(Equal(agentsv1alpha1.ReasonWaitingForPayload), "past the grace: marked, not failed")
		Expect(runState(ctx, run)()).To(BeEmpty())
		Expect(get(ctx, run).Status.PayloadDeadline).To(HaveField("Time", BeTemporally("~", fakeClock.Now().Add(agentsv1alpha1.PayloadGrace), time.Second)),
			"the second grace counts from the mark, by the operator's clock")
		fakeClock.Step(agentsv1alpha1.PayloadGrace + time.Second)
		lookAgain("second")
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(Equal("The payload Secret run-nopayload does not exist"))
		Expect(agent.Messages()).To(BeEmpty())
	})

	It("fails a run whose agent's token Secret does not exist, saying so", func(ctx SpecContext) {
		a := get(ctx, newAgent(ns, "triage"))
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "no-such-token", Key: "token"}
		Expect(k8sClient.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func() *agentsv1alpha1.SecretKeyReference {
			cur := &agentsv1alpha1.Agent{}
			Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "triage"}, cur)).To(Succeed())
			return cur.Spec.A2A.AuthSecretRef
		}).ShouldNot(BeNil())
		run := queueRun(ctx, "run-notoken", "{}", nil)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(Equal("The agent's token Secret no-such-token does not exist; create it and send the call again"))
		Expect(agent.Messages()).To(BeEmpty())
	})

	It("gives runs Ready and Succeeded conditions, and a Warning event to one that fails", func(ctx SpecContext) {
		ok := queueRun(ctx, "run-cond-ok", "{}", nil)
		Eventually(runState(ctx, ok)).Should(Equal(agentsv1alpha1.RunSuccess))
		Eventually(func() []metav1.Condition { return get(ctx, ok).Status.Conditions }).Should(ContainElements(
			And(HaveField("Type", agentsv1alpha1.ConditionReady), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", agentsv1alpha1.ReasonSucceeded)),
			And(HaveField("Type", agentsv1alpha1.ConditionSucceeded), HaveField("Status", metav1.ConditionTrue)),
		))
		Expect(get(ctx, ok).Status.ObservedGeneration).To(Equal(get(ctx, ok).Generation))

		failed := queueRun(ctx, "run-cond-failed", "{}", func(r *agentsv1alpha1.AgentRun) {
			r.Spec.AgentRef.Name = "gone"
			r.Labels[agentsv1alpha1.LabelAgent] = "gone"
		})
		Eventually(runState(ctx, failed)).Should(Equal(agentsv1alpha1.RunError))
		Eventually(func() []metav1.Condition { return get(ctx, failed).Status.Conditions }).Should(ContainElements(
			And(HaveField("Type", agentsv1alpha1.ConditionReady), HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", agentsv1alpha1.ReasonFailed), HaveField("Message", "Agent gone was deleted before the run started")),
			And(HaveField("Type", agentsv1alpha1.ConditionSucceeded), HaveField("Status", metav1.ConditionFalse)),
		))
		Eventually(eventsFor(ctx, failed, agentsv1alpha1.EventRunFailed)).Should(ContainElement(And(
			HaveField("Type", corev1.EventTypeWarning), HaveField("Note", "Agent gone was deleted before the run started"))))

	})

	It("fails a queued run whose agent does not exist", func(ctx SpecContext) {
		run := queueRun(ctx, "run-orphan", "{}", func(r *agentsv1alpha1.AgentRun) {
			r.Spec.AgentRef.Name = "gone"
			r.Labels[agentsv1alpha1.LabelAgent] = "gone"
		})
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(Equal("Agent gone was deleted before the run started"))
	})

	It("fails a queued run whose agent is archived", func(ctx SpecContext) {
		a := get(ctx, newAgent(ns, "triage"))
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.Archived = true
		Expect(k8sClient.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func() bool {
			cur := &agentsv1alpha1.Agent{}
			Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "triage"}, cur)).To(Succeed())
			return cur.Spec.Archived
		}).Should(BeTrue())
		run := queueRun(ctx, "run-z", "{}", nil)
		Eventually(runState(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(ContainSubstring("archived before the run started"))
		Expect(agent.Messages()).To(BeEmpty())
	})
})

var _ = Describe("dispatch metrics", func() {
	It("reports queued runs by namespace and agent", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		busy := a2apeers.V1JSONRPC()
		DeferCleanup(busy.Close)
		a := newAgent(ns, "busy")
		a.Spec.A2A.URL = busy.URL
		a.Spec.MaxConcurrentRuns = 1
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		base := fakeClock.Now()
		for i, name := range []string{"q-1", "q-2", "q-3"} {
			run := &agentsv1alpha1.AgentRun{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: agentsv1alpha1.AgentRunSpec{
					EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "e"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "busy"},
					Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
					Payload:    &agentsv1alpha1.PayloadReference{SecretName: name},
					ReceivedAt: metav1.NewTime(base.Add(time.Duration(i) * time.Second)),
				},
			}
			Expect(k8sClient.Create(ctx, run)).To(Succeed())
			Expect(k8sClient.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: run.Name, UID: run.UID,
				}}},
				Type: agentsv1alpha1.SecretTypeWebhookPayload,
				Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("hang")},
			})).To(Succeed())
		}
		queued := func() map[string]float64 {
			got := map[string]float64{}
			// The operator's registry, as its /metrics serves it.
			families, err := metrics.Registry.Gather()
			Expect(err).NotTo(HaveOccurred())
			for _, f := range families {
				if f.GetName() != "hookrun_runs_queued" {
					continue
				}
				for _, m := range f.GetMetric() {
					labels := map[string]string{}
					for _, l := range m.GetLabel() {
						labels[l.GetName()] = l.GetValue()
					}
					if labels["namespace"] == ns {
						got[labels["agent"]] = m.GetGauge().GetValue()
					}
				}
			}
			return got
		}
		Eventually(func() agentsv1alpha1.RunState {
			return get(ctx, &agentsv1alpha1.AgentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "q-1"}}).Status.State
		}).Should(Equal(agentsv1alpha1.RunRunning))
		Eventually(queued).Should(Equal(map[string]float64{"busy": 2}), "one run holds the only slot; two wait")
		Consistently(queued, 500*time.Millisecond).Should(Equal(map[string]float64{"busy": 2}))
	})
})
