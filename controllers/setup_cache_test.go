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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

var _ = Describe("The operator's cache", func() {
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

		c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultTransform: CacheOptions(DefaultNamespace).DefaultTransform})
		Expect(err).NotTo(HaveOccurred())
		cctx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		go func() { _ = c.Start(cctx) }()
		cached := secretMetadata(ns, "applied")
		Eventually(func() error { return c.Get(ctx, client.ObjectKeyFromObject(cached), cached) }).Should(Succeed())
		Expect(cached.Annotations).To(Equal(map[string]string{agentsv1alpha1.AnnotationKeyHash: "sha256:00"}))
	})
})
