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
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func withSender(t agentsv1alpha1.SenderType) func(*agentsv1alpha1.WebhookEndpoint) {
	return func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Sender = &agentsv1alpha1.Sender{Type: t} }
}

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

var _ = Describe("spec.sender validation", func() {
	DescribeTable("refuses an invalid sender with a message that says what to do",
		func(ctx SpecContext, mutate func(*agentsv1alpha1.WebhookEndpoint), msgs ...string) {
			ep := validEndpoint(newNamespace(ctx))
			mutate(ep)
			expectInvalid(k8sClient.Create(ctx, ep), msgs...)
		},
		Entry("Stripe without secretRef", withSender(agentsv1alpha1.SenderStripe), "spec.secretRef is required when sender.type is Stripe or Slack: the provider issues the signing secret"),
		Entry("Slack without secretRef", withSender(agentsv1alpha1.SenderSlack), "spec.secretRef is required when sender.type is Stripe or Slack"),
		Entry("HMAC without hmac", withSender(agentsv1alpha1.SenderHMAC), "spec.sender.hmac is required when type is HMAC"),
		Entry("hmac on another type", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, HMAC: &agentsv1alpha1.HMACSettings{Header: "X-Sig"}}
		}, "not allowed for other types"),
		Entry("a signed type on an unauthenticated endpoint", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.AllowUnauthenticated = true
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}
		}, "spec.sender.type needs a secret: remove allowUnauthenticated"),
		Entry("events on a type that names none", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, Events: []string{"push"}}
		}, "spec.sender.events needs a sender that names its events"),
		Entry("tolerance on an untimestamped type", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, Tolerance: duration(time.Minute)}
		}, "tolerance applies only to timestamped signatures"),
		Entry("tolerance over an hour", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "s", Key: "k"}
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderStripe, Tolerance: duration(2 * time.Hour)}
		}, "spec.sender.tolerance must be between 1s and 1h"),
		Entry("tolerance of 0", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "s", Key: "k"}
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderSlack, Tolerance: duration(0)}
		}, "spec.sender.tolerance must be between 1s and 1h"),
		Entry("rotationOverlap over 24h", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHeader, RotationOverlap: duration(25 * time.Hour)}
		}, "spec.sender.rotationOverlap must be between 0s and 24h"),
		Entry("an unknown type", withSender("Gitea"), "Unsupported value: \"Gitea\""),
		Entry("an hmac header that is no header name", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC, HMAC: &agentsv1alpha1.HMACSettings{Header: "X Sig: 1"}}
		}, "spec.sender.hmac.header"),
		Entry("an unknown hmac algorithm", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC, HMAC: &agentsv1alpha1.HMACSettings{Header: "X-Sig", Algorithm: "MD5"}}
		}, "Unsupported value: \"MD5\""),
		Entry("65 events", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}
			for i := range 65 {
				ep.Spec.Sender.Events = append(ep.Spec.Sender.Events, fmt.Sprintf("e%d", i))
			}
		}, "must have at most 64 items"),
		Entry("an event of 257 characters", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, Events: []string{strings.Repeat("e", 257)}}
		}, "spec.sender.events[0]"),
		Entry("a repeated event", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, Events: []string{"push", "push"}}
		}, "Duplicate value"),
		Entry("oidc on a type that sends no bearer token", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, OIDC: &agentsv1alpha1.OIDCSender{Audience: "a"}}
		}, "spec.sender.oidc needs type Bearer or CloudEvents"),
		Entry("oidc with a secretRef", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "s", Key: "k"}
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, OIDC: &agentsv1alpha1.OIDCSender{Audience: "a"}}
		}, "spec.secretRef cannot be set with spec.sender.oidc"),
		Entry("oidc with a rotationOverlap", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, RotationOverlap: duration(time.Hour), OIDC: &agentsv1alpha1.OIDCSender{Audience: "a"}}
		}, "spec.sender.rotationOverlap applies to secrets"),
		Entry("an issuer without claims", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, OIDC: &agentsv1alpha1.OIDCSender{Issuer: "https://token.actions.githubusercontent.com", Audience: "a"}}
		}, "spec.sender.oidc.claims is required with an issuer"),
		Entry("oidc without an audience", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, OIDC: &agentsv1alpha1.OIDCSender{}}
		}, "spec.sender.oidc.audience"),
		Entry("an issuer that is not an https URL", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer, OIDC: &agentsv1alpha1.OIDCSender{Issuer: "http://issuer.example", Audience: "a", Claims: "true"}}
		}, "spec.sender.oidc.issuer"),
		Entry("claims of 4097 characters", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents, OIDC: &agentsv1alpha1.OIDCSender{Audience: "a", Claims: strings.Repeat(" ", 4093) + "true"}}
		}, "spec.sender.oidc.claims"),
	)

	It("refuses durations that are not durations", func(ctx SpecContext) {
		for _, bad := range []string{"5", "five minutes", "-1m", "1d"} {
			ep := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": agentsv1alpha1.GroupVersion.String(), "kind": "WebhookEndpoint",
				"metadata": map[string]any{"name": "bad-duration", "namespace": newNamespace(ctx)},
				"spec": map[string]any{
					"agentRef": map[string]any{"name": "triage"}, "prompt": "p", "threadStrategy": "NewThreadEachRun",
					"sender": map[string]any{"type": "Header", "rotationOverlap": bad},
				},
			}}
			expectInvalid(k8sClient.Create(ctx, ep), "spec.sender.rotationOverlap")
		}
	})

	It("accepts every type configured as docs/senders.md shows, and defaults type, algorithm and encoding", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		ref := &agentsv1alpha1.SecretKeyReference{Name: "provider", Key: "secret"}
		for i, s := range []agentsv1alpha1.Sender{
			{},
			{Type: agentsv1alpha1.SenderBearer, RotationOverlap: duration(24 * time.Hour)},
			{Type: agentsv1alpha1.SenderGitLab, Events: []string{"Issue Hook", "Merge Request Hook"}},
			{Type: agentsv1alpha1.SenderGitHub, Events: []string{"issues"}, RotationOverlap: duration(time.Hour)},
			{Type: agentsv1alpha1.SenderHMAC, HMAC: &agentsv1alpha1.HMACSettings{Header: "X-Signature", Prefix: "sha256="}},
			{Type: agentsv1alpha1.SenderStandardWebhooks, Events: []string{"invoice.paid"}, Tolerance: duration(time.Hour)},
			{Type: agentsv1alpha1.SenderStripe, Tolerance: duration(time.Second)},
			{Type: agentsv1alpha1.SenderSlack, Events: []string{"app_mention"}},
			{Type: agentsv1alpha1.SenderBearer, OIDC: &agentsv1alpha1.OIDCSender{Audience: "https://hooks.example.com/nightly"}},
			{Type: agentsv1alpha1.SenderCloudEvents, OIDC: &agentsv1alpha1.OIDCSender{
				Issuer: "https://token.actions.githubusercontent.com", Audience: "hookrun", Claims: `claims.repository == "o/r"`,
			}},
		} {
			ep := validEndpoint(ns)
			ep.Name = fmt.Sprintf("ep-%d", i)
			ep.Spec.Sender = &s
			if s.Type == agentsv1alpha1.SenderStripe || s.Type == agentsv1alpha1.SenderSlack {
				ep.Spec.SecretRef = ref
			}
			Expect(k8sClient.Create(ctx, ep)).To(Succeed(), "sender %+v", s)
			got := &agentsv1alpha1.WebhookEndpoint{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ep), got)).To(Succeed())
			switch s.Type {
			case "":
				Expect(got.Spec.Sender.Type).To(Equal(agentsv1alpha1.SenderHeader))
			case agentsv1alpha1.SenderHMAC:
				Expect(got.Spec.Sender.HMAC.Algorithm).To(Equal(agentsv1alpha1.HMACSHA256))
				Expect(got.Spec.Sender.HMAC.Encoding).To(Equal(agentsv1alpha1.EncodingHex))
			}
		}
	})
})
