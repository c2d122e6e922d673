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
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// gitOpsManager is the field manager a GitOps tool applies with (Argo CD's
// server-side apply uses this one).
const gitOpsManager = "argocd-controller"

// ownerReferenceWatch records every owner reference a watch on one endpoint
// has seen, from before it exists until stop.
type ownerReferenceWatch struct {
	mu   sync.Mutex
	seen []metav1.OwnerReference
	n    int
	stop func()
}

func watchOwnerReferences(ctx context.Context, name string) *ownerReferenceWatch {
	GinkgoHelper()
	wc, err := client.NewWithWatch(cluster.Admin, client.Options{Scheme: devcluster.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &agentsv1alpha1.WebhookEndpointList{}, client.InNamespace(ns),
		client.MatchingFields{"metadata.name": name})
	Expect(err).NotTo(HaveOccurred())
	ow := &ownerReferenceWatch{stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			if ep, ok := ev.Object.(*agentsv1alpha1.WebhookEndpoint); ok && ev.Type != watch.Error {
				ow.mu.Lock()
				ow.n++
				ow.seen = append(ow.seen, ep.OwnerReferences...)
				ow.mu.Unlock()
			}
		}
	}()
	return ow
}

// events returns how many versions of the endpoint the watch saw, and the
// owner references among them.
func (w *ownerReferenceWatch) events() (int, []metav1.OwnerReference) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n, slices.Clone(w.seen)
}

// kubectlApply applies file server-side as the developer, with the GitOps
// tool's field manager.
func kubectlApply(ctx context.Context, file string) {
	GinkgoHelper()
	out, err := kubectl(ctx, "apply", "--server-side", "--field-manager="+gitOpsManager, "-f", file)
	Expect(err).NotTo(HaveOccurred(), out)
}

// managedBy is the managedFields entry of manager for the object itself (not
// a subresource).
func managedBy(ep *agentsv1alpha1.WebhookEndpoint, manager string) *metav1.ManagedFieldsEntry {
	for i := range ep.ManagedFields {
		if m := &ep.ManagedFields[i]; m.Manager == manager && m.Subresource == "" {
			return m
		}
	}
	return nil
}

func randomEndpointID() string {
	GinkgoHelper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	Expect(err).NotTo(HaveOccurred())
	return base64.RawURLEncoding.EncodeToString(b)
}

var _ = Describe("GitOps", func() {
	It("applies an endpoint as Argo CD would: a re-apply finds nothing to change, no owner reference ever appears, and a pinned URL survives a rebuild", func(ctx SpecContext) {
		id := randomEndpointID()
		manifest := filepath.Join(GinkgoT().TempDir(), "endpoint.yaml")
		Expect(os.WriteFile(manifest, fmt.Appendf(nil, `apiVersion: v1
kind: Secret
metadata:
  name: gitops-hook-id
  namespace: %[1]s
  labels:
    agents.hookrun.dev/allow-reference: "true"
data:
  id: %[2]s
---
apiVersion: agents.hookrun.dev/v1alpha1
kind: WebhookEndpoint
metadata:
  name: gitops-hooks
  namespace: %[1]s
  labels:
    app.kubernetes.io/managed-by: argocd
spec:
  agentRef:
    name: triage
  prompt: Post this status change to the incident channel.
  threadStrategy: NewThreadEachRun
  allowUnauthenticated: true
  endpointIDSecretRef:
    name: gitops-hook-id
    key: id
`, ns, base64.StdEncoding.EncodeToString([]byte(id))), 0o600)).To(Succeed())
		key := client.ObjectKey{Namespace: ns, Name: "gitops-hooks"}
		live := func() *agentsv1alpha1.WebhookEndpoint {
			ep := &agentsv1alpha1.WebhookEndpoint{}
			Expect(cluster.AdminClient.Get(ctx, key, ep)).To(Succeed())
			return ep
		}
		watched := watchOwnerReferences(ctx, key.Name)
		DeferCleanup(watched.stop)

		By("the first apply: the operator gives the endpoint the pinned URL")
		kubectlApply(ctx, manifest)
		wantURL := "/api/webhooks/" + id + "/receive"
		Eventually(func(g Gomega) {
			ep := live()
			g.Expect(ep.Status.URL).To(HaveSuffix(wantURL))
			g.Expect(ep.Status.ObservedGeneration).To(Equal(ep.Generation))
			g.Expect(conditionStatus(ep.Status.Conditions, agentsv1alpha1.ConditionReady)).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		url := live().Status.URL
		Eventually(func() int { return call(ctx, url, "", `{"status":"degraded"}`).Status }).Should(Equal(http.StatusAccepted))
		before := live()
		tool := managedBy(before, gitOpsManager)
		Expect(tool).NotTo(BeNil())
		Expect(tool.Operation).To(Equal(metav1.ManagedFieldsOperationApply))
		for _, m := range before.ManagedFields {
			if m.Manager != gitOpsManager {
				Expect(m.Subresource).To(Equal("status"), "%s (%s) owns fields outside status: %s", m.Manager, m.Operation, m.FieldsV1)
			}
		}

		By("a server-side diff, as Flux and Argo CD compute drift, finds nothing; the re-apply changes nothing")
		out, err := kubectl(ctx, "diff", "--server-side", "--field-manager="+gitOpsManager, "-f", manifest)
		Expect(err).NotTo(HaveOccurred(), "kubectl diff found a difference:\n%s", out)
		Expect(strings.TrimSpace(out)).To(BeEmpty())
		kubectlApply(ctx, manifest)
		after := live()
		Expect(after.Generation).To(Equal(before.Generation))
		Expect(after.Spec).To(Equal(before.Spec))
		Expect(after.Labels).To(Equal(before.Labels))
		Expect(after.Annotations).To(Equal(before.Annotations))
		Expect(after.Finalizers).To(BeEmpty())
		Expect(managedBy(after, gitOpsManager).FieldsV1).To(Equal(tool.FieldsV1))

		By("no owner reference, in any version of the endpoint the watch saw")
		Consistently(func() []metav1.OwnerReference { return live().OwnerReferences }, "3s", "200ms").Should(BeEmpty())
		n, refs := watched.events()
		Expect(n).To(BeNumerically(">=", 2), "the watch saw the endpoint created and its status written")
		Expect(refs).To(BeEmpty())

		By("a rebuild: the endpoint deleted and applied again from Git answers at the same URL")
		Expect(developer().Delete(ctx, after)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(cluster.AdminClient.Get(ctx, key, &agentsv1alpha1.WebhookEndpoint{}))
		}).Should(BeTrue())
		kubectlApply(ctx, manifest)
		Eventually(func() string { return live().Status.URL }).Should(Equal(url))
		Expect(live().UID).NotTo(Equal(after.UID))
		var runID string
		Eventually(func() int {
			a := call(ctx, url, "", `{"status":"resolved"}`)
			runID = a.RunID
			return a.Status
		}).Should(Equal(http.StatusAccepted))
		Expect(run(ctx, runID).OwnerReferences).To(ConsistOf(HaveField("UID", live().UID)))
	})

	It("deletes an Agent with its endpoints, threads, runs and their Secrets, with the garbage collector running, and leaves nothing behind", func(ctx SpecContext) {
		dev := developer()
		triage := &agentsv1alpha1.Agent{}
		Expect(dev.Get(ctx, client.ObjectKey{Namespace: ns, Name: "triage"}, triage)).To(Succeed())
		temp := &agentsv1alpha1.Agent{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "temp"},
			Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: triage.Spec.A2A.URL}},
		}
		Expect(dev.Create(ctx, temp)).To(Succeed())
		thread := &agentsv1alpha1.AgentThread{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "temp-ops"},
			Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "temp"}},
		}
		Expect(dev.Create(ctx, thread)).To(Succeed())
		spec := func(mutate func(*agentsv1alpha1.WebhookEndpointSpec)) agentsv1alpha1.WebhookEndpointSpec {
			s := agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "temp"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			}
			mutate(&s)
			return s
		}
		endpoints := map[string]agentsv1alpha1.WebhookEndpointSpec{
			"temp-plain": spec(func(*agentsv1alpha1.WebhookEndpointSpec) {}),
			"temp-github": spec(func(s *agentsv1alpha1.WebhookEndpointSpec) { // signed: a signing key in the receiver's namespace
				s.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}
			}),
			"temp-thread": spec(func(s *agentsv1alpha1.WebhookEndpointSpec) {
				s.ThreadStrategy = agentsv1alpha1.ContinueExisting
				s.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "temp-ops"}
			}),
		}
		for name, s := range endpoints {
			Expect(dev.Create(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: s})).To(Succeed())
		}

		By("each endpoint takes a call that the demo agent answers: runs and payload Secrets exist")
		signingKeys := []string{}
		for name := range endpoints {
			var ep devcluster.Endpoint
			Eventually(func(g Gomega) {
				var err error
				ep, err = cluster.EndpointFor(ctx, ns, name)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(ep.Secret).NotTo(BeEmpty())
			}).Should(Succeed())
			var id string
			Eventually(func() int {
				var a answer
				if name == "temp-github" {
					a = github(ctx, ep, ep.Secret, "issues", "temp-1", `{"action":"opened"}`)
				} else {
					a = call(ctx, ep.URL, ep.Secret, `{"temp":true}`)
				}
				id = a.RunID
				return a.Status
			}).Should(Equal(http.StatusAccepted))
			succeeds(ctx, id)
			live := &agentsv1alpha1.WebhookEndpoint{}
			Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, live)).To(Succeed())
			Expect(live.OwnerReferences).To(BeEmpty())
			if name == "temp-github" {
				signingKeys = append(signingKeys, agentsv1alpha1.SigningKeySecretName(string(live.UID)))
			}
		}
		Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: clusterinstall.Namespace, Name: signingKeys[0]}, &corev1.Secret{})).To(Succeed())
		Expect(get(ctx, thread).OwnerReferences).To(BeEmpty())
		Expect(get(ctx, temp).Finalizers).To(ConsistOf(agentsv1alpha1.FinalizerCleanup))
		left := func() []string {
			var names []string
			eps := &agentsv1alpha1.WebhookEndpointList{}
			Expect(cluster.AdminClient.List(ctx, eps, client.InNamespace(ns))).To(Succeed())
			for _, ep := range eps.Items {
				if _, ok := endpoints[ep.Name]; ok {
					names = append(names, "endpoint "+ep.Name)
				}
			}
			runs := &agentsv1alpha1.AgentRunList{}
			Expect(cluster.AdminClient.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelAgent: "temp"})).To(Succeed())
			for _, r := range runs.Items {
				names = append(names, "run "+r.Name)
			}
			secrets := &corev1.SecretList{}
			Expect(cluster.AdminClient.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
			for _, s := range secrets.Items {
				if _, ok := endpoints[s.Labels[agentsv1alpha1.LabelEndpoint]]; ok {
					names = append(names, "secret "+s.Name) // generated Secrets and payloads
				}
			}
			for _, name := range signingKeys {
				if err := cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: clusterinstall.Namespace, Name: name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
					names = append(names, "signing key "+name)
				}
			}
			for _, o := range []client.Object{&agentsv1alpha1.AgentThread{ObjectMeta: thread.ObjectMeta}, &agentsv1alpha1.Agent{ObjectMeta: temp.ObjectMeta}} {
				if err := cluster.AdminClient.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
					names = append(names, fmt.Sprintf("%T %s", o, o.GetName()))
				}
			}
			return names
		}
		Expect(len(left())).To(BeNumerically(">=", 3+3+3+1+1+1), "endpoints, runs, payloads, generated Secrets, signing key, thread, Agent")

		By("deleting the Agent as its developer deletes all of it")
		Expect(dev.Delete(ctx, temp)).To(Succeed())
		Eventually(left, time.Minute).Should(BeEmpty())
	})
})

// conditionStatus is the status of condition t, or "" without one.
func conditionStatus(conds []metav1.Condition, t string) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// get reads o again as the admin.
func get[T client.Object](ctx context.Context, o T) T {
	GinkgoHelper()
	Expect(cluster.AdminClient.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
	return o
}
