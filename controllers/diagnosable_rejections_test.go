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
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/receiver"
	"github.com/hookrun/hookrun/test/testenv"
)

// startReceiver runs `hookrun receiver` as its service account, writing its
// rejection report every reportInterval, and returns its handler.
func startReceiver(ctx context.Context, podName string, reportInterval time.Duration) http.Handler {
	GinkgoHelper()
	opts := receiver.NewOptions()
	opts.ListenAddress = "127.0.0.1:0"
	opts.Namespace = clusterinstall.Namespace
	opts.PodName = podName
	opts.RejectionReportInterval = reportInterval
	Expect(opts.Validate()).To(Succeed())
	mgr, err := ctrl.NewManager(testenv.AsServiceAccount(cfg, clusterinstall.Namespace, clusterinstall.ReceiverServiceAccount), ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache:      receiver.CacheOptions(opts),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	rctx, cancel := context.WithCancel(ctx)
	h, err := receiver.Setup(rctx, mgr, opts, receiver.Dependencies{Clock: fakeClock})
	Expect(err).NotTo(HaveOccurred())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(rctx)).To(Succeed())
	}()
	DeferCleanup(func() { cancel(); <-done })
	Eventually(mgr.GetCache().WaitForCacheSync).WithArguments(rctx).Should(BeTrue())
	return h
}

var _ = Describe("Diagnosable rejections", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
	})

	It("shows N wrong-secret calls as N forbidden in the endpoint's status within the report interval", func(ctx SpecContext) {
		const n = 7
		h := startReceiver(ctx, "rcv-"+ns, time.Second)
		srv := httptest.NewServer(h)
		DeferCleanup(srv.Close)
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		url := srv.URL + "/api/webhooks/" + got.Status.EndpointID + "/receive"
		call := func(secret string) int {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
			Expect(err).NotTo(HaveOccurred())
			if secret != "" {
				req.Header.Set(agentsv1alpha1.SecretHeader, secret)
			}
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Body.Close()).To(Succeed())
			return resp.StatusCode
		}
		Eventually(call).WithArguments("wrong").Should(Equal(http.StatusForbidden), "the receiver serves the endpoint")
		for range n - 1 {
			Expect(call("wrong")).To(Equal(http.StatusForbidden))
		}
		Expect(call("")).To(Equal(http.StatusUnauthorized))

		since := metav1.NewTime(fakeClock.Now().UTC().Truncate(time.Hour).Add(-time.Hour))
		Eventually(func(g Gomega) {
			r := endpointState(ctx, ep)().Status.Rejections
			g.Expect(r).NotTo(BeNil())
			g.Expect(r.Counts).To(Equal([]agentsv1alpha1.RejectionCount{{Code: "forbidden", Count: n}, {Code: "unauthorized", Count: 1}}))
			g.Expect(r.Since.Equal(&since)).To(BeTrue(), "since %s, want %s", r.Since, since)
			g.Expect(r.LastRejectionTime).NotTo(BeNil())
		}).WithTimeout(5 * time.Second).Should(Succeed())
		report := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: clusterinstall.Namespace, Name: agentsv1alpha1.RejectionReportPrefix + "rcv-" + ns}, report)).To(Succeed())
		Expect(report.Data).To(HaveKey(string(got.UID)), "the receiver's own report, written as its service account")
	})

	It("shows why a filter ignores calls: its newest error in status.rejections.lastEvaluationError", func(ctx SpecContext) {
		h := startReceiver(ctx, "rcv-"+ns, time.Second)
		srv := httptest.NewServer(h)
		DeferCleanup(srv.Close)
		ep := newEndpoint(ns, "opened-only", "triage")
		ep.Spec.Filter = `body.action == "opened"`
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		got := readyEndpoint(ctx, ep)
		secret := string(generatedSecret(ctx, got).Data[agentsv1alpha1.WebhookSecretKey])
		call := func(body string) int {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/webhooks/"+got.Status.EndpointID+"/receive", strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set(agentsv1alpha1.SecretHeader, secret)
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Body.Close()).To(Succeed())
			return resp.StatusCode
		}
		// A body without "action": the filter fails, the call is ignored.
		Eventually(call).WithArguments(`{"issue":{"number":7}}`).Should(Equal(http.StatusOK), "the receiver serves the endpoint")

		Eventually(func(g Gomega) {
			r := endpointState(ctx, ep)().Status.Rejections
			g.Expect(r).NotTo(BeNil())
			g.Expect(r.Counts).To(ContainElement(agentsv1alpha1.RejectionCount{Code: "filter_error", Count: 1}))
			g.Expect(r.LastEvaluationError).NotTo(BeNil(), "the owner sees why the call was ignored")
			g.Expect(r.LastEvaluationError.Expression).To(Equal(agentsv1alpha1.ExpressionFilter))
			g.Expect(r.LastEvaluationError.Message).To(ContainSubstring("no such key: action"))
			g.Expect(r.LastEvaluationError.Time.IsZero()).To(BeFalse())
		}).WithTimeout(5 * time.Second).Should(Succeed())
	})

	It("deletes a replica's report once nothing in it counts, and keeps a recent one", func(ctx SpecContext) {
		report := func(name string, writtenAt time.Time) *corev1.ConfigMap {
			return &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: clusterinstall.Namespace, Name: agentsv1alpha1.RejectionReportPrefix + name,
					Labels:      map[string]string{agentsv1alpha1.LabelRejectionReport: "true"},
					Annotations: map[string]string{agentsv1alpha1.AnnotationReportWrittenAt: writtenAt.UTC().Format(time.RFC3339)},
				},
				Data: map[string]string{},
			}
		}
		gone := report("gone-"+ns, fakeClock.Now().Add(-2*time.Hour))
		recent := report("recent-"+ns, fakeClock.Now())
		for _, cm := range []*corev1.ConfigMap{gone, recent} {
			Expect(k8sClient.Create(ctx, cm)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, cm))).To(Succeed()) })
		}
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(gone), &corev1.ConfigMap{})
		}).Should(Satisfy(apierrors.IsNotFound))
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(recent), &corev1.ConfigMap{})
		}).Should(Succeed())
	})

	It("records Paused and Resumed once for each move of spec.paused", func(ctx SpecContext) {
		ep := newEndpoint(ns, "github-issues", "triage")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		setPaused := func(paused bool) {
			cur := endpointState(ctx, ep)()
			patch := client.MergeFrom(cur.DeepCopy())
			cur.Spec.Paused = paused
			Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
			want := map[bool]agentsv1alpha1.EndpointPhase{true: agentsv1alpha1.EndpointPaused, false: agentsv1alpha1.EndpointActive}[paused]
			Eventually(func() agentsv1alpha1.EndpointPhase { return endpointState(ctx, ep)().Status.Phase }).Should(Equal(want))
		}
		readyEndpoint(ctx, ep)
		setPaused(true)
		Eventually(eventsFor(ctx, ep, agentsv1alpha1.EventPaused)).Should(ConsistOf(HaveField("Note", ContainSubstring("spec.paused"))))
		setPaused(false)
		Eventually(eventsFor(ctx, ep, agentsv1alpha1.EventResumed)).Should(HaveLen(1))
		setPaused(true)
		Eventually(eventsFor(ctx, ep, agentsv1alpha1.EventPaused)).Should(HaveLen(2))
		Consistently(eventsFor(ctx, ep, agentsv1alpha1.EventResumed)).Should(HaveLen(1))
		Expect(eventsFor(ctx, ep, agentsv1alpha1.EventPaused)()).To(HaveLen(2), "one event per move, not per reconcile")
	})
})
