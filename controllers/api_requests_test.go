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
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// requestLog records the method and path of every request a client sends
// through it (rest.Config.Wrap).
type requestLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.requests = append(l.requests, req.Method+" "+req.URL.Path)
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// count is how many requests had method and a path that contains every one of parts.
func (l *requestLog) count(method string, parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
next:
	for _, r := range l.requests {
		m, path, _ := strings.Cut(r, " ")
		if m != method {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(path, p) {
				continue next
			}
		}
		n++
	}
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var _ = Describe("the operator's API requests", func() {
	It("makes one Secret and writes status once for a new endpoint", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		inNS := "/namespaces/" + ns + "/"
		const n = 10
		for i := range n {
			Expect(k8sClient.Create(ctx, newEndpoint(ns, "ep-"+string(rune('a'+i)), "triage"))).To(Succeed())
		}
		Eventually(func(g Gomega) {
			eps := &agentsv1alpha1.WebhookEndpointList{}
			g.Expect(k8sClient.List(ctx, eps, client.InNamespace(ns))).To(Succeed())
			g.Expect(eps.Items).To(HaveLen(n))
			for _, ep := range eps.Items {
				g.Expect(conditionOf(ep.Status.Conditions, agentsv1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
				g.Expect(ep.Status.SecretHash).NotTo(BeEmpty())
			}
		}).Should(Succeed())
		// The reconciles that the operator's own writes start must write nothing more.
		Consistently(func(g Gomega) {
			g.Expect(operatorRequests.count(http.MethodPost, inNS, "/secrets")).To(Equal(n), "Secrets created")
			g.Expect(operatorRequests.count(http.MethodPatch, inNS, "/webhookendpoints/", "/status")).To(Equal(n), "status writes")
			g.Expect(operatorRequests.count(http.MethodPut, inNS, "/webhookendpoints/")).To(BeZero(), "updates")
			g.Expect(operatorRequests.count(http.MethodPatch, inNS, "/secrets")).To(BeZero(), "Secrets applied")
		}).WithTimeout(3 * time.Second).Should(Succeed())
	})

	It("writes a running run's status only when a look at its task changes it", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		agentOfRuns(ctx, ns)
		run := queueTestRun(ctx, ns, "run-hang", "hang on", nil)
		Eventually(func() string { return get(ctx, run).Status.TaskID }).ShouldNot(BeEmpty())
		runStatus := "/namespaces/" + ns + "/agentruns/run-hang/status"
		written := operatorRequests.count(http.MethodPatch, runStatus)
		Expect(written).To(BeNumerically(">=", 1), "started, and its task recorded")
		// The agent keeps the task working; execution looks at it every 200 ms.
		Consistently(func() int { return operatorRequests.count(http.MethodPatch, runStatus) }).
			WithTimeout(3 * time.Second).Should(Equal(written))
	})
})
