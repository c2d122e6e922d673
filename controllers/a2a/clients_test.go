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

package a2a

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/hookrun/hookrun/test/testpki"
)

// mutualTLSAgent is an HTTP+JSON agent over TLS that requires a client
// certificate signed by clients.
func mutualTLSAgent(t *testing.T, server *testpki.CA, clients *testpki.CA) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(wireTaskJSON))
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{server.Server().TLSCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clients.Pool(),
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// tlsConfig trusts roots (nil: the system's) and presents cert (nil: none).
func tlsConfig(roots *x509.CertPool, cert *testpki.Leaf) func() (*tls.Config, error) {
	return func() (*tls.Config, error) {
		conf := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		if cert != nil {
			conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert.TLSCert, nil }
		}
		return conf, nil
	}
}

// TestTLSFailures: a call over mutual TLS succeeds with both the CA and a
// client certificate the agent trusts; without the client certificate, or
// with one of another CA, it is refused for good (TLSClientCertRefused),
// and with roots that do not sign the agent's certificate it is untrusted.
func TestTLSFailures(t *testing.T) {
	serverCA, clientCA, otherCA := testpki.NewCA("agents"), testpki.NewCA("operators"), testpki.NewCA("other")
	srv := mutualTLSAgent(t, serverCA, clientCA)
	cases := []struct {
		name   string
		config func() (*tls.Config, error)
		want   TLSFailure
	}{
		{"CA and client certificate", tlsConfig(serverCA.Pool(), clientCA.Client("hookrun")), TLSOK},
		{"no client certificate", tlsConfig(serverCA.Pool(), nil), TLSClientCertRefused},
		{"a client certificate of another CA", tlsConfig(serverCA.Pool(), otherCA.Client("hookrun")), TLSClientCertRefused},
		{"the system's roots", tlsConfig(nil, clientCA.Client("hookrun")), TLSServerCertUntrusted},
		{"another CA as roots", tlsConfig(otherCA.Pool(), clientCA.Client("hookrun")), TLSServerCertUntrusted},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hc, err := NewClients(nil, DefaultTimeout).For("team-a", fmt.Sprint(i), tc.config)
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&Client{URL: srv.URL, Version: V10, Binding: BindingHTTPJSON, HTTP: hc}).GetTask(t.Context(), "t")
			got := TLSFailureOf(err)
			if got != tc.want || (tc.want == TLSOK) != (err == nil) || IsRetryable(err) {
				t.Errorf("err %v: TLS failure %d, retryable %v; want %d, not retryable", err, got, IsRetryable(err), tc.want)
			}
		})
	}
}

// TestTransportErrorOfAlert: an agent's TLS alert is the cause a run's
// message shows, however net/http wrapped it (the words differ with when
// the alert arrived: seen once in a thousand calls under load).
func TestTransportErrorOfAlert(t *testing.T) {
	alert := &net.OpError{Op: "remote error", Err: tls.AlertError(116)}
	for _, err := range []error{
		&url.Error{Op: "Post", URL: "https://agent.example/", Err: alert},
		&url.Error{Op: "Post", URL: "https://agent.example/", Err: fmt.Errorf("readLoopPeekFailLocked: %w", alert)},
		&url.Error{Op: "Post", URL: "https://agent.example/", Err: fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", alert)},
	} {
		got := transportError(t.Context(), "SendMessage", err)
		if got.Error() != "a2a SendMessage: remote error: tls: certificate required" || got.TLS != TLSClientCertRefused || got.Retryable {
			t.Errorf("%v: %q, TLS failure %d, retryable %v", err, got.Error(), got.TLS, got.Retryable)
		}
	}
	reset := &url.Error{Op: "Post", URL: "https://agent.example/", Err: &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}}
	if got := transportError(t.Context(), "SendMessage", reset); got.Error() != "a2a SendMessage: read tcp: connection reset by peer" || !got.Retryable {
		t.Errorf("a reset connection: %q, retryable %v", got.Error(), got.Retryable)
	}
}

// TestClientsBounds: a client is made once per namespace and material; one
// namespace's many materials push out only its own clients, and the allow
// list holds for TLS clients too.
func TestClientsBounds(t *testing.T) {
	c := NewClients(nil, DefaultTimeout)
	made := 0
	config := func() (*tls.Config, error) { made++; return &tls.Config{MinVersion: tls.VersionTLS12}, nil }
	quiet, err := c.For("quiet", "id", config)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 * NamespaceTLSClients {
		if _, err := c.For("hostile", fmt.Sprint(i), config); err != nil {
			t.Fatal(err)
		}
	}
	again, err := c.For("quiet", "id", config)
	if err != nil || again != quiet || made != 1+10*NamespaceTLSClients {
		t.Errorf("the quiet namespace's client was made again (%d made)", made)
	}
	if n := c.Kept("hostile"); n != NamespaceTLSClients {
		t.Errorf("the hostile namespace keeps %d clients, want %d", n, NamespaceTLSClients)
	}
	if _, err := c.For("quiet", "broken", func() (*tls.Config, error) { return nil, errors.New("no PEM") }); err == nil || c.Kept("quiet") != 1 {
		t.Errorf("a config that failed: err %v, %d kept", err, c.Kept("quiet"))
	}

	namesOnly, err := NewAllowList([]string{"agents.example"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	serverCA := testpki.NewCA("agents")
	srv := mutualTLSAgent(t, serverCA, serverCA)
	hc, err := NewClients(namesOnly, DefaultTimeout).For("team-a", "id", tlsConfig(serverCA.Pool(), nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Client{URL: srv.URL, HTTP: hc}).GetTask(t.Context(), "t")
	var refused *NotAllowedError
	if !errors.As(err, &refused) {
		t.Errorf("a TLS client reached an agent the allow list refuses: %v", err)
	}
}
