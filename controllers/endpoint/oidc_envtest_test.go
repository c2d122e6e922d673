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

package endpoint

import (
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// listedIssuer is among the suite controller's OIDC issuers; the operator
// never contacts an issuer (the receiver reads their keys).
const listedIssuer = "https://token.actions.githubusercontent.com"

var _ = Describe("An endpoint of an OIDC sender", func() {
	oidcSender := func(issuer, claims string) *agentsv1alpha1.Sender {
		return &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer,
			OIDC: &agentsv1alpha1.OIDCSender{Issuer: issuer, Audience: "https://hooks.example.com/nightly", Claims: claims}}
	}

	It("has no secret: the generated one goes when the sender switches to tokens", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		ep := newEndpoint(ns, "nightly", "triage")
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		withSecret := readyEndpoint(ctx, ep)
		Expect(withSecret.Status.SecretHash).NotTo(BeEmpty())

		patch := client.MergeFrom(withSecret.DeepCopy())
		withSecret.Spec.Sender = oidcSender("", `claims.sub == "system:serviceaccount:`+ns+`:nightly"`)
		Expect(k8sClient.Patch(ctx, withSecret, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			got := endpointState(ctx, ep)()
			g.Expect(got.Status.AuthMode).To(Equal(agentsv1alpha1.AuthOIDC))
			g.Expect(got.Status.SecretHash).To(BeEmpty())
			g.Expect(got.Status.SecretName).To(BeEmpty())
			g.Expect(conditionOf(got.Status.Conditions, agentsv1alpha1.ConditionSecretReady)).To(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonOIDCTokens))
		}).Should(Succeed())
		readyEndpoint(ctx, ep)
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}, &corev1.Secret{})
		}).Should(HaveOccurred(), "the generated Secret is deleted")
	})

	It("is Ready=False OIDCIssuerNotAllowed for an issuer the receiver does not trust, and OIDCClaimsInvalid for claims that do not compile", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		ep := newEndpoint(ns, "deploys", "triage")
		ep.Spec.Sender = oidcSender("https://issuer.example.com", `claims.sub == "deploy-bot"`)
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonOIDCIssuerNotAllowed),
			HaveField("Message", And(ContainSubstring("https://issuer.example.com"), ContainSubstring("--oidc-issuers")))))
		Eventually(eventsFor(ctx, ep, agentsv1alpha1.ReasonOIDCIssuerNotAllowed)).Should(HaveLen(1))
		Expect(endpointState(ctx, ep)().Status.URL).NotTo(BeEmpty(), "the endpoint has its URL: only the issuer is refused")

		got := endpointState(ctx, ep)()
		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.Sender = oidcSender(listedIssuer, `claims.repository == "octo-org/deploys" &&`)
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonOIDCClaimsInvalid),
			HaveField("Message", ContainSubstring("Syntax error"))))

		got = endpointState(ctx, ep)()
		patch = client.MergeFrom(got.DeepCopy())
		got.Spec.Sender = oidcSender(listedIssuer, `claims.repository == "octo-org/deploys" && claims.ref == "refs/heads/main"`)
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Expect(readyEndpoint(ctx, ep).Status.AuthMode).To(Equal(agentsv1alpha1.AuthOIDC))
	})
	It("is Ready=False OIDCAudienceInvalid for an audience the API server accepts, Ready once another is set", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		// The oracle: the aud of a token the API server issues for no
		// audience in particular.
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audience-probe"}}
		Expect(k8sClient.Create(ctx, sa)).To(Succeed())
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
		Expect(k8sClient.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
		tok, err := jwt.ParseSigned(tr.Status.Token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
		Expect(err).NotTo(HaveOccurred())
		var claims jwt.Claims
		Expect(tok.UnsafeClaimsWithoutVerification(&claims)).To(Succeed())
		Expect(claims.Audience).NotTo(BeEmpty())

		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		ep := newEndpoint(ns, "api-audience", "triage")
		ep.Spec.Sender = oidcSender("", "")
		ep.Spec.Sender.OIDC.Audience = claims.Audience[0]
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		Eventually(func() *metav1.Condition {
			return conditionOf(endpointState(ctx, ep)().Status.Conditions, agentsv1alpha1.ConditionReady)
		}).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonOIDCAudienceInvalid),
			HaveField("Message", ContainSubstring(claims.Audience[0]))))
		Eventually(eventsFor(ctx, ep, agentsv1alpha1.ReasonOIDCAudienceInvalid)).Should(HaveLen(1))

		got := endpointState(ctx, ep)()
		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.Sender = oidcSender("", "")
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Expect(readyEndpoint(ctx, ep).Status.AuthMode).To(Equal(agentsv1alpha1.AuthOIDC))
	})
})
