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
	"net/http"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
)

// The backlog cap, against the API server: nothing here starts runs, as
// with an agent that hangs, so every accepted call stays queued.
var _ = Describe("The backlog cap", func() {
	const (
		secret   = "the-backlog-secret-of-32-bytes-or-more"
		capacity = 4
	)
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	// flood sends n calls at once to the endpoint id through base.
	flood := func(base, id string, n int) []reply {
		GinkgoHelper()
		replies := make([]reply, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer GinkgoRecover()
				replies[i] = call(http.MethodPost, base+"/api/webhooks/"+id+"/receive", ptr(secret), strings.NewReader(`{"n":1}`))
			})
		}
		wg.Wait()
		return replies
	}
	byStatus := func(replies []reply) map[int]int {
		out := map[int]int{}
		for _, r := range replies {
			out[r.status]++
		}
		return out
	}
	// countRuns writes the endpoint's run counts as the operator would.
	countRuns := func(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, queued int64, replicas ...secondReceiver) {
		GinkgoHelper()
		cur := &agentsv1alpha1.WebhookEndpoint{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ep), cur)).To(Succeed())
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Status.Runs.Queued = queued
		cur.Status.Runs.LastRunTime = &metav1.Time{Time: fakeClock.Now()}
		Expect(k8sClient.Status().Patch(ctx, cur, patch)).To(Succeed())
		for _, r := range replicas {
			Eventually(func() string { return r.Lookup(cur.Status.EndpointID).Obj.ResourceVersion }).Should(Equal(cur.ResourceVersion))
		}
	}

	It("stores at most the cap of a flood of 10x the cap, answers the rest 429 backlog_full and records the first refusal", func(ctx SpecContext) {
		replica := startSecondReceiver(ctx, func(o *Options) { o.MaxQueuedRunsPerEndpoint, o.RateLimit = capacity, 1000 })
		ep, id := f.endpoint(ctx, endpointSpec{name: "flooded", secret: secret})
		Eventually(func() *endpoints.Endpoint { return replica.Lookup(id) }).ShouldNot(BeNil())

		replies := flood(replica.url, id, 10*capacity)
		Expect(byStatus(replies)).To(Equal(map[int]int{http.StatusAccepted: capacity, http.StatusTooManyRequests: 9 * capacity}))
		for _, r := range replies {
			if r.status == http.StatusTooManyRequests {
				Expect(r.code).To(Equal(answer.CodeBacklogFull))
				Expect(r.header.Get("Retry-After")).To(Equal("30"))
			}
		}
		var queued, skipped []agentsv1alpha1.AgentRun
		for _, run := range runsIn(ctx, f.ns) {
			switch run.EffectiveState() {
			case agentsv1alpha1.RunQueued:
				queued = append(queued, run)
			case agentsv1alpha1.RunSkipped:
				skipped = append(skipped, run)
			}
		}
		Expect(queued).To(HaveLen(capacity))
		Expect(skipped).To(HaveLen(1), "the first refusal is recorded, the others are not")
		Expect(skipped[0].Status.Message).To(ContainSubstring("4 runs of the endpoint are waiting to start"))

		By("the operator counting the runs, all of them started since")
		countRuns(ctx, ep, 0, replica)
		Expect(flood(replica.url, id, 1)[0].status).To(Equal(http.StatusAccepted))

		By("another replica reading the count the operator keeps")
		countRuns(ctx, ep, capacity, replica)
		other := startSecondReceiver(ctx, func(o *Options) { o.MaxQueuedRunsPerEndpoint, o.RateLimit = capacity, 1000 })
		Eventually(func() *endpoints.Endpoint { return other.Lookup(id) }).ShouldNot(BeNil())
		Expect(flood(other.url, id, 1)[0].code).To(Equal(answer.CodeBacklogFull))
	})

	It("caps the runs of one Agent's endpoints together", func(ctx SpecContext) {
		replica := startSecondReceiver(ctx, func(o *Options) { o.MaxQueuedRunsPerAgent, o.RateLimit = capacity, 1000 })
		first, firstID := f.endpoint(ctx, endpointSpec{name: "first", secret: secret})
		_, secondID := f.endpoint(ctx, endpointSpec{name: "second", secret: secret})
		Eventually(func() *endpoints.Endpoint { return replica.Lookup(secondID) }).ShouldNot(BeNil())
		countRuns(ctx, first, capacity-1, replica)

		Expect(byStatus(flood(replica.url, secondID, 3))).To(Equal(map[int]int{http.StatusAccepted: 1, http.StatusTooManyRequests: 2}))
		Expect(flood(replica.url, firstID, 1)[0].code).To(Equal(answer.CodeBacklogFull))
		var skipped []string
		for _, run := range runsIn(ctx, f.ns) {
			if run.EffectiveState() == agentsv1alpha1.RunSkipped {
				skipped = append(skipped, run.Status.Message)
			}
		}
		Expect(skipped).To(ConsistOf(ContainSubstring("runs of Agent triage are waiting to start"), ContainSubstring("runs of Agent triage are waiting to start")),
			"each endpoint records its first refusal")
	})

	// A ResourceQuota on count/secrets or count/agentruns is what stops a
	// namespace from filling etcd whatever the receiver's flags
	// (docs/scaling.md): its refusal is a 503 and leaves nothing behind.
	DescribeTable("answers a quota refusal with 503 and stores nothing",
		func(ctx SpecContext, resourceName corev1.ResourceName) {
			_, id := f.endpoint(ctx, endpointSpec{name: "quota", secret: secret})
			quota := &corev1.ResourceQuota{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "hookrun"},
				Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{resourceName: resource.MustParse("0")}},
			}
			Expect(k8sClient.Create(ctx, quota)).To(Succeed())
			// envtest runs no quota controller: write the usage it would.
			quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{resourceName: resource.MustParse("0")}}
			Expect(k8sClient.Status().Update(ctx, quota)).To(Succeed())

			r := post(id, ptr(secret), `{"n":1}`)
			Expect(r.status).To(Equal(http.StatusServiceUnavailable))
			Expect(r.code).To(Equal(answer.CodeUnavailable))
			Expect(r.header.Get("Retry-After")).NotTo(BeEmpty())
			Expect(runsIn(ctx, f.ns)).To(BeEmpty(), "no run without its payload")
			secrets := &corev1.SecretList{}
			Expect(k8sClient.List(ctx, secrets, client.InNamespace(f.ns))).To(Succeed())
			Expect(secrets.Items).To(BeEmpty())
		},
		Entry("on payload Secrets", corev1.ResourceName("count/secrets")),
		Entry("on AgentRuns", corev1.ResourceName("count/agentruns.agents.hookrun.dev")),
	)
})
