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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel/propagation"
)

// maxResponseBytes bounds what is read of an agent's answer.
const maxResponseBytes = 8 << 20

// opKind is one of the three operations the dispatcher makes.
type opKind int

const (
	opSend opKind = iota
	opGet
	opCancel
)

// call is one operation as a binding sees it.
type call struct {
	kind opKind
	// name is the dialect's name of the operation: JSON-RPC's method, and
	// what errors call it.
	name string
	// taskID is the task of a get or a cancel.
	taskID string
	// params are JSON-RPC's params; of a send, also HTTP+JSON's body.
	params map[string]any
}

// binding is how calls travel to an agent (see Binding): what HTTP request
// a call is, and how its answer reads. Everything else (headers, the
// token, trace context, redirects, size bounds, what is retryable) the
// Client does the same way for both.
type binding interface {
	// request is the HTTP method, URL and body (nil: none) of cl to the
	// agent at c.URL, for c.Tenant.
	request(c *Client, cl *call) (method, url string, body any)
	// result reads an answer that is not a redirect: the result's JSON, or
	// the error the agent gave (an *Error).
	result(cl *call, status int, body []byte) (json.RawMessage, error)
}

// do makes one call through w and returns its result's JSON.
func (c *Client) do(ctx context.Context, w wiring, cl *call) (json.RawMessage, error) {
	method, u, body := w.b.request(c, cl)
	req, err := c.newRequest(ctx, w.d, method, u, body)
	if err != nil {
		return nil, &Error{Op: cl.name, Err: err}
	}
	ans, err := c.exchange(ctx, cl.name, req)
	if err != nil {
		return nil, err
	}
	raw, err := w.b.result(cl, ans.status, ans.body)
	var e *Error
	if errors.As(err, &e) && e.StatusCode != 0 && asksToWait(e.StatusCode) {
		e.RetryAfter = ans.retryAfter
	}
	return raw, err
}

// httpAnswer is an agent's HTTP answer, as far as a call reads it.
type httpAnswer struct {
	status int
	body   []byte
	// retryAfter is the Retry-After header, cut to maxRetryAfterBytes.
	retryAfter string
}

// newRequest is an HTTP request to the agent with the dialect's, the
// token's and the caller's headers, in that order, and the trace context.
func (c *Client) newRequest(ctx context.Context, d dialect, method, u string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	d.setHeaders(req.Header)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	// The span of the call, if ctx has one (the run's trace): the agent
	// can join it.
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req, nil
}

// exchange sends req and reads the answer: its status and at most
// maxResponseBytes of its body. Transport failures, redirects and a
// success too big to read are errors here, the same for every binding.
func (c *Client) exchange(ctx context.Context, op string, req *http.Request) (httpAnswer, error) {
	resp, err := send(c.HTTP, req)
	if err != nil {
		return httpAnswer{}, transportError(ctx, op, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, tooBig, err := readBounded(resp.Body, maxResponseBytes)
	switch {
	case err != nil:
		return httpAnswer{}, &Error{Op: op, Retryable: true, Transport: true, Err: fmt.Errorf("reading the answer: %w", err)}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return httpAnswer{}, &Error{Op: op, StatusCode: resp.StatusCode, Err: redirectError(resp.Header.Get("Location"))}
	case tooBig && success(resp.StatusCode):
		// An error's body is only shown cut short; a result must be whole.
		return httpAnswer{}, &Error{Op: op, StatusCode: resp.StatusCode, Err: fmt.Errorf("the answer is larger than %d MiB", maxResponseBytes>>20)}
	}
	retryAfter := resp.Header.Get("Retry-After")
	if len(retryAfter) > maxRetryAfterBytes {
		retryAfter = "" // no delay or date is that long
	}
	return httpAnswer{status: resp.StatusCode, body: data, retryAfter: retryAfter}, nil
}

// send sends req with hc (nil: the default client), never following a
// redirect.
func send(hc *http.Client, req *http.Request) (*http.Response, error) {
	h := *defaultHTTP
	if hc != nil {
		h = *hc
	}
	h.CheckRedirect = refuseRedirect
	return h.Do(req)
}

// transportError is the error of a request that got no answer: retryable
// unless ctx ended or a certificate was refused (TLSFailureOf), or the
// allow list refused the connection (final, not a transport error: nothing
// was sent).
func transportError(ctx context.Context, op string, err error) *Error {
	var refused *NotAllowedError
	if errors.As(err, &refused) {
		return &Error{Op: op, Err: refused}
	}
	failure := TLSFailureOf(err)
	return &Error{Op: op, Retryable: ctx.Err() == nil && failure == TLSOK, Transport: true, TLS: failure, Err: transportCause(err)}
}

// transportCause is the cause of an HTTP client's error, without the URL it
// was asked for (the Agent's, known to whoever reads the error). A TLS
// alert the agent sent is the whole cause: net/http's words around it
// depend on when it arrived (at the first read after a TLS 1.3 handshake,
// sometimes "readLoopPeekFailLocked: ").
func transportCause(err error) error {
	var alert *net.OpError
	if errors.As(err, &alert) && alert.Op == "remote error" {
		return alert
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// readBounded reads at most limit bytes of r, and tells whether there was
// more.
func readBounded(r io.Reader, limit int64) ([]byte, bool, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(data)) > limit {
		return data[:limit], true, err
	}
	return data, false, err
}

func success(status int) bool { return status >= 200 && status < 300 }
