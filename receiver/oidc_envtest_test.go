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

package receiver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/controllers/oidc/oidctest"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

// oidcEndpoint is an endpoint of sender type Bearer whose calls carry
// tokens of issuer ("" the cluster's) for audience, passing claims.
func (f *fixture) oidcEndpoint(ctx context.Context, name, issuer, audience, claims string) string {
	GinkgoHelper()
	_, id := f.endpoint(ctx, endpointSpec{name: name, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
		ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderBearer,
			OIDC: &agentsv1alpha1.OIDCSender{Issuer: issuer, Audience: audience, Claims: claims}}
	}})
	return id
}

// serviceAccountToken is a token of the API server for service account
// ns/name, for audience, valid for ten minutes (TokenRequest's least).
func serviceAccountToken(ctx context.Context, ns, name, audience string) string {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, sa))).To(Succeed())
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{audience}, ExpirationSeconds: &tokenSeconds,
	}}
	Expect(k8sClient.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	return tr.Status.Token
}

// apiServerAudience is an audience the API server accepts: the aud of a
// token it issues for no audience in particular.
func apiServerAudience(ctx context.Context, ns string) string {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audience-probe"}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, sa))).To(Succeed())
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &tokenSeconds}}
	Expect(k8sClient.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	parts := strings.Split(tr.Status.Token, ".")
	Expect(parts).To(HaveLen(3))
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	Expect(err).NotTo(HaveOccurred())
	var claims struct {
		Aud []string `json:"aud"`
	}
	Expect(json.Unmarshal(payload, &claims)).To(Succeed())
	Expect(claims.Aud).NotTo(BeEmpty())
	return claims.Aud[0]
}

// tokenSeconds is the shortest life a TokenRequest may ask for.
var tokenSeconds int64 = 600

func postToken(id, token string) reply {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPost, url(id), strings.NewReader(`{"job":"nightly"}`))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(req)
}

var _ = Describe("OIDC senders", func() {
	const audience = "hookrun-receiver-test"

	It("accepts the cluster's service account tokens for the audience, and records their subject", func(ctx SpecContext) {
		f := newFixture(ctx)
		id := f.oidcEndpoint(ctx, "nightly", "", audience, "")
		r := postToken(id, serviceAccountToken(ctx, f.ns, "nightly", audience))
		Expect(r.status).To(Equal(http.StatusAccepted), "%s", r.body)
		run := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.Spec.Sender.TokenSubject).To(Equal("system:serviceaccount:" + f.ns + ":nightly"))

		By("a call without a token is 401, one with a secret for a token 403, as for a secret")
		Expect(postToken(id, "").status).To(Equal(http.StatusUnauthorized))
		Expect(postToken(id, secret).code).To(Equal(answer.CodeForbidden))
	})

	It("refuses a token for another audience, of another account, and expired, with 403", func(ctx SpecContext) {
		f := newFixture(ctx)
		id := f.oidcEndpoint(ctx, "nightly", "", audience, `claims.sub == "system:serviceaccount:`+f.ns+`:nightly"`)
		token := serviceAccountToken(ctx, f.ns, "nightly", audience)
		Expect(postToken(id, token).status).To(Equal(http.StatusAccepted))

		other := postToken(id, serviceAccountToken(ctx, f.ns, "nightly", "https://kubernetes.default.svc"))
		Expect(other.status).To(Equal(http.StatusForbidden))
		Expect(other.body).To(Equal(postToken(id, secret).body), "the same body as a wrong secret")
		Expect(postToken(id, serviceAccountToken(ctx, f.ns, "intruder", audience)).code).To(Equal(answer.CodeForbidden))
		elsewhere := newFixture(ctx)
		Expect(postToken(f.oidcEndpoint(ctx, "any-account", "", audience, ""), serviceAccountToken(ctx, elsewhere.ns, "nightly", audience)).code).
			To(Equal(answer.CodeForbidden), "an account of another namespace, with no claims to pass")

		tokenClock.add(10*time.Minute + oidc.Leeway + time.Second) // TokenRequest's 600 s, and the leeway
		Expect(postToken(id, token).code).To(Equal(answer.CodeForbidden), "expired")
	})

	It("refuses every token of an endpoint whose audience is one the API server accepts, a token that would be an API credential", func(ctx SpecContext) {
		f := newFixture(ctx)
		apiAudience := apiServerAudience(ctx, f.ns)
		id := f.oidcEndpoint(ctx, "api-audience", "", apiAudience, "")
		token := serviceAccountToken(ctx, f.ns, "nightly", apiAudience)
		r := postToken(id, token)
		Expect(r.status).To(Equal(http.StatusForbidden), "%s", r.body)
		Expect(r.body).To(Equal(postToken(id, secret).body), "the same body as a wrong secret")

		By("the token is indeed one the API server accepts")
		review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
		Expect(k8sClient.Create(ctx, review)).To(Succeed())
		Expect(review.Status.Authenticated).To(BeTrue(), "%+v", review.Status)
	})

	It("takes a GitHub Actions token of one repository and branch, and follows the issuer's key rotation", func(ctx SpecContext) {
		f := newFixture(ctx)
		id := f.oidcEndpoint(ctx, "deploys", listedIssuer.URL, audience,
			`claims.repository == "octo-org/deploys" && claims.ref == "refs/heads/main"`)
		gh := func(repo, ref string) string {
			return listedIssuer.Sign(listedIssuer.GitHubActions(repo, ref, audience, tokenClock.Now()))
		}
		r := postToken(id, gh("octo-org/deploys", "refs/heads/main"))
		Expect(r.status).To(Equal(http.StatusAccepted), "%s", r.body)
		run := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.Spec.Sender.TokenSubject).To(Equal("repo:octo-org/deploys:ref:refs/heads/main"))
		Expect(postToken(id, gh("octo-org/deploys", "refs/heads/feature")).code).To(Equal(answer.CodeForbidden))
		Expect(postToken(id, gh("octo-org/fork", "refs/heads/main")).code).To(Equal(answer.CodeForbidden))
		escape := listedIssuer.GitHubActions("octo-org/deploys", "refs/heads/main", audience, tokenClock.Now())
		escape["sub"] = "repo:octo-org/deploys:ref:refs/heads/main\u001b[2J"
		Expect(postToken(id, listedIssuer.Sign(escape)).code).To(Equal(answer.CodeForbidden), "a sub holding an escape sequence")

		By("claims are compiled and evaluated within the endpoint's filter slots: with both taken, 503, and nothing compiled")
		ep := handler.table.Lookup(id).Obj
		handler.table.Forget(ep.UID)
		for range limits.EndpointTurns {
			Expect(handler.filterGate.Enter(ctx, ep.Namespace, ep.UID)).To(BeTrue())
		}
		busy := postToken(id, gh("octo-org/deploys", "refs/heads/main"))
		_, _, compiled := handler.table.Compiled(ep.UID)
		for range limits.EndpointTurns {
			handler.filterGate.Leave(ep.Namespace, ep.UID)
		}
		Expect(busy.status).To(Equal(http.StatusServiceUnavailable), "%s", busy.body)
		Expect(busy.header.Get("Retry-After")).NotTo(BeEmpty())
		Expect(compiled).To(BeFalse(), "a call waiting for its turn compiles no claims")

		forger := oidctest.NewKey(listedIssuer.KeyID())
		Expect(postToken(id, oidctest.Sign(forger, listedIssuer.GitHubActions("octo-org/deploys", "refs/heads/main", audience, tokenClock.Now()))).code).
			To(Equal(answer.CodeForbidden), "signed with another key of the issuer's key ID")

		By("a rotation: the new key is read at most a minute after the last read")
		// Two minutes: also past a read of an earlier run of this spec
		// (ginkgo --repeat), whose skew this spec's clock no longer has.
		tokenClock.add(2 * oidc.RefreshInterval)
		listedIssuer.Rotate(false)
		Expect(postToken(id, gh("octo-org/deploys", "refs/heads/main")).status).To(Equal(http.StatusAccepted))
	})

	It("takes a CloudEvent with the token of its sender identity, as Knative sends it", func(ctx SpecContext) {
		f := newFixture(ctx)
		_, id := f.endpoint(ctx, endpointSpec{name: "cluster-events", mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Sender = &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents,
				OIDC: &agentsv1alpha1.OIDCSender{Audience: audience}}
		}})
		req, err := http.NewRequest(http.MethodPost, url(id), strings.NewReader(`{"deployment":"web"}`))
		Expect(err).NotTo(HaveOccurred())
		for k, v := range map[string]string{
			"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e-1", "ce-source": "/apis/v1/namespaces/" + f.ns,
			"ce-type": "dev.knative.apiserver.resource.update", "ce-subject": "deployments/web",
			"Authorization": "Bearer " + serviceAccountToken(ctx, f.ns, "oidc-trigger-cluster-events", audience),
		} {
			req.Header.Set(k, v)
		}
		r := do(req)
		Expect(r.status).To(Equal(http.StatusAccepted), "%s", r.body)
		run := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.Spec.Sender).To(Equal(&agentsv1alpha1.RunSender{
			Type: agentsv1alpha1.SenderCloudEvents, Event: "dev.knative.apiserver.resource.update", DeliveryID: "e-1",
			Source: "/apis/v1/namespaces/" + f.ns, Subject: "deployments/web",
			TokenSubject: "system:serviceaccount:" + f.ns + ":oidc-trigger-cluster-events",
		}))
	})

	It("answers 503 with Retry-After while a listed issuer's keys cannot be read", func(ctx SpecContext) {
		f := newFixture(ctx)
		id := f.oidcEndpoint(ctx, "down", downIssuer.URL, audience, `claims.repository == "octo-org/deploys"`)
		r := postToken(id, downIssuer.Sign(downIssuer.GitHubActions("octo-org/deploys", "refs/heads/main", audience, tokenClock.Now())))
		Expect(r.status).To(Equal(http.StatusServiceUnavailable), "%s", r.body)
		Expect(r.code).To(Equal(answer.CodeUnavailable))
		Expect(r.header.Get("Retry-After")).NotTo(BeEmpty())
	})

	It("refuses an issuer not in --oidc-issuers without contacting it", func(ctx SpecContext) {
		f := newFixture(ctx)
		unlisted := oidctest.NewIssuer()
		DeferCleanup(unlisted.Close)
		id := f.oidcEndpoint(ctx, "elsewhere", unlisted.URL, audience, `claims.repository == "octo-org/deploys"`)
		r := postToken(id, unlisted.Sign(unlisted.GitHubActions("octo-org/deploys", "refs/heads/main", audience, tokenClock.Now())))
		Expect(r.code).To(Equal(answer.CodeForbidden))
		Expect(unlisted.Requests.Load()).To(BeZero())
	})
})
