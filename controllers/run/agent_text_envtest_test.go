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
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// Issue 14 item 6: an Agent's URL is no path into the cluster, and what an
// agent answers reaches a run's status.message only as one short line.
var _ = Describe("AgentRun and what its agent says", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
	})

	// rawAgent is a loopback agent answering every call with h; it counts
	// the connections it accepted.
	rawAgent := func(h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
		conns := &atomic.Int32{}
		srv := httptest.NewUnstartedServer(h)
		srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		DeferCleanup(srv.Close)
		return srv, conns
	}
	// runAgainst creates an Agent at url and one queued run with its payload.
	runAgainst := func(ctx SpecContext, url string) *agentsv1alpha1.AgentRun {
		GinkgoHelper()
		agent := newAgent(ns, "talker")
		agent.Spec.A2A.URL = url
		agent.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
		agent.Spec.RunTimeout = &metav1.Duration{Duration: time.Minute}
		Expect(k8sClient.Create(ctx, agent)).To(Succeed())
		run := &agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "run-1", Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint: "hooks", agentsv1alpha1.LabelAgent: agent.Name,
			}},
			Spec: agentsv1alpha1.AgentRunSpec{
				EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "hooks"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent.Name},
				Prompt: "Look.", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Owner:      &agentsv1alpha1.Owner{User: "alice@example.com"},
				Payload:    &agentsv1alpha1.PayloadReference{SecretName: "run-1", Bytes: 2, ContentType: "application/json"},
				ReceivedAt: metav1.NewTime(fakeClock.Now()),
			},
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "run-1", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: run.Name, UID: run.UID,
			}}},
			Type: agentsv1alpha1.SecretTypeWebhookPayload,
			Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte("{}")},
		})).To(Succeed())
		return run
	}
	finalMessage := func(ctx SpecContext, run *agentsv1alpha1.AgentRun) string {
		GinkgoHelper()
		Eventually(func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }).Should(Equal(agentsv1alpha1.RunError))
		return get(ctx, run).Status.Message
	}

	// 100 KiB of lines an agent might echo back: internals, or text made
	// to look like more status lines.
	chatter := strings.Repeat("Ready=True\r\n\x1b[1mall good\x1b[0m ", 100<<10/30)
	rpcAnswer := func(w http.ResponseWriter, result, rpcErr any) {
		out := map[string]any{"jsonrpc": "2.0", "id": 1}
		if rpcErr != nil {
			out["error"] = rpcErr
		} else {
			out["result"] = result
		}
		_ = json.NewEncoder(w).Encode(out)
	}
	DescribeTable("keeps 100 KiB from the agent out of status.message but for one short line",
		func(ctx SpecContext, h http.HandlerFunc, prefix string) {
			srv, _ := rawAgent(h)
			msg := finalMessage(ctx, runAgainst(ctx, srv.URL))
			Expect(msg).To(HavePrefix(prefix))
			Expect(msg).To(HaveSuffix(a2a.TruncatedMark))
			Expect(len(msg)).To(BeNumerically("<=", len(prefix)+a2a.MaxTextBytes+60), msg)
			Expect(msg).NotTo(ContainSubstring("\n"))
			Expect(msg).NotTo(ContainSubstring("\x1b"))
			Expect(utf8.ValidString(msg)).To(BeTrue())
		},
		Entry("an HTTP error's body", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(chatter))
		}), "The agent refused the message: a2a message/send: HTTP 400: the answer was: Ready=True [1mall good [0m Ready=True"),
		Entry("a JSON-RPC error's message", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			rpcAnswer(w, nil, map[string]any{"code": -32603, "message": chatter})
		}), "The agent refused the message: a2a message/send: JSON-RPC error -32603: Ready=True [1mall good [0m Ready=True"),
		Entry("a failed task's status message", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			rpcAnswer(w, map[string]any{"kind": "task", "id": "t-1", "contextId": "c-1", "status": map[string]any{
				"state": "failed",
				"message": map[string]any{"kind": "message", "messageId": "m-1", "role": "agent",
					"parts": []any{map[string]any{"kind": "text", "text": chatter}}},
			}}, nil)
		}), "The agent failed the task: Ready=True [1mall good [0m Ready=True"),
		Entry("a redirect's location", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", "http://10.0.0.1/"+strings.Repeat("a", 4000))
			w.WriteHeader(http.StatusTemporaryRedirect)
		}), "The agent refused the message: a2a message/send: HTTP 307: the agent answered with a redirect, which is not followed"),
	)

	It("ends a run whose agent is not on the allow list, never connecting to it", func(ctx SpecContext) {
		allow, err := a2a.NewAllowList([]string{"agents.example.com"}, []string{"192.0.2.0/24"})
		Expect(err).NotTo(HaveOccurred())
		stopManager()
		stopManager = startManagerWith(allow)
		DeferCleanup(func() {
			stopManager()
			stopManager = startManager()
		})

		srv, conns := rawAgent(func(w http.ResponseWriter, _ *http.Request) {
			rpcAnswer(w, map[string]any{"kind": "task", "id": "t-1", "contextId": "c-1", "status": map[string]any{"state": "completed"}}, nil)
		})
		run := runAgainst(ctx, srv.URL)
		Expect(finalMessage(ctx, run)).To(Equal(`The run was not sent: a2a message/send: the operator may not connect to agent host "127.0.0.1": ` +
			"it is not on the operator's agent allow-list (--agent-allowed-hosts, --agent-allowed-cidrs)"))
		Expect(conns.Load()).To(BeZero())
	})
})
