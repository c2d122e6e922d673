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
	"crypto/tls"
	"crypto/x509"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/a2apeers"
	"github.com/hookrun/hookrun/test/testpki"
)

// The agent of these specs is a2a-go's (test/a2apeers, A2A 1.0 over
// JSON-RPC) behind TLS that requires a client certificate for every
// request, its card's included; the CAs and certificates are made here.
var _ = Describe("Agents over TLS", func() {
	var (
		ns        string
		serverCA  *testpki.CA
		clientCA  *testpki.CA
		clientCAs atomic.Pointer[x509.CertPool] // whose client certificates the agent takes
		peer      *a2apeers.Peer
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		serverCA, clientCA = testpki.NewCA("agents"), testpki.NewCA("operators")
		clientCAs.Store(clientCA.Pool())
		server := []tls.Certificate{serverCA.Server().TLSCert}
		peer = a2apeers.V1JSONRPC(a2apeers.WithTLS(&tls.Config{
			Certificates: server,
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
				return &tls.Config{Certificates: server, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs.Load(), MinVersion: tls.VersionTLS12}, nil
			},
		}))
		DeferCleanup(peer.Close)
	})

	caSecret := func(ctx SpecContext, name string, pem []byte) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: referableLabels()},
			Data:       map[string][]byte{"ca.crt": pem},
		})).To(Succeed())
	}
	clientSecret := func(ctx SpecContext, name string, leaf *testpki.Leaf) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: referableLabels()},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: leaf.CertPEM, corev1.TLSPrivateKeyKey: leaf.Key},
		})).To(Succeed())
	}
	// tlsAgent creates Agent triage at the peer with the CA Secret ca and
	// the client certificate Secret cert ("": none), speaking version (""
	// reads the card).
	tlsAgent := func(ctx SpecContext, ca, cert string, version agentsv1alpha1.A2AProtocolVersion) *agentsv1alpha1.Agent {
		GinkgoHelper()
		a := newAgent(ns, "triage")
		a.Spec.A2A.URL, a.Spec.A2A.ProtocolVersion = peer.URL, version
		a.Spec.RunTimeout = &metav1.Duration{Duration: time.Minute}
		a.Spec.A2A.TLS = &agentsv1alpha1.A2ATLS{CASecretRef: &agentsv1alpha1.SecretKeyReference{Name: ca, Key: "ca.crt"}}
		if cert != "" {
			a.Spec.A2A.TLS.ClientCertSecretRef = &agentsv1alpha1.SecretReference{Name: cert}
		}
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		return a
	}
	ready := func(ctx SpecContext, a *agentsv1alpha1.Agent) func() *metav1.Condition {
		return func() *metav1.Condition {
			return conditionOf(get(ctx, a.DeepCopy()).Status.Conditions, agentsv1alpha1.ConditionReady)
		}
	}
	ended := func(ctx SpecContext, run *agentsv1alpha1.AgentRun) func() agentsv1alpha1.RunState {
		return func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }
	}

	It("reads the agent card and sends a run over mutual TLS", func(ctx SpecContext) {
		caSecret(ctx, "agent-ca", serverCA.PEM)
		clientSecret(ctx, "agent-client", clientCA.Client("hookrun"))
		a := tlsAgent(ctx, "agent-ca", "agent-client", "")
		Eventually(ready(ctx, a)).Should(And(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable),
			HaveField("Message", ContainSubstring("as the agent card lists"))))
		run := queueTestRun(ctx, ns, "over-tls", "{}", nil)
		Eventually(ended(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(peer.Messages()).To(HaveLen(1))
	})

	It("fails a run the agent refused for want of a client certificate, naming clientCertSecretRef", func(ctx SpecContext) {
		caSecret(ctx, "agent-ca", serverCA.PEM)
		a := tlsAgent(ctx, "agent-ca", "", agentsv1alpha1.A2AProtocolV10)
		Eventually(ready(ctx, a)).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
		run := queueTestRun(ctx, ns, "no-cert", "{}", nil)
		Eventually(ended(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(MatchRegexp(
			`^The agent requires a client certificate and refused the connection without one \(a2a SendMessage: remote error: tls: certificate required\): ` +
				`set spec\.a2a\.tls\.clientCertSecretRef to a kubernetes\.io/tls Secret whose certificate the agent trusts, then send the call again$`))
		Expect(peer.Messages()).To(BeEmpty())
	})

	It("uses a renewed client certificate without a restart", func(ctx SpecContext) {
		caSecret(ctx, "agent-ca", serverCA.PEM)
		clientSecret(ctx, "agent-client", clientCA.Client("hookrun"))
		a := tlsAgent(ctx, "agent-ca", "agent-client", agentsv1alpha1.A2AProtocolV10)
		Eventually(ready(ctx, a)).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
		first := queueTestRun(ctx, ns, "first", "{}", nil)
		Eventually(ended(ctx, first)).Should(Equal(agentsv1alpha1.RunSuccess))

		// The agent now takes certificates of another CA only, and shakes
		// hands again: the certificate in the Secret is refused.
		renewedCA := testpki.NewCA("operators-2024")
		clientCAs.Store(renewedCA.Pool())
		peer.CloseConnections()
		refused := queueTestRun(ctx, ns, "refused", "{}", nil)
		Eventually(ended(ctx, refused)).Should(Equal(agentsv1alpha1.RunError))
		// Which alert a TLS stack sends for a certificate of a CA it does not
		// know varies (bad certificate, unknown certificate authority).
		Expect(get(ctx, refused).Status.Message).To(MatchRegexp(
			`^The agent refused the client certificate of spec\.a2a\.tls\.clientCertSecretRef \(Secret agent-client\) \(a2a SendMessage: remote error: tls: [a-z ]+\): ` +
				`renew it with a certificate the agent trusts, then send the call again$`))

		// The Secret is renewed, as cert-manager does: the next run uses it.
		s := get(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-client"}})
		patch := client.MergeFrom(s.DeepCopy())
		renewed := renewedCA.Client("hookrun")
		s.Data = map[string][]byte{corev1.TLSCertKey: renewed.CertPEM, corev1.TLSPrivateKeyKey: renewed.Key}
		Expect(k8sClient.Patch(ctx, s, patch)).To(Succeed())
		second := queueTestRun(ctx, ns, "second", "{}", nil)
		Eventually(ended(ctx, second)).Should(Equal(agentsv1alpha1.RunSuccess))
		Expect(peer.Messages()).To(HaveLen(2))
	})

	It("keeps an Agent Ready=False naming a TLS Secret that is missing or malformed, until it is fixed", func(ctx SpecContext) {
		clientSecret(ctx, "agent-client", clientCA.Client("hookrun"))
		a := tlsAgent(ctx, "agent-ca", "agent-client", agentsv1alpha1.A2AProtocolV10)
		Eventually(ready(ctx, a)).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonTLSSecretNotFound),
			HaveField("Message", `Secret "agent-ca" named in spec.a2a.tls.caSecretRef does not exist; runs cannot reach the agent over TLS until then`)))
		run := queueTestRun(ctx, ns, "unsent", "{}", nil)
		Eventually(ended(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
		Expect(get(ctx, run).Status.Message).To(Equal(`The agent's TLS Secret "agent-ca" named in spec.a2a.tls.caSecretRef does not exist; fix it and send the call again`))

		caSecret(ctx, "agent-ca", []byte("not a certificate"))
		Eventually(ready(ctx, a)).Should(And(haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonTLSSecretInvalid),
			HaveField("Message", ContainSubstring(`Secret "agent-ca" named in spec.a2a.tls.caSecretRef holds no PEM certificate`))))

		s := get(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-ca"}})
		patch := client.MergeFrom(s.DeepCopy())
		s.Data = map[string][]byte{"ca.crt": serverCA.PEM}
		Expect(k8sClient.Patch(ctx, s, patch)).To(Succeed())
		Eventually(ready(ctx, a)).Should(haveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
		Expect(peer.Messages()).To(BeEmpty())
	})
})
