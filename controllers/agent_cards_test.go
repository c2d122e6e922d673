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
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/agent"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// The agents of these specs are the real SDKs (test/a2apeers): a2a-go v2
// serving A2A 1.0 over JSON-RPC or HTTP+JSON, and a2a-go v0.3, each with its
// own agent card. The Agents name no protocolVersion: the operator reads
// the card.
var _ = Describe("Agent cards", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	// discoveredAgent creates an Agent at url without protocolVersion.
	discoveredAgent := func(ctx SpecContext, name, url string, mutate func(*agentsv1alpha1.Agent)) *agentsv1alpha1.Agent {
		GinkgoHelper()
		a := newAgent(ns, name)
		a.Spec.A2A.URL = url
		a.Spec.A2A.ProtocolVersion = ""
		a.Spec.RunTimeout = &metav1.Duration{Duration: time.Minute}
		if mutate != nil {
			mutate(a)
		}
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		return a
	}
	runOf := func(agent string) func(*agentsv1alpha1.AgentRun) {
		return func(r *agentsv1alpha1.AgentRun) {
			r.Spec.AgentRef.Name = agent
			r.Labels[agentsv1alpha1.LabelAgent] = agent
		}
	}
	finished := func(ctx SpecContext, run *agentsv1alpha1.AgentRun) func() agentsv1alpha1.RunState {
		return func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }
	}
	a2aOf := func(ctx SpecContext, a *agentsv1alpha1.Agent) func() *agentsv1alpha1.A2AStatus {
		return func() *agentsv1alpha1.A2AStatus {
			st := get(ctx, a).Status.A2A
			if st != nil {
				st = st.DeepCopy()
				st.CardReadAt = nil // compared apart
			}
			return st
		}
	}

	// withToken gives an Agent the bearer token of tokenSecret.
	withToken := func(a *agentsv1alpha1.Agent) {
		a.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "agent-token", Key: "token"}
	}

	type peerCase struct {
		start   func(...a2apeers.Option) *a2apeers.Peer
		binding agentsv1alpha1.A2AProtocolBinding
		version agentsv1alpha1.A2AProtocolVersion
	}
	peers := map[string]peerCase{
		"jsonrpc10":  {a2apeers.V1JSONRPC, agentsv1alpha1.A2ABindingJSONRPC, agentsv1alpha1.A2AProtocolV10},
		"httpjson10": {a2apeers.V1HTTPJSON, agentsv1alpha1.A2ABindingHTTPJSON, agentsv1alpha1.A2AProtocolV10},
		"jsonrpc03":  {a2apeers.V03, agentsv1alpha1.A2ABindingJSONRPC, agentsv1alpha1.A2AProtocolV03},
	}

	It("reaches a 1.0 JSON-RPC, a 1.0 HTTP+JSON and a 0.3 agent through their cards: runs, a thread's context, cancel and input-required", func(ctx SpecContext) {
		tokenSecret(ctx, ns)
		for name, pc := range peers {
			By(name)
			peer := pc.start()
			DeferCleanup(peer.Close)
			a := discoveredAgent(ctx, name, peer.URL, withToken)
			Eventually(a2aOf(ctx, a)).Should(Equal(&agentsv1alpha1.A2AStatus{
				URL: peer.URL, ProtocolBinding: pc.binding, ProtocolVersion: pc.version,
			}))
			got := get(ctx, a)
			Expect(got.Status.A2A.CardReadAt).NotTo(BeNil())
			Expect(conditionOf(got.Status.Conditions, agentsv1alpha1.ConditionReady)).To(And(
				HaveField("Status", metav1.ConditionTrue), HaveField("Message", ContainSubstring("as the agent card lists"))))

			Expect(k8sClient.Create(ctx, &agentsv1alpha1.AgentThread{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-ops"},
				Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: name}, Title: "Ops"},
			})).To(Succeed())
			inThread := func(r *agentsv1alpha1.AgentRun) {
				runOf(name)(r)
				r.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
				r.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: name + "-ops"}
			}
			first := queueTestRun(ctx, ns, name+"-first", "hello\nworld", inThread)
			Eventually(finished(ctx, first)).Should(Equal(agentsv1alpha1.RunSuccess))
			Expect(get(ctx, first).Status.Output).To(ContainSubstring("echo: hello"))
			second := queueTestRun(ctx, ns, name+"-second", "again", inThread)
			Eventually(finished(ctx, second)).Should(Equal(agentsv1alpha1.RunSuccess))
			ctxID := get(ctx, first).Status.Thread.ContextID
			Expect(ctxID).NotTo(BeEmpty())
			Expect(get(ctx, second).Status.Thread.ContextID).To(Equal(ctxID), "the thread keeps its contextId")
			var sent []string
			for _, m := range peer.Messages() {
				sent = append(sent, m.ContextID)
			}
			Expect(sent).To(ConsistOf(ctxID, ctxID), "both messages reached the agent in the thread's context")

			asking := queueTestRun(ctx, ns, name+"-input", "input", runOf(name))
			Eventually(finished(ctx, asking)).Should(Equal(agentsv1alpha1.RunError))
			Expect(get(ctx, asking).Status.Message).To(ContainSubstring("input"))

			hanging := queueTestRun(ctx, ns, name+"-hang", "hang", runOf(name))
			Eventually(func() string { return get(ctx, hanging).Status.TaskID }).ShouldNot(BeEmpty())
			fakeClock.Step(2 * time.Minute)
			poke(ctx, hanging)
			Eventually(finished(ctx, hanging)).Should(Equal(agentsv1alpha1.RunError))
			Expect(get(ctx, hanging).Status.Message).To(ContainSubstring("the task was canceled"))

			for _, req := range peer.Requests() {
				want := "Bearer " + testToken
				if req.Path == "/.well-known/agent-card.json" {
					want = "" // a card is read without the token
				}
				Expect(req.Header.Get("Authorization")).To(Equal(want), req.Method+" "+req.Path)
			}
		}
	})

	It("sends the Agent's token only to the origin of spec.a2a.url, not to another origin its card names", func(ctx SpecContext) {
		tokenSecret(ctx, ns)
		peer := a2apeers.V1JSONRPC()
		DeferCleanup(peer.Close)
		cards := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"name":"x","version":"1","description":"d","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
				"supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, peer.URL)
		}))
		DeferCleanup(cards.Close)
		a := discoveredAgent(ctx, "elsewhere", cards.URL+"/", withToken)
		Eventually(a2aOf(ctx, a)).ShouldNot(BeNil())
		run := queueTestRun(ctx, ns, "elsewhere", "hello", runOf("elsewhere"))
		Eventually(finished(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(peer.Messages()).To(HaveLen(1))
		for _, req := range peer.Requests() {
			Expect(req.Header.Get("Authorization")).To(BeEmpty(), req.Method+" "+req.Path)
		}
	})

	It("keeps an Agent AgentCardInvalid, naming what its card lists, and sends its runs once the card is fixed", func(ctx SpecContext) {
		peer := a2apeers.V1HTTPJSON()
		DeferCleanup(peer.Close)
		var fixed atomic.Bool
		cards := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/.well-known/agent-card.json" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			binding := "GRPC"
			if fixed.Load() {
				binding = "HTTP+JSON"
			}
			_, _ = fmt.Fprintf(w, `{"name":"x","version":"1","description":"d","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
				"supportedInterfaces":[{"url":%q,"protocolBinding":%q,"protocolVersion":"1.0"}]}`, peer.URL, binding)
		}))
		DeferCleanup(cards.Close)
		a := discoveredAgent(ctx, "grpc-only", cards.URL+"/", nil)
		Eventually(func() *metav1.Condition {
			return conditionOf(get(ctx, a).Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", agentsv1alpha1.ReasonAgentCardInvalid),
			HaveField("Message", And(ContainSubstring("GRPC 1.0"), ContainSubstring(peer.URL)))))
		Expect(get(ctx, a).Status.A2A).To(BeNil())
		Expect(conditionOf(get(ctx, a).Status.Conditions, agentsv1alpha1.ConditionStalled)).To(HaveField("Status", metav1.ConditionTrue))

		run := queueTestRun(ctx, ns, "waits", "hello", runOf("grpc-only"))
		Eventually(finished(ctx, run)).Should(Equal(agentsv1alpha1.RunRunning))
		Consistently(finished(ctx, run)).Should(Equal(agentsv1alpha1.RunRunning), "the run waits for a usable card")

		fixed.Store(true)
		fakeClock.Step(agent.CardRetry)
		poke(ctx, a)
		Eventually(a2aOf(ctx, a)).Should(Equal(&agentsv1alpha1.A2AStatus{
			URL: peer.URL, ProtocolBinding: agentsv1alpha1.A2ABindingHTTPJSON, ProtocolVersion: agentsv1alpha1.A2AProtocolV10,
		}))
		Eventually(finished(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
	})

	It("ends a run the agent refuses for its version with a message naming the fix", func(ctx SpecContext) {
		old := a2apeers.V03()
		DeferCleanup(old.Close)
		modern := a2apeers.V1JSONRPC()
		DeferCleanup(modern.Close)
		rest := a2apeers.V1HTTPJSON()
		DeferCleanup(rest.Close)
		for name, c := range map[string]struct {
			url     string
			version agentsv1alpha1.A2AProtocolVersion
			want    []string
		}{
			"says-10": {old.URL, agentsv1alpha1.A2AProtocolV10, []string{"The agent refused A2A 1.0",
				"Remove spec.a2a.protocolVersion so the operator reads the agent card", `or set it to "0.3"`}},
			"says-03": {modern.URL, agentsv1alpha1.A2AProtocolV03, []string{"The agent refused A2A 0.3",
				"Remove spec.a2a.protocolVersion so the operator reads the agent card", `or set it to "1.0"`}},
			"rest-only": {rest.URL, agentsv1alpha1.A2AProtocolV10, []string{"HTTP 404",
				"remove spec.a2a.protocolVersion so the operator reads the agent card and sends where it says"}},
		} {
			discoveredAgent(ctx, name, c.url, func(a *agentsv1alpha1.Agent) { a.Spec.A2A.ProtocolVersion = c.version })
			run := queueTestRun(ctx, ns, name, "hello", runOf(name))
			Eventually(finished(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
			msg := get(ctx, run).Status.Message
			for _, w := range c.want {
				Expect(msg).To(ContainSubstring(w), name)
			}
		}
	})

	It("reads the card again when a send cannot reach the interface it named", func(ctx SpecContext) {
		peer := a2apeers.V1JSONRPC()
		DeferCleanup(peer.Close)
		var moved atomic.Bool
		var reads atomic.Int32
		cards := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reads.Add(1)
			where := "http://127.0.0.1:1/" // refuses connections: the agent moved away
			if moved.Load() {
				where = peer.URL
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"name":"x","version":"1","description":"d","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
				"supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, where)
		}))
		DeferCleanup(cards.Close)
		a := discoveredAgent(ctx, "moving", cards.URL+"/", nil)
		Eventually(a2aOf(ctx, a)).ShouldNot(BeNil())
		before := reads.Load()
		moved.Store(true)
		run := queueTestRun(ctx, ns, "after-move", "hello", runOf("moving"))
		Consistently(reads.Load).Should(Equal(before), "no read before 30s have passed since the last one")
		fakeClock.Step(agent.CardRetry)
		poke(ctx, a) // the Agent is requeued for then in real time; this is now
		Eventually(a2aOf(ctx, a)).Should(HaveField("URL", peer.URL))
		// The run's backoff is kept by the operator's clock: a send that
		// failed between the step and the new card (the second in a row)
		// waits at most 2s of it. Less than CardRetry, so no second read.
		fakeClock.Step(5 * time.Second)
		Eventually(finished(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(reads.Load()).To(Equal(before+1), "one read, asked for by the failing sends")
		Expect(get(ctx, a).Status.A2A.URL).To(Equal(peer.URL))
	})
})

const testToken = "s3cret-agent-token"

// tokenSecret creates the Secret withToken names, labelled so that Agents
// may name it.
func tokenSecret(ctx SpecContext, ns string) {
	GinkgoHelper()
	create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-token", Labels: map[string]string{
			agentsv1alpha1.LabelAllowReference: agentsv1alpha1.AllowReferenceTrue,
		}},
		Data: map[string][]byte{"token": []byte(testToken)},
	})
}
