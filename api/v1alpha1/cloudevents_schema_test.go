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
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

var _ = Describe("config/samples/senders/cloudevents", func() {
	dir := filepath.Join(senderSamplesDir, "cloudevents")

	It("has a CronJob that the API server takes, sending to the cloudevents.yaml endpoint with its generated secret, and a SinkBinding of that CronJob", func(ctx SpecContext) {
		var endpoint string
		for _, u := range readSampleFile(filepath.Join(senderSamplesDir, "cloudevents.yaml")) {
			if u.GetKind() == "WebhookEndpoint" {
				endpoint = u.GetName()
			}
		}
		Expect(endpoint).NotTo(BeEmpty())

		var cronJob *batchv1.CronJob
		var sinkBinding *unstructured.Unstructured
		for _, u := range readSamples(dir) {
			switch u.GetKind() {
			case "CronJob":
				cronJob = &batchv1.CronJob{}
				Expect(runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, cronJob, true)).To(Succeed())
			case "SinkBinding":
				sinkBinding = u
			default:
				Fail("unexpected kind " + u.GetKind())
			}
		}
		Expect(cronJob).NotTo(BeNil())
		Expect(sinkBinding).NotTo(BeNil())

		By("the API server takes the CronJob (a server-side dry run)")
		cronJob.Namespace = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, cronJob, client.DryRunAll)).To(Succeed())

		By("it reads the endpoint's generated secret and sends to the URL the SinkBinding also names")
		containers := cronJob.Spec.JobTemplate.Spec.Template.Spec.Containers
		Expect(containers).To(HaveLen(1))
		env := map[string]string{}
		for _, e := range containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				Expect(e.ValueFrom.SecretKeyRef.Name).To(Equal(agentsv1alpha1.GeneratedSecretName(endpoint)))
				Expect(e.ValueFrom.SecretKeyRef.Key).To(Equal(agentsv1alpha1.WebhookSecretKey))
				env[e.Name] = "secret"
				continue
			}
			env[e.Name] = e.Value
		}
		Expect(env).To(HaveKeyWithValue("HOOKRUN_TOKEN", "secret"))
		script := strings.Join(containers[0].Command, " ")
		Expect(script).To(ContainSubstring(`Authorization: Bearer $HOOKRUN_TOKEN`))
		Expect(script).To(ContainSubstring(`"${K_SINK:-$HOOKRUN_URL}"`))
		Expect(script).To(ContainSubstring(`Content-Type: application/cloudevents+json`))

		Expect(sinkBinding.GetAPIVersion()).To(Equal("sources.knative.dev/v1"))
		subject, _, _ := unstructured.NestedStringMap(sinkBinding.Object, "spec", "subject")
		Expect(subject).To(Equal(map[string]string{"apiVersion": "batch/v1", "kind": "CronJob", "name": cronJob.Name}))
		uri, _, _ := unstructured.NestedString(sinkBinding.Object, "spec", "sink", "uri")
		Expect(uri).To(Equal(env["HOOKRUN_URL"]))
	})
})
