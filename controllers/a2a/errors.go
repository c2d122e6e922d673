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
	"net"
	"net/http"
	"strings"
)

// Error is a failed call. Retryable errors (transport, HTTP 5xx and 429)
// may succeed later; others (HTTP 3xx and 4xx, JSON-RPC errors, answers
// that cannot be read, a connection the allow list refused) will not.
//
// Its text may end up in a run's status.message, so whatever the agent
// chose in it (an HTTP body, an error's message or reason, a certificate's
// names in a TLS error) is cut by Sanitize to one short line.
type Error struct {
	Op         string
	StatusCode int // HTTP status, 0 for transport and JSON-RPC errors
	RPCCode    int // JSON-RPC error code, 0 otherwise
	// Reason is the reason of an HTTP+JSON error (its google.rpc.ErrorInfo),
	// for example VERSION_NOT_SUPPORTED; empty otherwise.
	Reason    string
	Retryable bool
	// Transport: no whole HTTP answer came (see IsTransport).
	Transport bool
	// VersionRefused: the agent refused the call's version or binding (see
	// IsVersionRefused).
	VersionRefused bool
	// TLS says why a TLS handshake failed for good; TLSOK otherwise.
	TLS TLSFailure
	// RetryAfter is the Retry-After header of an answer 429 or 503, as the
	// agent sent it (see RetryAfter); empty otherwise.
	RetryAfter string
	// Err is the cause; Error shows its text only through Sanitize.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("a2a ")
	b.WriteString(e.Op)
	switch {
	case e.StatusCode != 0:
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	case e.RPCCode != 0:
		fmt.Fprintf(&b, ": JSON-RPC error %d", e.RPCCode)
	}
	if e.Reason != "" {
		b.WriteString(" ")
		b.WriteString(Sanitize(e.Reason))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(Sanitize(e.Err.Error()))
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsRetryable tells whether err is worth retrying: an *Error or a
// *CardError that says so.
func IsRetryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	var ce *CardError
	return errors.As(err, &ce) && ce.Retryable
}

// IsVersionRefused tells whether the agent refused the protocol version or
// binding the call used: JSON-RPC -32601 (method not found) or -32009
// (version not supported), HTTP+JSON reason VERSION_NOT_SUPPORTED, or HTTP
// 404/405/501 on an HTTP+JSON send.
func IsVersionRefused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.VersionRefused
}

// IsTransport tells whether no HTTP answer came (connection refused, reset,
// timeout, TLS); not an allow-list refusal.
func IsTransport(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Transport
}

// JSON-RPC error codes that say the agent does not speak the call's version.
const (
	rpcMethodNotFound         = -32601
	rpcVersionNotSupported    = -32009
	reasonVersionNotSupported = "VERSION_NOT_SUPPORTED"
)

// statusError is the error of an answer with an HTTP status that is not a
// success (nor a redirect): retryable for 5xx and 429; body is its text.
func statusError(op string, status int, body []byte) *Error {
	retry := status >= 500 || status == http.StatusTooManyRequests
	return &Error{Op: op, StatusCode: status, Retryable: retry, Err: errors.New(snippet(body))}
}

// snippet is the start of an answer's body, as one short line.
func snippet(b []byte) string {
	if s := Sanitize(string(b)); s != "" {
		return "the answer was: " + s
	}
	return "empty answer"
}

// redirectError says that a redirect was not followed, and where it pointed.
func redirectError(location string) error {
	const msg = "the agent answered with a redirect, which is not followed (set spec.a2a.url to the agent's own endpoint)"
	if location = Sanitize(location); location != "" {
		return fmt.Errorf("%s; it pointed to %s", msg, location)
	}
	return errors.New(msg)
}

// TLSFailure is why a TLS handshake with an agent failed in a way no retry
// mends: a certificate must change first.
type TLSFailure int

const (
	TLSOK TLSFailure = iota
	// TLSClientCertRefused: the agent refused the operator's client
	// certificate, or its absence (TLS alerts certificate required, bad
	// certificate, unknown CA, expired, revoked, unsupported, unknown).
	TLSClientCertRefused
	// TLSServerCertUntrusted: the agent's certificate is not signed by a
	// CA the operator trusts, or not for the agent's host, or not valid now.
	TLSServerCertUntrusted
)

// refusedCertificateAlerts are the TLS alerts (RFC 8446 §6.2) an agent
// sends when it will not take the client's certificate.
var refusedCertificateAlerts = map[string]bool{}

func init() {
	for _, a := range []tls.AlertError{42, 43, 44, 45, 46, 48, 116} {
		refusedCertificateAlerts[a.Error()] = true
	}
}

// TLSFailureOf tells why err, a failed call or card read, failed in its
// TLS handshake for good; TLSOK when it did not.
func TLSFailureOf(err error) TLSFailure {
	var e *Error
	if errors.As(err, &e) && e.TLS != TLSOK {
		return e.TLS
	}
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) {
		return TLSServerCertUntrusted
	}
	// A TLS alert the agent sent arrives as a net.OpError "remote error"
	// around crypto/tls's unexported alert type: known by its text.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil && refusedCertificateAlerts[op.Err.Error()] {
		return TLSClientCertRefused
	}
	return TLSOK
}
