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
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // a sender type signs with it
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/senders"
	"github.com/hookrun/hookrun/receiver/internal/store"
	"github.com/hookrun/hookrun/test/testenv"
)

// Every sender type through the real receiver and API server. The specs
// write what the operator would: the endpoint's status and, for signed
// types, the signing-key Secret in the receiver's namespace.

const senderSecret = "a-sender-secret-of-at-least-32-bytes!"

// hmacOf is the MAC of content with key, as a sender computes it.
func hmacOf(h func() hash.Hash, key []byte, content ...[]byte) []byte {
	m := hmac.New(h, key)
	for _, c := range content {
		m.Write(c)
	}
	return m.Sum(nil)
}

func hexMAC(key []byte, parts ...string) string {
	content := make([][]byte, len(parts))
	for i, p := range parts {
		content[i] = []byte(p)
	}
	return hex.EncodeToString(hmacOf(sha256.New, key, content...))
}

// signer sets the headers a sender of one type sends, for body, with secret.
type signer func(h http.Header, body, secret string, now time.Time)

// swKey is the key of the Standard Webhooks secret "whsec_" + base64(senderSecret).
var swSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte(senderSecret))

var signers = map[agentsv1alpha1.SenderType]signer{
	agentsv1alpha1.SenderHeader: func(h http.Header, _, secret string, _ time.Time) { h.Set(agentsv1alpha1.SecretHeader, secret) },
	agentsv1alpha1.SenderBearer: func(h http.Header, _, secret string, _ time.Time) { h.Set("Authorization", "Bearer "+secret) },
	agentsv1alpha1.SenderGitLab: func(h http.Header, _, secret string, _ time.Time) {
		h.Set("X-Gitlab-Token", secret)
		h.Set("X-Gitlab-Event", "Issue Hook")
	},
	agentsv1alpha1.SenderGitHub: func(h http.Header, body, secret string, _ time.Time) {
		h.Set("X-Hub-Signature-256", "sha256="+hexMAC([]byte(secret), body))
		h.Set("X-GitHub-Event", "issues")
	},
	agentsv1alpha1.SenderHMAC: func(h http.Header, body, secret string, _ time.Time) {
		h.Set("X-Signature", "sha1="+base64.StdEncoding.EncodeToString(hmacOf(sha1.New, []byte(secret), []byte(body))))
	},
	agentsv1alpha1.SenderStandardWebhooks: func(h http.Header, body, secret string, now time.Time) {
		ts := strconv.FormatInt(now.Unix(), 10)
		id := h.Get("webhook-id")
		if id == "" {
			id = "msg_" + strconv.FormatInt(now.UnixNano(), 36)
			h.Set("webhook-id", id)
		}
		key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(hmacOf(sha256.New, key, []byte(id+"."+ts+"."+body))))
	},
	agentsv1alpha1.SenderStripe: func(h http.Header, body, secret string, now time.Time) {
		ts := strconv.FormatInt(now.Unix(), 10)
		h.Set("Stripe-Signature", "t="+ts+",v1="+hexMAC([]byte(secret), ts, ".", body))
	},
	agentsv1alpha1.SenderSlack: func(h http.Header, body, secret string, now time.Time) {
		ts := strconv.FormatInt(now.Unix(), 10)
		h.Set("X-Slack-Request-Timestamp", ts)
		h.Set("X-Slack-Signature", "v0="+hexMAC([]byte(secret), "v0:", ts, ":", body))
	},
}

// secretFor is the secret a sender of type t is configured with.
func secretFor(t agentsv1alpha1.SenderType) string {
	if t == agentsv1alpha1.SenderStandardWebhooks {
		return swSecret
	}
	return senderSecret
}

func senderSpec(t agentsv1alpha1.SenderType, events ...string) *agentsv1alpha1.Sender {
	s := &agentsv1alpha1.Sender{Type: t, Events: events}
	if t == agentsv1alpha1.SenderHMAC {
		s.HMAC = &agentsv1alpha1.HMACSettings{Header: "X-Signature", Algorithm: agentsv1alpha1.HMACSHA1, Encoding: agentsv1alpha1.EncodingBase64, Prefix: "sha1="}
	}
	return s
}

// senderEndpoint creates an endpoint of sender s whose secret is secret,
// with its signing key for signed types, and waits until the receiver
// serves both.
func (f *fixture) senderEndpoint(ctx context.Context, name string, s *agentsv1alpha1.Sender, secret string) (*agentsv1alpha1.WebhookEndpoint, string) {
	GinkgoHelper()
	ep, id := f.endpoint(ctx, endpointSpec{name: name, secret: secret, mutate: func(ep *agentsv1alpha1.WebhookEndpoint) {
		ep.Spec.Sender = s
		if s.Type == agentsv1alpha1.SenderStripe || s.Type == agentsv1alpha1.SenderSlack {
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "provider-secret", Key: "secret"}
		}
	}})
	if s.Type.Signed() {
		putSigningKey(ctx, ep, []byte(secret), agentsv1alpha1.SecretHash([]byte(secret)), nil, "")
	}
	return ep, id
}

// putSigningKey writes ep's signing-key Secret as the operator does and
// waits until the receiver has it (secrets whose hash is not the one
// annotated beside them are not taken: hash "" then).
func putSigningKey(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, secret []byte, hash string, previous []byte, previousHash string) {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: receiverNamespace, Name: agentsv1alpha1.SigningKeySecretName(string(ep.UID))}}
	_, err := ctrl.CreateOrUpdate(ctx, k8sClient, s, func() error {
		s.Labels = map[string]string{
			agentsv1alpha1.LabelSigningKey: "true", agentsv1alpha1.LabelEndpointNamespace: ep.Namespace,
			agentsv1alpha1.LabelEndpoint: ep.Name, agentsv1alpha1.LabelEndpointUID: string(ep.UID),
		}
		s.Annotations = map[string]string{agentsv1alpha1.AnnotationKeyHash: hash, agentsv1alpha1.AnnotationPreviousKeyHash: previousHash}
		s.Data = map[string][]byte{agentsv1alpha1.SigningKeySecret: secret}
		if previous != nil {
			s.Data[agentsv1alpha1.SigningKeyPreviousSecret] = previous
		}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() string {
		if hash, previous, ok := handler.table.KeyHashes(ep.UID); ok {
			return hash + "/" + previous
		}
		return ""
	}).Should(Equal(takenHash(secret, hash) + "/" + takenHash(previous, previousHash)))
}

// takenHash is the hash the receiver keeps for secret annotated with hash.
func takenHash(secret []byte, hash string) string {
	if agentsv1alpha1.SecretHash(secret) != hash {
		return ""
	}
	return hash
}

// send POSTs body to id's URL on base with the headers of t signed with secret.
func send(base, id string, t agentsv1alpha1.SenderType, body, secret string, extra map[string]string) reply {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPost, base+"/api/webhooks/"+id+"/receive", strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	if secret != "" {
		signers[t](req.Header, body, secret, fakeClock.Now())
	}
	for k, v := range extra { // what the spec sets wins over the signer's defaults
		req.Header.Set(k, v)
	}
	return do(req)
}

var _ = Describe("Senders", func() {
	var f *fixture
	BeforeEach(func(ctx SpecContext) { f = newFixture(ctx) })

	DescribeTable("each type: 202 with its credential, the same runId for its delivery ID again, 401 without, 403 with a wrong one, 404 for an unknown ID",
		func(ctx SpecContext, t agentsv1alpha1.SenderType, wantEvent, wantDelivery string) {
			secret := secretFor(t)
			name := strings.ToLower(string(t))
			ep, id := f.senderEndpoint(ctx, name, senderSpec(t), secret)
			body := `{"id":"evt_1","type":"invoice.paid","event_id":"Ev1","event":{"type":"app_mention"}}`
			// Every type's delivery header: each takes its own.
			ids := map[string]string{"Idempotency-Key": "idem-1", "X-GitHub-Delivery": "gh-1", "X-Gitlab-Event-UUID": "gl-1", "webhook-id": "msg_1"}

			r := send(srv.URL, id, t, body, secret, ids)
			Expect(r.status).To(Equal(http.StatusAccepted), string(r.body))
			run := &agentsv1alpha1.AgentRun{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
			Expect(run.Spec.Sender).To(Equal(&agentsv1alpha1.RunSender{Type: t, Event: wantEvent, DeliveryID: wantDelivery}))
			again := send(srv.URL, id, t, body, secret, ids)
			Expect(again.status).To(Equal(http.StatusAccepted))
			Expect(again.runID).To(Equal(r.runID), "a delivery sent again")

			r = send(srv.URL, id, t, body, "", nil)
			Expect(r.status).To(Equal(http.StatusUnauthorized))
			Expect(r.body).To(Equal(answer.Unauthorized.Body()), "the same answer as an unknown ID without a credential")

			wrong := strings.Replace(secret, "a-sender", "b-sender", 1)
			if t == agentsv1alpha1.SenderStandardWebhooks {
				wrong = "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Replace(senderSecret, "a-sender", "b-sender", 1)))
			}
			r = send(srv.URL, id, t, body, wrong, nil)
			Expect(r.status).To(Equal(http.StatusForbidden))
			Expect(r.code).To(Equal(answer.CodeForbidden))

			if t.Signed() {
				By("a signature of another body")
				req, _ := http.NewRequest(http.MethodPost, url(id), strings.NewReader(body+" "))
				signers[t](req.Header, body, secret, fakeClock.Now())
				Expect(do(req).status).To(Equal(http.StatusForbidden))
			}

			unknown := strings.Repeat("u", 43)
			r = send(srv.URL, unknown, t, body, secret, nil)
			if t == agentsv1alpha1.SenderHMAC {
				// Its header is the endpoint's choice: for an unknown ID it is just a header.
				Expect(r.status).To(Equal(http.StatusUnauthorized))
			} else {
				Expect(r.status).To(Equal(http.StatusNotFound))
			}
			Expect(runsIn(ctx, f.ns)).To(HaveLen(1))

			By("paused: 422 once the credential is right, 403 before")
			patch := client.MergeFrom(ep.DeepCopy())
			ep.Spec.Paused = true
			Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed())
			Eventually(func() string { return send(srv.URL, id, t, body, secret, nil).code }).Should(Equal(answer.CodeEndpointPaused))
			Expect(send(srv.URL, id, t, body, wrong, nil).status).To(Equal(http.StatusForbidden))
		},
		Entry("Header", agentsv1alpha1.SenderHeader, "", "idem-1"),
		Entry("Bearer", agentsv1alpha1.SenderBearer, "", "idem-1"),
		Entry("GitLab", agentsv1alpha1.SenderGitLab, "Issue Hook", "gl-1"),
		Entry("GitHub", agentsv1alpha1.SenderGitHub, "issues", "gh-1"),
		Entry("HMAC", agentsv1alpha1.SenderHMAC, "", "idem-1"),
		Entry("StandardWebhooks", agentsv1alpha1.SenderStandardWebhooks, "invoice.paid", "msg_1"),
		Entry("Stripe", agentsv1alpha1.SenderStripe, "invoice.paid", "evt_1"),
		Entry("Slack", agentsv1alpha1.SenderSlack, "app_mention", "Ev1"),
	)

	It("answers GitHub's ping and Slack's url_verification without a run, and only after the signature", func(ctx SpecContext) {
		_, gh := f.senderEndpoint(ctx, "gh", senderSpec(agentsv1alpha1.SenderGitHub, "issues"), senderSecret)
		r := send(srv.URL, gh, agentsv1alpha1.SenderGitHub, `{"zen":"Keep it logically awesome."}`, senderSecret, map[string]string{"X-GitHub-Event": "ping"})
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(string(r.body)).To(MatchJSON(`{"status":"pong"}`))

		_, slack := f.senderEndpoint(ctx, "slack", senderSpec(agentsv1alpha1.SenderSlack, "app_mention"), senderSecret)
		challenge := `{"token":"t","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`
		r = send(srv.URL, slack, agentsv1alpha1.SenderSlack, challenge, senderSecret, nil)
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(string(r.body)).To(MatchJSON(`{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}`))

		By("a challenge with a bad signature")
		r = send(srv.URL, slack, agentsv1alpha1.SenderSlack, challenge, "not-the-slack-signing-secret-at-all", nil)
		Expect(r.status).To(Equal(http.StatusForbidden))
		Expect(string(r.body)).NotTo(ContainSubstring("3eZbrw1"))
		By("a stale timestamp")
		req, _ := http.NewRequest(http.MethodPost, url(slack), strings.NewReader(challenge))
		signers[agentsv1alpha1.SenderSlack](req.Header, challenge, senderSecret, fakeClock.Now().Add(-6*time.Minute))
		Expect(do(req).status).To(Equal(http.StatusForbidden))

		Expect(runsIn(ctx, f.ns)).To(BeEmpty())
	})

	It("makes no API request for a bad signature, a handshake or an ignored event", func(ctx SpecContext) {
		_, gh := f.senderEndpoint(ctx, "gh", senderSpec(agentsv1alpha1.SenderGitHub, "issues"), senderSecret)
		_, slack := f.senderEndpoint(ctx, "slack", senderSpec(agentsv1alpha1.SenderSlack), senderSecret)
		big := strings.Repeat("x", MaxBodyBytes+1)
		before := apiRequests.Load()
		for range 5 {
			Expect(send(srv.URL, gh, agentsv1alpha1.SenderGitHub, "{}", "a-wrong-secret-of-32-bytes-or-more!!", nil).status).To(Equal(http.StatusForbidden))
			Expect(send(srv.URL, gh, agentsv1alpha1.SenderGitHub, "{}", senderSecret, map[string]string{"X-GitHub-Event": "ping"}).status).To(Equal(http.StatusOK))
			Expect(send(srv.URL, gh, agentsv1alpha1.SenderGitHub, "{}", senderSecret, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d"}).status).To(Equal(http.StatusOK))
			Expect(send(srv.URL, gh, agentsv1alpha1.SenderGitHub, big, senderSecret, nil).status).To(Equal(http.StatusRequestEntityTooLarge))
			Expect(send(srv.URL, slack, agentsv1alpha1.SenderSlack, `{"type":"url_verification","challenge":"c"}`, senderSecret, nil).status).To(Equal(http.StatusOK))
		}
		Expect(apiRequests.Load()).To(Equal(before), "answered from memory")

		By("a 429 for a call with a delivery ID: no duplicate lookup while the window is full")
		for i := range testRateLimit {
			Expect(send(srv.URL, gh, agentsv1alpha1.SenderGitHub, "{}", senderSecret, map[string]string{"X-GitHub-Delivery": fmt.Sprintf("fill-%d", i)}).status).To(Equal(http.StatusAccepted))
		}
		// The first refusal of a window is recorded (a write); the rest are not.
		Expect(send(srv.URL, gh, agentsv1alpha1.SenderGitHub, "{}", senderSecret, map[string]string{"X-GitHub-Delivery": "over-0"}).status).To(Equal(http.StatusTooManyRequests))
		before = apiRequests.Load()
		for i := range 5 {
			Expect(send(srv.URL, gh, agentsv1alpha1.SenderGitHub, "{}", senderSecret, map[string]string{"X-GitHub-Delivery": fmt.Sprintf("over-%d", i+1)}).status).To(Equal(http.StatusTooManyRequests))
		}
		Expect(apiRequests.Load()).To(Equal(before), "a 429 costs no API request")
		fakeClock.Step(2 * limits.Window)
	})

	It("ignores events outside the allow-list: 200, no run, nothing recorded", func(ctx SpecContext) {
		_, gh := f.senderEndpoint(ctx, "gh", senderSpec(agentsv1alpha1.SenderGitHub, "issues"), senderSecret)
		r := send(srv.URL, gh, agentsv1alpha1.SenderGitHub, `{"ref":"main"}`, senderSecret, map[string]string{"X-GitHub-Event": "push"})
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(string(r.body)).To(MatchJSON(`{"status":"ignored"}`))

		_, stripe := f.senderEndpoint(ctx, "stripe", senderSpec(agentsv1alpha1.SenderStripe, "invoice.payment_failed"), senderSecret)
		for _, body := range []string{`[1,2]`, `"invoice.payment_failed"`, `{"type":7}`, `not json`, `{"type":"invoice.paid"}`} {
			r = send(srv.URL, stripe, agentsv1alpha1.SenderStripe, body, senderSecret, nil)
			Expect(r.status).To(Equal(http.StatusOK), body)
			Expect(string(r.body)).To(MatchJSON(`{"status":"ignored"}`), body)
		}
		r = send(srv.URL, stripe, agentsv1alpha1.SenderStripe, `{"id":"evt_9","type":"invoice.payment_failed"}`, senderSecret, nil)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
	})

	It("starts one run for one delivery ID sent to two receivers at once, and answers later repeats with its runId", func(ctx SpecContext) {
		second := startSecondReceiver(ctx)
		ep, gh := f.senderEndpoint(ctx, "gh", senderSpec(agentsv1alpha1.SenderGitHub), senderSecret)
		Eventually(func() *endpoints.Endpoint { return second.Lookup(gh) }).ShouldNot(BeNil())
		Eventually(func() bool { _, _, ok := second.KeyHashes(ep.UID); return ok }).Should(BeTrue())

		body := `{"action":"opened"}`
		delivery := map[string]string{"X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958"}
		var wg sync.WaitGroup
		replies := make([]reply, 2)
		for i, base := range []string{srv.URL, second.url} {
			wg.Go(func() {
				defer GinkgoRecover()
				replies[i] = send(base, gh, agentsv1alpha1.SenderGitHub, body, senderSecret, delivery)
			})
		}
		wg.Wait()
		Expect(replies[0].status).To(Equal(http.StatusAccepted), string(replies[0].body))
		Expect(replies[1].status).To(Equal(http.StatusAccepted), string(replies[1].body))
		Expect(replies[1].runID).To(Equal(replies[0].runID))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))
		payload := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: replies[0].runID}, payload)).To(Succeed())
		Expect(string(payload.Data[agentsv1alpha1.PayloadBodyKey])).To(Equal(body))

		By("redeliveries: each answer takes a call from the replica's window, as the first did")
		for range testRateLimit - 1 {
			r := send(second.url, gh, agentsv1alpha1.SenderGitHub, body, senderSecret, delivery)
			Expect(r.status).To(Equal(http.StatusAccepted))
			Expect(r.runID).To(Equal(replies[0].runID))
		}
		Expect(send(second.url, gh, agentsv1alpha1.SenderGitHub, body, senderSecret, delivery).status).To(Equal(http.StatusTooManyRequests))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(2), "the run and the 429's skipped record")
		fakeClock.Step(limits.Window)
		run := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: replies[0].runID}, run)).To(Succeed())
		Expect(run.Spec.Sender.DeliveryID).To(Equal(delivery["X-GitHub-Delivery"]))

		By("Idempotency-Key for a Header endpoint; another key is another run")
		_, hdr := f.senderEndpoint(ctx, "hdr", senderSpec(agentsv1alpha1.SenderHeader), senderSecret)
		a := send(srv.URL, hdr, agentsv1alpha1.SenderHeader, body, senderSecret, map[string]string{"Idempotency-Key": "k1"})
		b := send(srv.URL, hdr, agentsv1alpha1.SenderHeader, body, senderSecret, map[string]string{"Idempotency-Key": "k1"})
		c := send(srv.URL, hdr, agentsv1alpha1.SenderHeader, body, senderSecret, map[string]string{"Idempotency-Key": "k2"})
		Expect([]int{a.status, b.status, c.status}).To(Equal([]int{202, 202, 202}))
		Expect(b.runID).To(Equal(a.runID))
		Expect(c.runID).NotTo(Equal(a.runID))
		Expect(runsIn(ctx, f.ns)).To(HaveLen(4))

		By("a delivery whose run was deleted starts again")
		Expect(k8sClient.Delete(ctx, run)).To(Succeed())
		r := send(srv.URL, gh, agentsv1alpha1.SenderGitHub, body, senderSecret, delivery)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(r.runID).To(Equal(replies[0].runID))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: r.runID}, run)).To(Succeed())
		Expect(run.UID).NotTo(BeEmpty())
	})

	DescribeTable("keeps a run that a duplicate on another replica answered 202, when its first writer fails to store the payload",
		func(ctx SpecContext, firstWriteLands bool) {
			ep, _ := f.senderEndpoint(ctx, "gh", senderSpec(agentsv1alpha1.SenderGitHub), senderSecret)
			asReceiver := testenv.AsServiceAccount(testEnv.Config, receiverNamespace, clusterinstall.ReceiverServiceAccount)
			direct, err := client.NewWithWatch(asReceiver, client.Options{Scheme: scheme})
			Expect(err).NotTo(HaveOccurred())
			second := store.NewKube(direct, direct)
			body := []byte(`{"action":"opened"}`)
			digest := sha256.Sum256(body)
			name := store.DeliveryRunName(ep, "d-race", digest[:])
			var dupAnswered bool
			payloadWrites := 0
			// The first writer's payload writes fail; between them the
			// same delivery reaches another replica.
			first := store.NewKube(interceptor.NewClient(direct, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*corev1.Secret); !ok {
						return c.Create(ctx, obj, opts...)
					}
					payloadWrites++
					if payloadWrites == 1 {
						if firstWriteLands {
							Expect(c.Create(ctx, obj, opts...)).To(Succeed()) // and its answer is lost
						}
						dup, err := second.Duplicate(ctx, ep.Namespace, name, map[string][]byte{agentsv1alpha1.PayloadBodyKey: body})
						Expect(err).NotTo(HaveOccurred())
						dupAnswered = dup
					}
					return apierrors.NewServiceUnavailable("injected")
				},
			}), direct)
			run, err := handler.newRun(ctx, handler.table.Lookup(ep.Status.EndpointID), &senders.Delivery{DeliveryID: "d-race"}, fakeClock.Now())
			Expect(err).NotTo(HaveOccurred())
			run.Name = name
			run.Spec.Payload = &agentsv1alpha1.PayloadReference{SecretName: name, Bytes: int64(len(body)), SHA256: bodyDigest(body), ContentType: "application/json"}
			dup, err := first.CreateRun(ctx, run, map[string][]byte{agentsv1alpha1.PayloadBodyKey: body})
			Expect(dupAnswered).To(BeTrue(), "the other replica answered 202 with this runId")
			Expect(err).NotTo(HaveOccurred(), "so the first writer answers 202 too")
			Expect(dup).To(BeFalse())
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &agentsv1alpha1.AgentRun{})).To(Succeed())
			payload := &corev1.Secret{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, payload)).To(Succeed())
			Expect(payload.Data[agentsv1alpha1.PayloadBodyKey]).To(Equal(body))
		},
		Entry("the other replica stores the payload", false),
		Entry("the first write landed, its answer lost", true),
	)

	It("lets the previous secret verify during rotationOverlap only", func(ctx SpecContext) {
		const newSecret = "the-new-sender-secret-of-32-bytes-or-more"
		for _, t := range []agentsv1alpha1.SenderType{agentsv1alpha1.SenderGitHub, agentsv1alpha1.SenderBearer} {
			ep, id := f.senderEndpoint(ctx, "rot-"+strings.ToLower(string(t)), senderSpec(t), senderSecret)
			oldHash, newHash := agentsv1alpha1.SecretHash([]byte(senderSecret)), agentsv1alpha1.SecretHash([]byte(newSecret))

			By(string(t) + ": rotated without overlap, the old secret stops at once")
			setSecretStatus(ctx, ep, newHash, "", nil)
			if t.Signed() {
				putSigningKey(ctx, ep, []byte(newSecret), newHash, []byte(senderSecret), oldHash)
			}
			Expect(send(srv.URL, id, t, "{}", senderSecret, nil).status).To(Equal(http.StatusForbidden))
			Expect(send(srv.URL, id, t, "{}", newSecret, nil).status).To(Equal(http.StatusAccepted))

			By(string(t) + ": with an overlap, both work until it ends")
			until := metav1.NewTime(fakeClock.Now().Add(time.Hour))
			setSecretStatus(ctx, ep, newHash, oldHash, &until)
			Expect(send(srv.URL, id, t, "{}", senderSecret, nil).status).To(Equal(http.StatusAccepted))
			Expect(send(srv.URL, id, t, "{}", newSecret, nil).status).To(Equal(http.StatusAccepted))
			fakeClock.Step(time.Hour)
			Expect(send(srv.URL, id, t, "{}", senderSecret, nil).status).To(Equal(http.StatusForbidden))
			Expect(send(srv.URL, id, t, "{}", newSecret, nil).status).To(Equal(http.StatusAccepted))
			fakeClock.Step(2 * limits.Window) // a fresh rate window for the next type
		}
	})

	It("refuses a signed endpoint whose signing key is gone, and recovers when it is back", func(ctx SpecContext) {
		ep, id := f.senderEndpoint(ctx, "gh", senderSpec(agentsv1alpha1.SenderGitHub), senderSecret)
		key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: receiverNamespace, Name: agentsv1alpha1.SigningKeySecretName(string(ep.UID))}}
		Expect(k8sClient.Delete(ctx, key)).To(Succeed())
		Eventually(func() int { return send(srv.URL, id, agentsv1alpha1.SenderGitHub, "{}", senderSecret, nil).status }).Should(Equal(http.StatusForbidden))

		By("a signing key that holds another secret than status names")
		putSigningKey(ctx, ep, []byte("another-secret-that-status-does-not-name"), agentsv1alpha1.SecretHash([]byte("another-secret-that-status-does-not-name")), nil, "")
		Expect(send(srv.URL, id, agentsv1alpha1.SenderGitHub, "{}", "another-secret-that-status-does-not-name", nil).status).To(Equal(http.StatusForbidden))
		By("a signing key annotated with the endpoint's (public) hash but holding another secret")
		putSigningKey(ctx, ep, []byte("a-forged-key-under-the-real-hash!!!!"), ep.Status.SecretHash, nil, "")
		Expect(send(srv.URL, id, agentsv1alpha1.SenderGitHub, "{}", "a-forged-key-under-the-real-hash!!!!", nil).status).To(Equal(http.StatusForbidden))

		putSigningKey(ctx, ep, []byte(senderSecret), agentsv1alpha1.SecretHash([]byte(senderSecret)), nil, "")
		Expect(send(srv.URL, id, agentsv1alpha1.SenderGitHub, "{}", senderSecret, nil).status).To(Equal(http.StatusAccepted))
	})

	It("reads no signing key outside its own namespace", func(ctx SpecContext) {
		ep, id := f.senderEndpoint(ctx, "gh", senderSpec(agentsv1alpha1.SenderGitHub), senderSecret)
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: receiverNamespace, Name: agentsv1alpha1.SigningKeySecretName(string(ep.UID))}})).To(Succeed())
		Eventually(func() int { return send(srv.URL, id, agentsv1alpha1.SenderGitHub, "{}", senderSecret, nil).status }).Should(Equal(http.StatusForbidden))
		// A tenant writes a labelled "signing key" into their own namespace.
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: agentsv1alpha1.SigningKeySecretName(string(ep.UID)), Labels: map[string]string{
				agentsv1alpha1.LabelSigningKey: "true", agentsv1alpha1.LabelEndpointUID: string(ep.UID),
			}, Annotations: map[string]string{agentsv1alpha1.AnnotationKeyHash: ep.Status.SecretHash}},
			Data: map[string][]byte{agentsv1alpha1.SigningKeySecret: []byte("tenant-chosen-key")},
		})).To(Succeed())
		Consistently(func() int {
			return send(srv.URL, id, agentsv1alpha1.SenderGitHub, "{}", "tenant-chosen-key", nil).status
		}, 2*time.Second).Should(Equal(http.StatusForbidden))
		// And its service account may not read Secrets elsewhere.
		asReceiver := testenv.AsServiceAccount(testEnv.Config, receiverNamespace, clusterinstall.ReceiverServiceAccount)
		c, err := client.New(asReceiver, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		err = c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: agentsv1alpha1.SigningKeySecretName(string(ep.UID))}, &corev1.Secret{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	})
})

// setSecretStatus writes the endpoint's secret hashes as the operator would
// and waits until the receiver has them.
func setSecretStatus(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, hash, previous string, until *metav1.Time) {
	GinkgoHelper()
	cur := &agentsv1alpha1.WebhookEndpoint{}
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ep), cur)).To(Succeed())
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Status.SecretHash, cur.Status.PreviousSecretHash, cur.Status.PreviousSecretExpiresAt = hash, previous, until
	Expect(k8sClient.Status().Patch(ctx, cur, patch)).To(Succeed())
	Eventually(func() string { return handler.table.Lookup(cur.Status.EndpointID).Obj.ResourceVersion }).Should(Equal(cur.ResourceVersion))
}

// secondReceiver is another replica against the same API server.
type secondReceiver struct {
	*endpoints.Table
	handler *Handler
	// url is the receive route's base; readyz the replica's readiness.
	url, readyz string
}

// startSecondReceiver starts a replica with the suite's options, changed by
// each of with.
func startSecondReceiver(ctx context.Context, with ...func(*Options)) secondReceiver {
	GinkgoHelper()
	opts := NewOptions()
	opts.ListenAddress = "127.0.0.1:0"
	opts.Namespace = receiverNamespace
	opts.RateLimit = testRateLimit
	opts.UnauthenticatedRateLimit = testUnauthLimit
	for _, w := range with {
		w(opts)
	}
	probes := freeAddress()
	mgr, err := ctrl.NewManager(testenv.AsServiceAccount(testEnv.Config, receiverNamespace, clusterinstall.ReceiverServiceAccount), ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: probes, Cache: CacheOptions(opts),
	})
	Expect(err).NotTo(HaveOccurred())
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h, err := Setup(mctx, mgr, opts, Dependencies{Clock: fakeClock})
	Expect(err).NotTo(HaveOccurred())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(mctx)).To(Succeed())
	}()
	DeferCleanup(func() { cancel(); <-done })
	Eventually(mgr.GetCache().WaitForCacheSync).WithArguments(mctx).Should(BeTrue())
	s := httptest.NewUnstartedServer(h)
	s.Config = newHTTPServer(h)
	s.Start()
	DeferCleanup(s.Close)
	return secondReceiver{Table: h.table, handler: h, url: s.URL, readyz: "http://" + probes + "/readyz"}
}
