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

// Package testpki makes the certificates of tests that speak TLS to an
// agent: a CA, and server and client certificates it signs (ECDSA P-256,
// valid for a day around now). Only tests import it.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"sync/atomic"
	"time"
)

// CA is a certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, PEM-encoded.
	PEM []byte
}

// Leaf is a certificate the CA signed, with its key.
type Leaf struct {
	Cert         *x509.Certificate
	CertPEM, Key []byte
	TLSCert      tls.Certificate
	SerialNumber *big.Int
	CommonName   string
}

var serial atomic.Int64

// NewCA makes a CA named name.
func NewCA(name string) *CA {
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	tmpl := template(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der := must(x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key))
	cert := must(x509.ParseCertificate(der))
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool holds the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost.
func (ca *CA) Server() *Leaf {
	return ca.issue("agent", x509.ExtKeyUsageServerAuth, func(t *x509.Certificate) {
		t.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		t.DNSNames = []string{"localhost"}
	})
}

// Client issues a client certificate named cn.
func (ca *CA) Client(cn string) *Leaf {
	return ca.issue(cn, x509.ExtKeyUsageClientAuth, nil)
}

func (ca *CA) issue(cn string, usage x509.ExtKeyUsage, mutate func(*x509.Certificate)) *Leaf {
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	tmpl := template(cn)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	if mutate != nil {
		mutate(tmpl)
	}
	der := must(x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key))
	keyDER := must(x509.MarshalPKCS8PrivateKey(key))
	l := &Leaf{
		Cert:         must(x509.ParseCertificate(der)),
		CertPEM:      pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:          pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		SerialNumber: tmpl.SerialNumber,
		CommonName:   cn,
	}
	l.TLSCert = must(tls.X509KeyPair(l.CertPEM, l.Key))
	return l
}

func template(cn string) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
