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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// agentSeriesIn counts the series of the run metrics that the operator's
// registry serves for Agent ns/agent, by metric name.
func agentSeriesIn(ns, agent string) map[string]int {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	got := map[string]int{}
	for _, f := range families {
		switch f.GetName() {
		case "hookrun_runs_finished_total", "hookrun_run_queue_seconds", "hookrun_run_duration_seconds":
		default:
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["agent"] == agent {
				got[f.GetName()]++
			}
		}
	}
	return got
}

var _ = Describe("Metric series of a deleted Agent", func() {
	It("are removed, and a run that ends after its Agent is gone does not bring them back", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		server := startPeer()
		for _, name := range []string{"triage", "other"} {
			a := newAgent(ns, name)
			a.Spec.A2A.URL = server.URL
			a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
			a.Spec.RunTimeout = &metav1.Duration{Duration: time.Hour}
			a.Spec.MaxConcurrentRuns = 1
			Expect(k8sClient.Create(ctx, a)).To(Succeed())
		}
		state := func(run *agentsv1alpha1.AgentRun) func() agentsv1alpha1.RunState {
			return func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }
		}
		done := queueTestRun(ctx, ns, "done", "{}", nil)
		Eventually(state(done)).Should(Equal(agentsv1alpha1.RunSuccess))
		otherDone := queueTestRun(ctx, ns, "other-done", "{}", func(r *agentsv1alpha1.AgentRun) {
			r.Spec.AgentRef.Name = "other"
			r.Labels[agentsv1alpha1.LabelAgent] = "other"
		})
		Eventually(state(otherDone)).Should(Equal(agentsv1alpha1.RunSuccess))
		// Still running, and still queued behind it, when the Agent goes
		// (envtest has no garbage collector: both stay, and end after it).
		running := queueTestRun(ctx, ns, "running", "hang", nil)
		Eventually(state(running)).Should(Equal(agentsv1alpha1.RunRunning))
		queued := queueTestRun(ctx, ns, "queued", "{}", nil)

		series := map[string]int{"hookrun_runs_finished_total": 1, "hookrun_run_queue_seconds": 1, "hookrun_run_duration_seconds": 1}
		Expect(agentSeriesIn(ns, "triage")).To(Equal(series))
		Expect(agentSeriesIn(ns, "other")).To(Equal(series))

		triage := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage"}}
		Expect(k8sClient.Delete(ctx, triage)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(triage), &agentsv1alpha1.Agent{}))
		}).Should(BeTrue())
		Eventually(state(running)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, running).Status.Message).To(ContainSubstring("was deleted while the run was running"))
		Eventually(state(queued)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, queued).Status.Message).To(ContainSubstring("was deleted before the run started"))

		Eventually(func() map[string]int { return agentSeriesIn(ns, "triage") }).Should(BeEmpty())
		Consistently(func() map[string]int { return agentSeriesIn(ns, "triage") }).Should(BeEmpty())
		Expect(agentSeriesIn(ns, "other")).To(Equal(series), "another Agent's series stay")

		// An Agent of the same name, created again, has series again.
		again := newAgent(ns, "triage")
		again.Spec.A2A.URL = server.URL
		again.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
		Expect(k8sClient.Create(ctx, again)).To(Succeed())
		Eventually(func() []string { return get(ctx, again).Finalizers }).Should(ContainElement(agentsv1alpha1.FinalizerCleanup))
		rerun := queueTestRun(ctx, ns, "again", "{}", nil)
		Eventually(state(rerun)).Should(Equal(agentsv1alpha1.RunSuccess))
		Eventually(func() map[string]int { return agentSeriesIn(ns, "triage") }).Should(Equal(series))
	})
})
