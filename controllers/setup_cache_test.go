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
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

var _ = Describe("The operator's cache", func() {
	startCache := func(ctx SpecContext) cache.Cache {
		GinkgoHelper()
		c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultTransform: CacheOptions(DefaultNamespace).DefaultTransform})
		Expect(err).NotTo(HaveOccurred())
		cctx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		go func() { _ = c.Start(cctx) }()
		return c
	}

	// The leader holds every run and endpoint of the cluster: what tenants
	// and agents write into them must not be held once per object.
	It("keeps no prompt, output or message of a run, no prompt of an endpoint, and only hookrun's labels and annotations", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		ballast := strings.Repeat("x", 100<<10)
		theirs := map[string]string{"tenant.example.com/ballast": ballast}
		ours := map[string]string{agentsv1alpha1.LabelEndpoint: "hook", "tenant.example.com/team": "a"}
		run := queueTestRun(ctx, ns, "big", "{}", func(r *agentsv1alpha1.AgentRun) {
			r.Spec.Prompt = strings.Repeat("p", 32<<10)
			r.Annotations = theirs
			r.Labels = ours
			r.Spec.Sender = &agentsv1alpha1.RunSender{Type: agentsv1alpha1.SenderGitHub, Event: "issues", DeliveryID: "d-1"}
		})
		Expect(patchStatus(ctx, k8sClient, run, func(r *agentsv1alpha1.AgentRun) {
			r.Status.State, r.Status.Message, r.Status.Output = agentsv1alpha1.RunError, strings.Repeat("m", 4000), strings.Repeat("o", 16<<10)
			// Written here, not left to the operator's admission, which ends
			// this run too (it has no Agent) and may lose the race to this patch.
			r.Status.CompletedAt = &metav1.Time{Time: fakeClock.Now()}
			agentsv1alpha1.SetRunConditions(r)
		})).To(Succeed())
		ep := newEndpoint(ns, "hook", "triage")
		ep.Spec.Prompt = strings.Repeat("p", 32<<10)
		ep.Annotations = theirs
		create(ctx, ep)

		c := startCache(ctx)
		cachedRun := &agentsv1alpha1.AgentRun{}
		Eventually(func() (agentsv1alpha1.RunState, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(run), cachedRun)
			return cachedRun.Status.State, err
		}).Should(Equal(agentsv1alpha1.RunError))
		Expect(cachedRun.Spec.Prompt).To(BeEmpty())
		Expect(cachedRun.Status.Output).To(BeEmpty())
		Expect(cachedRun.Status.Message).To(BeEmpty())
		Expect(cachedRun.Status.Conditions).To(BeEmpty(), "nothing writes a finished run again")
		Expect(cachedRun.Spec.Sender).To(BeNil())
		Expect(cachedRun.Status.CompletedAt).NotTo(BeNil(), "retention reads it")
		Expect(cachedRun.Annotations).To(BeEmpty())
		Expect(cachedRun.Labels).To(Equal(map[string]string{agentsv1alpha1.LabelEndpoint: "hook"}))
		Expect(cachedRun.OwnerReferences).To(Equal(run.OwnerReferences))
		Expect(cachedRun.Spec.Payload).To(Equal(run.Spec.Payload), "what the operator reads stays")

		cachedEndpoint := &agentsv1alpha1.WebhookEndpoint{}
		Eventually(func() error { return c.Get(ctx, client.ObjectKeyFromObject(ep), cachedEndpoint) }).Should(Succeed())
		Expect(cachedEndpoint.Spec.Prompt).To(BeEmpty())
		Expect(cachedEndpoint.Annotations).To(BeEmpty())
		Expect(cachedEndpoint.Spec.AgentRef.Name).To(Equal("triage"))
	})

	It("keeps no Secret data: a Secret's last-applied-configuration is not in its cached metadata, hookrun's annotations are", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		applied := `{"apiVersion":"v1","kind":"Secret","data":{"token":"c2VjcmV0LXZhbHVl"}}`
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "applied", Annotations: map[string]string{
				corev1.LastAppliedConfigAnnotation: applied,
				"example.com/note":                 "other",
				agentsv1alpha1.AnnotationKeyHash:   "sha256:" + "00",
			}},
			Data: map[string][]byte{"token": []byte("secret-value")},
		}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())

		c := startCache(ctx)
		cached := cached.SecretMetadata(ns, "applied")
		Eventually(func() error { return c.Get(ctx, client.ObjectKeyFromObject(cached), cached) }).Should(Succeed())
		Expect(cached.Annotations).To(Equal(map[string]string{agentsv1alpha1.AnnotationKeyHash: "sha256:00"}))
	})

	// Any namespace may write keys under agents.hookrun.dev/, on its Secrets
	// too (watched in every namespace): only the keys hookrun defines are
	// kept, and a long value of one as its hash.
	It("keeps only the label and annotation keys hookrun defines, not every key under its prefix, and a long annotation value as its SHA-256", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		long := strings.Repeat("r", 4096)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuffed",
			Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint:   "hook",
				"agents.hookrun.dev/ballast-1": strings.Repeat("l", 63),
				"agents.hookrun.dev/ballast-2": strings.Repeat("l", 63),
			},
			Annotations: map[string]string{
				agentsv1alpha1.AnnotationRotateSecret: long,
				agentsv1alpha1.AnnotationSenderType:   "GitHub",
				"agents.hookrun.dev/ballast":          strings.Repeat("a", 64<<10),
			},
		}}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())

		c := startCache(ctx)
		cached := cached.SecretMetadata(ns, "stuffed")
		Eventually(func() error { return c.Get(ctx, client.ObjectKeyFromObject(cached), cached) }).Should(Succeed())
		Expect(cached.Labels).To(Equal(map[string]string{agentsv1alpha1.LabelEndpoint: "hook"}))
		Expect(cached.Annotations).To(Equal(map[string]string{
			agentsv1alpha1.AnnotationRotateSecret: agentsv1alpha1.SecretHash([]byte(long)),
			agentsv1alpha1.AnnotationSenderType:   "GitHub",
		}))
	})
	// Any namespace editor can give its Secrets thousands of finalizers
	// or owner references, and the operator caches the metadata of every
	// Secret of the cluster: 350 such Secrets held ~500 MiB in the leader.
	It("keeps of a Secret's metadata only what hookrun reads: no finalizers, no owner references but to hookrun's kinds", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		ours := metav1.OwnerReference{APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "WebhookEndpoint", Name: "hook",
			UID: "0b7c5b1e-0000-4000-8000-000000000001", Controller: ptr.To(true)}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuffed-meta",
			Labels:          map[string]string{agentsv1alpha1.LabelEndpoint: "hook"},
			OwnerReferences: []metav1.OwnerReference{ours},
		}}
		for i := range 2000 {
			secret.Finalizers = append(secret.Finalizers, fmt.Sprintf("tenant.example.com/hold-%04d", i))
			secret.OwnerReferences = append(secret.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap",
				Name: fmt.Sprintf("cm-%04d", i), UID: types.UID(fmt.Sprintf("0b7c5b1e-0000-4000-8000-%012d", i+2))})
		}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(k8sClient.Patch(ctx, secret, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		})

		c := startCache(ctx)
		cached := cached.SecretMetadata(ns, "stuffed-meta")
		Eventually(func() error { return c.Get(ctx, client.ObjectKeyFromObject(cached), cached) }).Should(Succeed())
		Expect(cached.Finalizers).To(BeEmpty())
		Expect(cached.OwnerReferences).To(Equal([]metav1.OwnerReference{ours}))
		Expect(cached.UID).To(Equal(secret.UID))
		Expect(cached.ResourceVersion).To(Equal(secret.ResourceVersion))
		Expect(cached.Labels).To(Equal(map[string]string{agentsv1alpha1.LabelEndpoint: "hook"}))
		Expect(metav1.IsControlledBy(cached, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{UID: ours.UID}})).To(BeTrue(),
			"the operator's test of what it owns still holds")
	})
})
