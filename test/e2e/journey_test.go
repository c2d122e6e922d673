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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
)

// answer is a receiver response: 202 {"runId","status"}, or
// {"error":{"code","message"}}.
type answer struct {
	Status int
	Header http.Header
	Body   string
	RunID  string
	Code   string
}

// call POSTs body to url with the secret header (when secret is not empty).
func call(ctx context.Context, url, secret, body string) answer {
	GinkgoHelper()
	h := http.Header{}
	if secret != "" {
		h.Set(agentsv1alpha1.SecretHeader, secret)
	}
	return callWith(ctx, url, h, body)
}

// callWith POSTs body, as JSON, to url with header.
func callWith(ctx context.Context, url string, header http.Header, body string) answer {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	var parsed struct {
		RunID string `json:"runId"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &parsed)
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: string(b), RunID: parsed.RunID, Code: parsed.Error.Code}
}

// accepted calls and expects a 202 with a runId.
func accepted(ctx context.Context, ep devcluster.Endpoint, body string) string {
	GinkgoHelper()
	a := call(ctx, ep.URL, ep.Secret, body)
	Expect(a.Status).To(Equal(http.StatusAccepted), a.Body)
	Expect(a.RunID).NotTo(BeEmpty())
	return a.RunID
}

func developer() client.Client {
	GinkgoHelper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.DeveloperKubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: devcluster.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// person is a client acting as user (impersonated by the admin).
func person(user string) client.Client {
	GinkgoHelper()
	c, err := client.New(testenv.AsUser(cluster.Admin, user), client.Options{Scheme: devcluster.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// mayTrigger asks the API server whether user is a member of Agent triage.
func mayTrigger(ctx context.Context, user string) bool {
	GinkgoHelper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: "trigger", Group: agentsv1alpha1.GroupVersion.Group, Resource: "agents", Name: "triage",
		},
	}}
	Expect(cluster.AdminClient.Create(ctx, review)).To(Succeed())
	return review.Status.Allowed
}

// makeEditor binds the built-in edit role to user in the namespace and waits
// until kube-controller-manager has aggregated hookrun's roles into it.
func makeEditor(ctx context.Context, user string) *rbacv1.RoleBinding {
	GinkgoHelper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "edit-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	Expect(cluster.AdminClient.Create(ctx, rb)).To(Succeed())
	Eventually(func() bool { return mayTrigger(ctx, user) }).Should(BeTrue())
	return rb
}

// newEndpoint creates an endpoint of Agent triage as c and waits until it is
// Ready with its URL and secret.
func newEndpoint(ctx context.Context, c client.Client, name string) devcluster.Endpoint {
	GinkgoHelper()
	Expect(c.Create(ctx, &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
		},
	})).To(Succeed())
	var ep devcluster.Endpoint
	Eventually(func(g Gomega) {
		var err error
		ep, err = cluster.EndpointFor(ctx, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ep.URL).NotTo(BeEmpty())
		g.Expect(ep.Secret).NotTo(BeEmpty())
	}).Should(Succeed())
	served(ctx, ep)
	return ep
}

// served waits until the receiver's informer knows ep: a wrong secret is
// then 403 instead of an unknown ID's 404 (and uses no rate-limit budget).
func served(ctx context.Context, ep devcluster.Endpoint) {
	GinkgoHelper()
	Eventually(func() int { return call(ctx, ep.URL, "not-the-secret", "{}").Status }).Should(Equal(http.StatusForbidden))
}

func run(ctx context.Context, name string) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	r := &agentsv1alpha1.AgentRun{}
	Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, r)).To(Succeed())
	return r
}

// succeeds waits until the run reaches success and returns it.
func succeeds(ctx context.Context, name string) *agentsv1alpha1.AgentRun {
	GinkgoHelper()
	Eventually(func() agentsv1alpha1.RunState { return run(ctx, name).Status.State }).Should(Equal(agentsv1alpha1.RunSuccess))
	return run(ctx, name)
}

func endpointStatus(ctx context.Context, name string) agentsv1alpha1.WebhookEndpointStatus {
	GinkgoHelper()
	ep := &agentsv1alpha1.WebhookEndpoint{}
	Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep)).To(Succeed())
	return ep.Status
}

func patchEndpoint(ctx context.Context, c client.Client, name string, mutate func(*agentsv1alpha1.WebhookEndpoint)) {
	GinkgoHelper()
	ep := &agentsv1alpha1.WebhookEndpoint{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep)).To(Succeed())
	patch := client.MergeFrom(ep.DeepCopy())
	mutate(ep)
	Expect(c.Patch(ctx, ep, patch)).To(Succeed())
}

var _ = Describe("a user's journey", func() {
	It("answers the sample endpoint with 202, the demo agent's answer reaches the run, and kubectl lists the runs in the order received", func(ctx SpecContext) {
		ep, err := cluster.EndpointFor(ctx, ns, sampleEndpoint)
		Expect(err).NotTo(HaveOccurred())
		var ids []string
		for _, title := range []string{"Login fails", "Logout fails", "Signup fails"} {
			ids = append(ids, accepted(ctx, ep, `{"action":"opened","issue":{"title":"`+title+`"}}`))
		}
		for i, id := range ids {
			Expect(succeeds(ctx, id).Status.Output).To(HavePrefix("Demo agent received"))
			Expect(run(ctx, id).Status.Output).To(ContainSubstring([]string{"Login", "Logout", "Signup"}[i]))
		}
		out, err := kubectl(ctx, "get", "agentruns", "-n", ns, "-l", agentsv1alpha1.LabelEndpoint+"="+sampleEndpoint,
			"--sort-by=.metadata.creationTimestamp", "-o", "name")
		Expect(err).NotTo(HaveOccurred(), out)
		var listed []string
		for _, line := range strings.Fields(out) {
			listed = append(listed, strings.TrimPrefix(line, "agentrun.agents.hookrun.dev/"))
		}
		Expect(listed).To(Equal(ids))
	})

	It("pauses (422) and resumes (202)", func(ctx SpecContext) {
		ep := newEndpoint(ctx, developer(), "pausable")
		patchEndpoint(ctx, developer(), "pausable", func(e *agentsv1alpha1.WebhookEndpoint) { e.Spec.Paused = true })
		Eventually(func() answer { return call(ctx, ep.URL, ep.Secret, "{}") }).Should(And(
			HaveField("Status", http.StatusUnprocessableEntity), HaveField("Code", "endpoint_paused")))
		patchEndpoint(ctx, developer(), "pausable", func(e *agentsv1alpha1.WebhookEndpoint) { e.Spec.Paused = false })
		Eventually(func() int { return call(ctx, ep.URL, ep.Secret, "{}").Status }).Should(Equal(http.StatusAccepted))
	})

	It("rotates: the old secret gets 403 at once, the new one 202", func(ctx SpecContext) {
		old := newEndpoint(ctx, developer(), "rotating")
		hash := endpointStatus(ctx, "rotating").SecretHash
		patchEndpoint(ctx, developer(), "rotating", func(e *agentsv1alpha1.WebhookEndpoint) {
			e.Annotations = map[string]string{agentsv1alpha1.AnnotationRotateSecret: time.Now().Format(time.RFC3339Nano)}
		})
		Eventually(func() string { return endpointStatus(ctx, "rotating").SecretHash }).ShouldNot(Equal(hash))
		fresh, err := cluster.EndpointFor(ctx, ns, "rotating")
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh.Secret).NotTo(Equal(old.Secret))
		// "At once": as soon as the new hash is stored, within the receiver's
		// informer delay (well under a second on loopback).
		Eventually(func() int { return call(ctx, old.URL, old.Secret, "{}").Status }, 2*time.Second).Should(Equal(http.StatusForbidden))
		Expect(call(ctx, fresh.URL, fresh.Secret, "{}").Status).To(Equal(http.StatusAccepted))
	})

	It("runs an unauthenticated endpoint's calls with low trust, in one context of its thread", func(ctx SpecContext) {
		ep, err := cluster.EndpointFor(ctx, ns, sampleUnauthenticated)
		Expect(err).NotTo(HaveOccurred())
		Expect(ep.Secret).To(BeEmpty())
		first := accepted(ctx, ep, `{"alert":"disk full"}`)
		second := accepted(ctx, ep, `{"alert":"disk fuller"}`)
		a, b := succeeds(ctx, first), succeeds(ctx, second)
		Expect(a.Spec.Trust).To(Equal(agentsv1alpha1.TrustLow))
		Expect(b.Spec.Trust).To(Equal(agentsv1alpha1.TrustLow))
		th := &agentsv1alpha1.AgentThread{}
		Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ops-alerts"}, th)).To(Succeed())
		Expect(th.Status.ContextID).NotTo(BeEmpty())
		Expect(a.Status.Thread.ContextID).To(Equal(th.Status.ContextID))
		Expect(b.Status.Thread.ContextID).To(Equal(th.Status.ContextID))
	})

	It("skips and pauses when the owner left, until a member takes over", func(ctx SpecContext) {
		const olivia, max = "olivia@example.com", "max@example.com"
		leaving := makeEditor(ctx, olivia)
		makeEditor(ctx, max)
		ep := newEndpoint(ctx, person(olivia), "olivias")
		Expect(cluster.AdminClient.Delete(ctx, leaving)).To(Succeed())
		Eventually(func() bool { return mayTrigger(ctx, olivia) }).Should(BeFalse())

		a := call(ctx, ep.URL, ep.Secret, "{}")
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Body)
		Expect(a.Code).To(Equal("owner_not_member"))
		Eventually(func() agentsv1alpha1.PauseReason { return endpointStatus(ctx, "olivias").PauseReason }).
			Should(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
		runs := &agentsv1alpha1.AgentRunList{}
		Expect(cluster.AdminClient.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "olivias"})).To(Succeed())
		Expect(runs.Items).To(HaveLen(1))
		Expect(runs.Items[0].Status.State).To(Equal(agentsv1alpha1.RunSkipped))
		Expect(runs.Items[0].Labels).To(HaveKeyWithValue(agentsv1alpha1.LabelSkipReason, agentsv1alpha1.SkipReasonOwnerNotMember))
		// The operator paused the endpoint for that run: the receiver writes
		// no endpoint status.
		paused := &agentsv1alpha1.WebhookEndpoint{}
		Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "olivias"}, paused)).To(Succeed())
		Expect(paused.ManagedFields).NotTo(ContainElement(HaveField("Manager", "hookrun-receiver")))

		patchEndpoint(ctx, person(max), "olivias", func(e *agentsv1alpha1.WebhookEndpoint) {
			e.Spec.Owner = &agentsv1alpha1.Owner{User: max}
		})
		Eventually(func() agentsv1alpha1.EndpointPhase { return endpointStatus(ctx, "olivias").Phase }).Should(Equal(agentsv1alpha1.EndpointActive))
		var id string
		Eventually(func() int {
			a := call(ctx, ep.URL, ep.Secret, `{"after":"takeover"}`)
			id = a.RunID
			return a.Status
		}).Should(Equal(http.StatusAccepted))
		Expect(succeeds(ctx, id).Spec.Owner.User).To(Equal(max))
	})

	It("deletes an endpoint's runs and payloads with it, and its URL then answers like an unknown one", func(ctx SpecContext) {
		ep := newEndpoint(ctx, developer(), "doomed")
		id := accepted(ctx, ep, `{"doomed":true}`)
		succeeds(ctx, id)
		unknownURL := strings.Replace(ep.URL, "/webhooks/", "/webhooks/x", 1)
		unknownBare := call(ctx, unknownURL, "", "{}")
		Expect(developer().Delete(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "doomed"}})).To(Succeed())
		Eventually(func() int {
			runs := &agentsv1alpha1.AgentRunList{}
			Expect(cluster.AdminClient.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "doomed"})).To(Succeed())
			secrets := &corev1.SecretList{}
			Expect(cluster.AdminClient.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "doomed"})).To(Succeed())
			return len(runs.Items) + len(secrets.Items)
		}).Should(BeZero(), "runs, payload Secrets and the generated Secret go with the endpoint")
		Eventually(func() answer { return call(ctx, ep.URL, ep.Secret, "{}") }).Should(And(
			HaveField("Status", http.StatusNotFound), HaveField("Code", "not_found")))
		bare := call(ctx, ep.URL, "", "{}")
		Expect(bare.Status).To(Equal(unknownBare.Status))
		Expect(bare.Body).To(Equal(unknownBare.Body))
	})

	It("answers 413 for a body over 1 MiB and 429 past the rate limit, as documented", func(ctx SpecContext) {
		ep := newEndpoint(ctx, developer(), "limited")
		big := call(ctx, ep.URL, ep.Secret, string(bytes.Repeat([]byte("x"), agentsv1alpha1.MaxPayloadBytes+1)))
		Expect(big.Status).To(Equal(http.StatusRequestEntityTooLarge), big.Body)
		Expect(big.Code).To(Equal("payload_too_large"))
		for range rateLimit {
			accepted(ctx, ep, "{}")
		}
		limited := call(ctx, ep.URL, ep.Secret, "{}")
		Expect(limited.Status).To(Equal(http.StatusTooManyRequests), limited.Body)
		Expect(limited.Code).To(Equal("rate_limited"))
		Expect(limited.Header.Get("Retry-After")).NotTo(BeEmpty())
		Expect(call(ctx, ep.URL, ep.Secret, "{}").Status).To(Equal(http.StatusTooManyRequests))
		// The first 429 is recorded as a skipped run naming the limit; later ones are not.
		Eventually(func() map[agentsv1alpha1.RunState]int {
			runs := &agentsv1alpha1.AgentRunList{}
			Expect(cluster.AdminClient.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "limited"})).To(Succeed())
			states := map[agentsv1alpha1.RunState]int{}
			for _, r := range runs.Items {
				states[r.Status.State]++
			}
			return states
		}).Should(Equal(map[agentsv1alpha1.RunState]int{agentsv1alpha1.RunSuccess: rateLimit, agentsv1alpha1.RunSkipped: 1}))
	})
})
