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

package v1alpha1_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

var _ = Describe("sender type CloudEvents", func() {
	It("is a sender type that names its events, and allows no unauthenticated calls", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		ep := validEndpoint(ns)
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents, Events: []string{"dev.knative.apiserver.resource.add"}}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())

		open := validEndpoint(ns)
		open.Name = "open"
		open.Spec.AllowUnauthenticated = true
		open.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents}
		expectInvalid(k8sClient.Create(ctx, open), "spec.sender.type needs a secret")
	})

	It("records a run's source and subject, each at most 256 characters", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		run := validRun(ns)
		run.Spec.Sender = &agentsv1alpha1.RunSender{
			Type: agentsv1alpha1.SenderCloudEvents, Event: "com.example.order.refunded", DeliveryID: "A-1001",
			Source: strings.Repeat("s", 256), Subject: strings.Repeat("u", 256),
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		got := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(run), got)).To(Succeed())
		Expect(got.Spec.Sender).To(Equal(run.Spec.Sender))

		for _, field := range []string{"source", "subject"} {
			long := validRun(ns)
			long.Name = "long-" + field
			long.Spec.Sender = &agentsv1alpha1.RunSender{Type: agentsv1alpha1.SenderCloudEvents}
			if field == "source" {
				long.Spec.Sender.Source = strings.Repeat("s", 257)
			} else {
				long.Spec.Sender.Subject = strings.Repeat("u", 257)
			}
			expectInvalid(k8sClient.Create(ctx, long), "spec.sender."+field)
		}
	})
})
