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

package secretref

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testpki"
)

// TestReadAgentTLS: the Secrets of spec.a2a.tls under the referral rule and
// their bounds, each refusal naming the Secret and its field, and the
// parsed settings.
func TestReadAgentTLS(t *testing.T) {
	ca := testpki.NewCA("agents")
	client := ca.Client("hookrun")
	other := testpki.NewCA("other").Client("hookrun")
	bigRSA, err := rsa.GenerateKey(rand.Reader, MaxClientRSAKeyBits+64)
	if err != nil {
		t.Fatal(err)
	}
	bigKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(bigRSA)})
	tlsSecret := func(name string, crt, key []byte) *corev1.Secret {
		return secret(name, true, map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key})
	}
	cases := []struct {
		name    string
		secrets []*corev1.Secret
		reason  string // "": usable
		message string
	}{
		{"both", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": ca.PEM}), tlsSecret("me", client.CertPEM, client.Key)}, "", ""},
		{"CA Secret missing", []*corev1.Secret{tlsSecret("me", client.CertPEM, client.Key)}, agentsv1alpha1.ReasonTLSSecretNotFound,
			`Secret "ca" named in spec.a2a.tls.caSecretRef does not exist`},
		{"CA key missing", []*corev1.Secret{secret("ca", true, map[string][]byte{"other": ca.PEM}), tlsSecret("me", client.CertPEM, client.Key)},
			agentsv1alpha1.ReasonTLSSecretNotFound, `Secret "ca" named in spec.a2a.tls.caSecretRef has no key "ca.crt"`},
		{"client Secret not labelled", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": ca.PEM}), secret("me", false, nil)},
			agentsv1alpha1.ReasonSecretNotReferable, `Secret "me" named in spec.a2a.tls.clientCertSecretRef is not labelled for hookrun`},
		{"client Secret without tls.key", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": ca.PEM}), tlsSecret("me", client.CertPEM, nil)},
			agentsv1alpha1.ReasonTLSSecretNotFound, `has no key "tls.key"`},
		{"CA bundle over 64 KiB", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": bytes.Repeat(ca.PEM, 1+MaxCABundleBytes/len(ca.PEM))}), tlsSecret("me", client.CertPEM, client.Key)},
			agentsv1alpha1.ReasonTLSSecretInvalid, `over the 64 KiB the operator reads`},
		{"CA bundle of 33 certificates", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": bytes.Repeat(ca.PEM, MaxCACertificates+1)}), tlsSecret("me", client.CertPEM, client.Key)},
			agentsv1alpha1.ReasonTLSSecretInvalid, `Secret "ca" named in spec.a2a.tls.caSecretRef holds more than 32 certificates`},
		{"CA bundle without PEM", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": []byte("not PEM")}), tlsSecret("me", client.CertPEM, client.Key)},
			agentsv1alpha1.ReasonTLSSecretInvalid, `holds no PEM certificate`},
		{"key of another certificate", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": ca.PEM}), tlsSecret("me", client.CertPEM, other.Key)},
			agentsv1alpha1.ReasonTLSSecretInvalid, `Secret "me" named in spec.a2a.tls.clientCertSecretRef holds no usable certificate and key`},
		{"chain of 9 certificates", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": ca.PEM}), tlsSecret("me", bytes.Repeat(client.CertPEM, MaxClientCertificates+1), client.Key)},
			agentsv1alpha1.ReasonTLSSecretInvalid, `holds more than 8 certificates in tls.crt`},
		{"RSA key over 4096 bits", []*corev1.Secret{secret("ca", true, map[string][]byte{"ca.crt": ca.PEM}), tlsSecret("me", selfSigned(t, bigRSA), bigKey)},
			agentsv1alpha1.ReasonTLSSecretInvalid, `holds an RSA key of 4160 bits in tls.key, over 4096`},
	}
	agent := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "triage"}}
	agent.Spec.A2A.TLS = &agentsv1alpha1.A2ATLS{
		CASecretRef:         &agentsv1alpha1.SecretKeyReference{Name: "ca", Key: "ca.crt"},
		ClientCertSecretRef: &agentsv1alpha1.SecretReference{Name: "me"},
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme)
			for _, s := range tc.secrets {
				b = b.WithObjects(s)
			}
			got, err := ReadAgentTLS(t.Context(), b.Build(), agent)
			if err == nil {
				_, err = got.Config()
			}
			var bad *TLSSecretError
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("unusable: %v", err)
			case tc.reason == "":
				if got.Namespace != "team-a" || len(got.ID) != 64 || got.WithoutClientCertificate().ID == got.ID {
					t.Errorf("namespace %q, ID %q", got.Namespace, got.ID)
				}
			case !errors.As(err, &bad) || bad.Reason != tc.reason || !strings.Contains(err.Error(), tc.message):
				t.Errorf("err %v (%T), want reason %s and %q", err, err, tc.reason, tc.message)
			}
		})
	}
}

// secret is a Secret of namespace team-a, labelled for hookrun if referable.
func secret(name string, referable bool, data map[string][]byte) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}, Data: data}
	if referable {
		s.Labels = map[string]string{agentsv1alpha1.LabelAllowReference: agentsv1alpha1.AllowReferenceTrue}
	}
	return s
}

// selfSigned is a certificate of key, signed by itself.
func selfSigned(t *testing.T, key *rsa.PrivateKey) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: testpki.NewCA("x").Cert.SerialNumber}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
