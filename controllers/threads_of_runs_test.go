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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	agentrun "github.com/hookrun/hookrun/controllers/run"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// A thread's status is derived from its runs: these specs run the AgentRun
// controllers, which send the runs in the thread's context, and the
// AgentThread controller, which shows the thread's last run and context,
// together.
var _ = Describe("A thread and its runs", func() {
	var (
		ns    string
		agent *a2apeers.Peer
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		agent = servePeer(ctx, ns, func(a *agentsv1alpha1.Agent) { a.Spec.MaxConcurrentRuns = 1 })
	})
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

	It("keeps one context for a ContinueExisting thread", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Title: "Ops"},
		})).To(Succeed())
		continueOps := func(r *agentsv1alpha1.AgentRun) {
			r.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
			r.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		}
		a := queueTestRun(ctx, ns, "run-x", "one", continueOps)
		b := queueTestRun(ctx, ns, "run-y", "two", continueOps)
		Eventually(runState(ctx, a)).Should(Equal(agentsv1alpha1.RunSuccess))
		Eventually(runState(ctx, b)).Should(Equal(agentsv1alpha1.RunSuccess))
		// The thread shows its runs once its reconciler has seen the last
		// one finish: shortly after, not before.
		thread := &agentsv1alpha1.AgentThread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"}}
		Eventually(func() string { return get(ctx, thread).Status.LastRunName }).Should(Equal("run-y"))
		th := get(ctx, thread)
		Expect(th.Status.ContextID).NotTo(BeEmpty())
		Expect(get(ctx, a).Status.Thread.ContextID).To(Equal(th.Status.ContextID))
		Expect(get(ctx, b).Status.Thread.ContextID).To(Equal(th.Status.ContextID))
		Expect(get(ctx, a).Status.Thread.Name).To(Equal("ops"))
		Expect(th.Status.LastRunName).To(Equal("run-y"))
		for _, m := range agent.Messages() {
			Expect(m.ContextID).To(Equal(th.Status.ContextID))
		}
	})

	It("shows on the thread the run appended last, whatever order the runs finish in", func(ctx SpecContext) {
		// A thread's status is derived from its runs, so a run whose final
		// write comes late cannot replace a later one: the spec finishes
		// two runs, then writes the first one's final status again.
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
		})).To(Succeed())
		continueOps := func(r *agentsv1alpha1.AgentRun) {
			r.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
			r.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		}
		first := queueTestRun(ctx, ns, "run-a", "one", continueOps)
		Eventually(runState(ctx, first)).Should(Equal(agentsv1alpha1.RunSuccess))
		second := queueTestRun(ctx, ns, "run-b", "two", continueOps)
		Eventually(runState(ctx, second)).Should(Equal(agentsv1alpha1.RunSuccess))
		thread := &agentsv1alpha1.AgentThread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"}}
		Eventually(func() string { return get(ctx, thread).Status.LastRunName }).Should(Equal("run-b"))

		late := get(ctx, first)
		patch := client.MergeFrom(late.DeepCopy())
		late.Status.Output = "written again, late"
		Expect(k8sClient.Status().Patch(ctx, late, patch)).To(Succeed())
		Consistently(func() string { return get(ctx, thread).Status.LastRunName }, time.Second).Should(Equal("run-b"),
			"an earlier run does not replace a later one")
	})

	It("puts a thread right after an operator that died between a run's final state and the thread's update", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
		})).To(Succeed())
		thread := &agentsv1alpha1.AgentThread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"}}
		continueOps := func(r *agentsv1alpha1.AgentRun) {
			r.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
			r.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		}
		run := queueTestRun(ctx, ns, "run-a", "hang until canceled", continueOps)
		Eventually(func() string { return get(ctx, run).Status.TaskID }).ShouldNot(BeEmpty())
		Eventually(func() string { return get(ctx, thread).Status.ContextID }).Should(Equal(get(ctx, run).Status.Thread.ContextID))

		By("the operator is killed; what it stored last is the run's final state, with the context the agent chose")
		stopManager()
		final := get(ctx, run)
		patch := client.MergeFrom(final.DeepCopy())
		agentrun.Finish(&final.Status, agentsv1alpha1.RunSuccess, "", "done", time.Now())
		final.Status.Thread.ContextID = "context-the-agent-chose"
		agentsv1alpha1.SetRunConditions(final)
		Expect(k8sClient.Status().Patch(ctx, final, patch)).To(Succeed())
		Expect(get(ctx, thread).Status.LastRunName).To(BeEmpty(), "the thread was not told before the operator died")

		By("after the restart the thread shows the run and its context, and the next run continues in it")
		stopManager = startManager()
		Eventually(func() agentsv1alpha1.AgentThreadStatus { return get(ctx, thread).Status }).Should(And(
			HaveField("LastRunName", "run-a"), HaveField("ContextID", "context-the-agent-chose")))
		next := queueTestRun(ctx, ns, "run-b", "two", continueOps)
		Eventually(runState(ctx, next)).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(agent.Messages()).To(HaveLen(2))
		Expect(agent.Messages()[1].ContextID).To(Equal("context-the-agent-chose"))
		Eventually(func() string { return get(ctx, thread).Status.LastRunName }).Should(Equal("run-b"))
	})

})
