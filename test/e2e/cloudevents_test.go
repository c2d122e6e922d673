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

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
)

// senderRecorder is the demo agent, serving in this process, that keeps the
// "sender" metadata of every message it is sent.
type senderRecorder struct {
	agent http.Handler
	mu    sync.Mutex
	seen  []map[string]any
}

func (s *senderRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var rpc struct {
		Params struct {
			Message struct {
				Metadata map[string]struct {
					Sender map[string]any `json:"sender"`
				} `json:"metadata"`
			} `json:"message"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &rpc) == nil {
		if m, ok := rpc.Params.Message.Metadata[controllers.MetadataKey]; ok && m.Sender != nil {
			s.mu.Lock()
			s.seen = append(s.seen, m.Sender)
			s.mu.Unlock()
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.agent.ServeHTTP(w, r)
}

func (s *senderRecorder) senders() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.seen...)
}

// roundTripFunc lets the test see the answer the SDK's HTTP client gets.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// cloudEvent sends e to ep with the CloudEvents Go SDK and its Bearer
// token, in structured or binary mode, and returns the receiver's answer.
func cloudEvent(ctx context.Context, ep devcluster.Endpoint, e cloudevents.Event, structured bool) answer {
	GinkgoHelper()
	var a answer
	seeAnswer := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		a = answer{Status: resp.StatusCode, Body: string(b)}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return resp, nil
	})
	p, err := cehttp.New(cehttp.WithTarget(ep.URL), cehttp.WithHeader("Authorization", "Bearer "+ep.Secret), cehttp.WithRoundTripper(seeAnswer))
	Expect(err).NotTo(HaveOccurred())
	c, err := cloudevents.NewClient(p)
	Expect(err).NotTo(HaveOccurred())
	if structured {
		ctx = binding.WithForceStructured(ctx)
	} else {
		ctx = binding.WithForceBinary(ctx)
	}
	res := c.Send(ctx, e)
	Expect(cloudevents.IsUndelivered(res)).To(BeFalse(), "%v", res)
	if i := strings.Index(a.Body, `"runId":"`); i >= 0 {
		a.RunID = strings.SplitN(a.Body[i+len(`"runId":"`):], `"`, 2)[0]
	}
	return a
}

var _ = Describe("a CloudEvents sender", func() {
	It("sends with the CloudEvents SDK in both modes; the run reaches the agent with the event's type, id, source and subject", func(ctx SpecContext) {
		By("an Agent that records what it is sent, and a CloudEvents endpoint for refunds")
		rec := &senderRecorder{agent: demoagent.New()}
		srv := httptest.NewServer(rec)
		DeferCleanup(srv.Close)
		Expect(developer().Create(ctx, &agentsv1alpha1.Agent{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ce-recorder"},
			Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: srv.URL + "/"}},
		})).To(Succeed())
		Expect(developer().Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ce-orders"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "ce-recorder"}, Prompt: "Handle this refund.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Sender:         &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents, Events: []string{"com.example.order.refunded"}},
			},
		})).To(Succeed())
		var ep devcluster.Endpoint
		Eventually(func(g Gomega) {
			var err error
			ep, err = cluster.EndpointFor(ctx, ns, "ce-orders")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ep.Secret).NotTo(BeEmpty())
		}).Should(Succeed())

		By("the abuse-protection handshake, once the receiver serves the endpoint")
		Eventually(func(g Gomega) {
			req, err := http.NewRequestWithContext(ctx, http.MethodOptions, ep.URL, nil)
			g.Expect(err).NotTo(HaveOccurred())
			req.Header.Set("WebHook-Request-Origin", "eventgrid.example.com")
			resp, err := http.DefaultClient.Do(req)
			g.Expect(err).NotTo(HaveOccurred())
			_ = resp.Body.Close()
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
			g.Expect(resp.Header.Get("WebHook-Allowed-Origin")).To(Equal("eventgrid.example.com"))
			g.Expect(resp.Header.Get("Allow")).To(Equal(http.MethodPost))
		}).Should(Succeed())

		By("an event in binary mode starts a run that the agent answers; the same event in structured mode is that run")
		e := cloudevents.NewEvent()
		e.SetID("A-1001-refund-1")
		e.SetSource("/apis/v1/namespaces/shop/orders")
		e.SetType("com.example.order.refunded")
		e.SetSubject("orders/A-1001")
		Expect(e.SetData(cloudevents.ApplicationJSON, map[string]any{"order": "A-1001", "reason": "arrived broken"})).To(Succeed())
		var first answer
		Eventually(func() int { first = cloudEvent(ctx, ep, e, false); return first.Status }).Should(Equal(http.StatusAccepted))
		again := cloudEvent(ctx, ep, e, true)
		Expect(again.Status).To(Equal(http.StatusAccepted))
		Expect(again.RunID).To(Equal(first.RunID))
		r := succeeds(ctx, first.RunID)
		Expect(r.Status.Output).To(ContainSubstring(`First line: {"order":"A-1001","reason":"arrived broken"}`), "the event's data, as sent")
		want := map[string]any{
			"type": "CloudEvents", "event": "com.example.order.refunded", "deliveryId": "A-1001-refund-1",
			"source": "/apis/v1/namespaces/shop/orders", "subject": "orders/A-1001",
		}
		Expect(rec.senders()).To(ContainElement(want), "the A2A message's sender metadata")

		By("a structured event is sent to the agent whole, envelope and data")
		e2 := e.Clone()
		e2.SetID("A-1001-refund-2")
		structured := cloudEvent(ctx, ep, e2, true)
		Expect(structured.Status).To(Equal(http.StatusAccepted))
		Expect(succeeds(ctx, structured.RunID).Status.Output).To(ContainSubstring(`"specversion":"1.0"`))

		By("another type is ignored; a batch and an event without id start nothing")
		other := e.Clone()
		other.SetID("A-1001-created")
		other.SetType("com.example.order.created")
		Expect(cloudEvent(ctx, ep, other, false).Status).To(Equal(http.StatusOK))
		for _, bad := range []struct {
			contentType, body string
			status            int
		}{
			{"application/cloudevents-batch+json", `[{"specversion":"1.0","id":"b-1","source":"/s","type":"com.example.order.refunded"}]`, http.StatusUnsupportedMediaType},
			{"application/cloudevents+json", `{"specversion":"1.0","source":"/s","type":"com.example.order.refunded"}`, http.StatusBadRequest},
		} {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, strings.NewReader(bad.body))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", bad.contentType)
			req.Header.Set("Authorization", "Bearer "+ep.Secret)
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			_ = resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(bad.status), bad.contentType)
		}
		runs := &agentsv1alpha1.AgentRunList{}
		Expect(cluster.AdminClient.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "ce-orders"})).To(Succeed())
		Expect(runs.Items).To(HaveLen(2))
	})

	It("runs the sample CronJob's script as its Pod would: one run per Job, with the sample endpoint's generated token", func(ctx SpecContext) {
		samples := filepath.Join(testenv.Root(), "config", "samples", "senders")
		Expect(clusterinstall.ApplyIn(ctx, developer(), ns, filepath.Join(samples, "cloudevents.yaml"))).To(Succeed())
		var ep devcluster.Endpoint
		Eventually(func(g Gomega) {
			var err error
			ep, err = cluster.EndpointFor(ctx, ns, "cluster-events")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ep.Secret).NotTo(BeEmpty())
		}).Should(Succeed())

		raw, err := os.ReadFile(filepath.Join(samples, "cloudevents", "cronjob.yaml"))
		Expect(err).NotTo(HaveOccurred())
		cronJob := &batchv1.CronJob{}
		Expect(yaml.UnmarshalStrict(raw, cronJob)).To(Succeed())
		container := cronJob.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		const job = "cluster-events-daily-29390000"
		// The Pod's environment: the token from the Secret, the Job's name
		// and the namespace from the downward API, the URL set as told.
		env := []string{"PATH=" + os.Getenv("PATH"), "HOOKRUN_URL=" + ep.URL, "HOOKRUN_TOKEN=" + ep.Secret, "JOB_NAME=" + job, "NAMESPACE=" + ns}
		runScript := func(g Gomega) string {
			cmd := exec.CommandContext(ctx, container.Command[0], container.Command[1:]...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), string(out))
			return string(out)
		}
		// Until the receiver has the endpoint, curl fails on the 401.
		var first string
		Eventually(func(g Gomega) { first = runScript(g); g.Expect(first).To(ContainSubstring(`"status":"accepted"`)) }).Should(Succeed())
		runID := strings.SplitN(strings.SplitN(first, `"runId":"`, 2)[1], `"`, 2)[0]
		Expect(runScript(Default)).To(ContainSubstring(`"runId":"`+runID+`"`), "a retried Pod of the same Job is the same delivery")
		r := succeeds(ctx, runID)
		Expect(r.Spec.Sender).To(Equal(&agentsv1alpha1.RunSender{
			Type: agentsv1alpha1.SenderCloudEvents, Event: "com.example.schedule.daily-report", DeliveryID: job,
			Source: "/namespaces/" + ns + "/cronjobs/cluster-events-daily", Subject: "daily-report",
		}))
	})
})
