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
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What one Agent's TLS Secrets may cost the operator: they are read at
// every call of a run and by the Agent reconciler, and what they parse to
// is kept per namespace (a2a.Clients). Over a bound, the Secret is
// TLSSecretInvalid, and nothing of it is parsed.
const (
	MaxCABundleBytes         = 64 << 10
	MaxCACertificates        = 32
	MaxClientChainBytes      = 32 << 10
	MaxClientCertificates    = 8
	MaxClientKeyBytes        = 16 << 10
	MaxClientRSAKeyBits      = 4096
	FieldCASecretRef         = "spec.a2a.tls.caSecretRef"
	FieldClientCertSecretRef = "spec.a2a.tls.clientCertSecretRef"
	certificatePEMBlock      = "CERTIFICATE"
	tooManyCertificatesFmt   = "holds more than %d certificates"
)

// AgentTLS is the data of an Agent's spec.a2a.tls Secrets, read and within
// their bounds, not parsed yet (Config parses it).
type AgentTLS struct {
	// Namespace is the Agent's.
	Namespace string
	// ID identifies the data (a SHA-256 of it): equal IDs, equal Config.
	ID string
	// CA is the CA bundle (PEM), nil without caSecretRef; Cert and Key the
	// client certificate chain and key (PEM), nil without
	// clientCertSecretRef.
	CA, Cert, Key []byte
	// caName and certName are the Secrets' names, for errors.
	caName, certName string
}

// TLSSecretError says why a Secret of spec.a2a.tls cannot be used. Any
// other error of ReadAgentTLS is the API server's, and transient.
type TLSSecretError struct {
	// Field is spec.a2a.tls.caSecretRef or spec.a2a.tls.clientCertSecretRef.
	Field, Name string
	// Reason is TLSSecretNotFound, TLSSecretInvalid or SecretNotReferable.
	Reason string
	// Problem says what is wrong, after the Secret's name.
	Problem string
}

func (e *TLSSecretError) Error() string {
	return fmt.Sprintf("Secret %q named in %s %s", e.Name, e.Field, e.Problem)
}

// ReadAgentTLS reads the Secrets of agent's spec.a2a.tls from r (the API
// server), under the referral rule of authSecretRef (Get);
// nil when the Agent has none. A Secret missing, not referable or over its
// bounds is a *TLSSecretError.
func ReadAgentTLS(ctx context.Context, r client.Reader, agent *agentsv1alpha1.Agent) (*AgentTLS, error) {
	spec := agent.Spec.A2A.TLS
	if spec == nil {
		return nil, nil
	}
	t := &AgentTLS{Namespace: agent.Namespace}
	if ref := spec.CASecretRef; ref != nil {
		data, err := readTLSSecret(ctx, r, agent.Namespace, FieldCASecretRef, ref.Name, map[string]int{ref.Key: MaxCABundleBytes})
		if err != nil {
			return nil, err
		}
		t.CA, t.caName = data[ref.Key], ref.Name
	}
	if ref := spec.ClientCertSecretRef; ref != nil {
		data, err := readTLSSecret(ctx, r, agent.Namespace, FieldClientCertSecretRef, ref.Name,
			map[string]int{corev1.TLSCertKey: MaxClientChainBytes, corev1.TLSPrivateKeyKey: MaxClientKeyBytes})
		if err != nil {
			return nil, err
		}
		t.Cert, t.Key, t.certName = data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey], ref.Name
	}
	t.ID = t.id()
	return t, nil
}

// id is a SHA-256 of t's data.
func (t *AgentTLS) id() string {
	h := sha256.New()
	for _, b := range [][]byte{t.CA, t.Cert, t.Key} {
		_ = binary.Write(h, binary.BigEndian, uint64(len(b)))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WithoutClientCertificate is t without its client certificate: for an
// agent the card places at another origin than spec.a2a.url, which the
// Agent's identity is not presented to (as its token is not).
func (t *AgentTLS) WithoutClientCertificate() *AgentTLS {
	out := *t
	out.Cert, out.Key, out.certName = nil, nil, ""
	out.ID = out.id()
	return &out
}

// readTLSSecret reads Secret name's keys, each at most its bound of bytes.
func readTLSSecret(ctx context.Context, r client.Reader, namespace, field, name string, keys map[string]int) (map[string][]byte, error) {
	bad := func(reason, problem string, args ...any) error {
		return &TLSSecretError{Field: field, Name: name, Reason: reason, Problem: fmt.Sprintf(problem, args...)}
	}
	s, err := Get(ctx, r, namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, bad(agentsv1alpha1.ReasonTLSSecretNotFound, "does not exist")
	case errors.Is(err, ErrNotReferable):
		return nil, bad(agentsv1alpha1.ReasonSecretNotReferable, "is not labelled for hookrun, so the operator does not read it; if it is meant for this, label it: kubectl label secret %s %s=%s",
			name, agentsv1alpha1.LabelAllowReference, agentsv1alpha1.AllowReferenceTrue)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s (%s): %w", name, field, err)
	}
	out := map[string][]byte{}
	for key, limit := range keys {
		v := s.Data[key]
		switch {
		case len(v) == 0:
			return nil, bad(agentsv1alpha1.ReasonTLSSecretNotFound, "has no key %q", key)
		case len(v) > limit:
			return nil, bad(agentsv1alpha1.ReasonTLSSecretInvalid, "has %d bytes in %q, over the %d KiB the operator reads", len(v), key, limit>>10)
		}
		out[key] = v
	}
	return out, nil
}

// Config parses t into the TLS settings of calls to the agent: the CA
// bundle as the only roots, and the client certificate presented whatever
// CAs the agent says it accepts. Data that does not parse is a
// *TLSSecretError.
func (t *AgentTLS) Config() (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CA != nil {
		pool, err := parseCABundle(t.CA)
		if err != nil {
			return nil, &TLSSecretError{Field: FieldCASecretRef, Name: t.caName, Reason: agentsv1alpha1.ReasonTLSSecretInvalid, Problem: err.Error()}
		}
		conf.RootCAs = pool
	}
	if t.Cert != nil {
		cert, err := parseClientCertificate(t.Cert, t.Key)
		if err != nil {
			return nil, &TLSSecretError{Field: FieldClientCertSecretRef, Name: t.certName, Reason: agentsv1alpha1.ReasonTLSSecretInvalid, Problem: err.Error()}
		}
		// Presented even when the agent's list of acceptable CAs does not
		// name its issuer (Go would then send none): an agent behind a
		// proxy may list others, and its refusal says more than silence.
		conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return conf, nil
}

// parseCABundle parses at most MaxCACertificates PEM certificates.
func parseCABundle(data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != certificatePEMBlock {
			continue
		}
		if n++; n > MaxCACertificates {
			return nil, fmt.Errorf(tooManyCertificatesFmt, MaxCACertificates)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("holds a certificate that does not parse: %w", err)
		}
		pool.AddCert(cert)
	}
	if n == 0 {
		return nil, errors.New("holds no PEM certificate")
	}
	return pool, nil
}

// parseClientCertificate parses a chain of at most MaxClientCertificates
// and its key, which must match the first; an RSA key has at most
// MaxClientRSAKeyBits.
func parseClientCertificate(chain, key []byte) (*tls.Certificate, error) {
	n := 0
	for rest := chain; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type == certificatePEMBlock {
			n++
		}
	}
	if n > MaxClientCertificates {
		return nil, fmt.Errorf(tooManyCertificatesFmt+" in tls.crt", MaxClientCertificates)
	}
	cert, err := tls.X509KeyPair(chain, key)
	if err != nil {
		return nil, fmt.Errorf("holds no usable certificate and key in tls.crt and tls.key: %w", err)
	}
	if k, ok := cert.PrivateKey.(*rsa.PrivateKey); ok && k.N.BitLen() > MaxClientRSAKeyBits {
		return nil, fmt.Errorf("holds an RSA key of %d bits in tls.key, over %d", k.N.BitLen(), MaxClientRSAKeyBits)
	}
	return &cert, nil
}
