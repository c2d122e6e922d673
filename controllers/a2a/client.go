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

// Package a2a is hookrun's small A2A client: JSON-RPC over HTTP, speaking
// protocol 0.3 (message/send, tasks/get, tasks/cancel) and 1.0 (SendMessage,
// GetTask, CancelTask with header A2A-Version: 1.0). It covers what the run
// dispatcher needs: send one message without blocking, follow its task, and
// cancel it. Errors say whether a retry may help.
package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// Version is an A2A protocol version the client speaks.
type Version string

const (
	V03 Version = "0.3"
	V10 Version = "1.0"
)

// State is a task's state, in A2A 0.3's spelling whatever the wire version.
type State string

const (
	StateSubmitted     State = "submitted"
	StateWorking       State = "working"
	StateCompleted     State = "completed"
	StateFailed        State = "failed"
	StateCanceled      State = "canceled"
	StateRejected      State = "rejected"
	StateInputRequired State = "input-required"
	StateAuthRequired  State = "auth-required"
	StateUnknown       State = "unknown"
)

// Terminal tells whether the task will not change any more on its own:
// finished, or waiting for input the dispatcher cannot give.
func (s State) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateCanceled, StateRejected, StateInputRequired, StateAuthRequired:
		return true
	}
	return false
}

// File is a binary part.
type File struct {
	Name      string
	MediaType string
	Bytes     []byte
}

// Message is what the dispatcher sends: one text part and optionally a file.
type Message struct {
	MessageID string
	ContextID string
	Text      string
	File      *File
	// Metadata is sent as the message's metadata object.
	Metadata map[string]any
}

// Task is the part of an A2A task the dispatcher reads.
type Task struct {
	ID        string
	ContextID string
	State     State
	// StatusText is the text of the status message, if any (why it failed,
	// what input it needs).
	StatusText string
	// Output is the text of the task's artifacts, or of its final status
	// message when it has no artifacts.
	Output string
}

// Client calls one agent. It never follows a redirect, whatever HTTP's
// CheckRedirect says: an answer 3xx is a final error (the agent's URL is
// not where it lives; the error names where it pointed).
type Client struct {
	// URL is the agent's JSON-RPC endpoint.
	URL string
	// Version selects the wire protocol (see dialect); it is read once, at
	// the first call.
	Version Version
	// Token, if set, is sent as "Authorization: Bearer <Token>".
	Token string
	// HTTP is the client used; it should have a timeout. Nil: a client of
	// NewHTTPClient without an allow list, with DefaultTimeout.
	HTTP *http.Client
	// Headers are added to every request (for example X-User-Id).
	Headers map[string]string

	ids  atomic.Int64
	pick sync.Once
	d    dialect
}

// traceContext writes the W3C traceparent and tracestate headers.
var traceContext = propagation.TraceContext{}

// DefaultTimeout bounds one JSON-RPC call when HTTP is nil.
const DefaultTimeout = 30 * time.Second

var defaultHTTP = NewHTTPClient(nil, DefaultTimeout)

// maxResponseBytes bounds what is read of an agent's answer.
const maxResponseBytes = 8 << 20

// Error is a failed call. Retryable errors (transport, HTTP 5xx and 429)
// may succeed later; others (HTTP 3xx and 4xx, JSON-RPC errors, answers
// that cannot be read, a connection the allow list refused) will not.
//
// Its text may end up in a run's status.message, so whatever the agent
// chose in it (an HTTP body, a JSON-RPC error message, a certificate's
// names in a TLS error) is cut by Sanitize to one short line.
type Error struct {
	Op         string
	StatusCode int // HTTP status, 0 for transport and JSON-RPC errors
	RPCCode    int // JSON-RPC error code, 0 otherwise
	Retryable  bool
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
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(Sanitize(e.Err.Error()))
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsRetryable tells whether err is worth retrying.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}

// SendMessage sends msg without blocking for the result and returns the task
// the agent created. An agent that answers with a message instead of a task
// has finished: the result is a completed task with that message as output.
func (c *Client) SendMessage(ctx context.Context, msg Message) (*Task, error) {
	d := c.dialect()
	method := d.methods().send
	var raw json.RawMessage
	if err := c.call(ctx, method, d.sendParams(msg), &raw); err != nil {
		return nil, err
	}
	task, err := d.decodeSendResult(raw)
	if err != nil {
		return nil, &Error{Op: method, Err: err}
	}
	return task, nil
}

// GetTask reads a task.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	return c.taskCall(ctx, c.dialect().methods().get, id)
}

// CancelTask asks the agent to cancel a task.
func (c *Client) CancelTask(ctx context.Context, id string) (*Task, error) {
	return c.taskCall(ctx, c.dialect().methods().cancel, id)
}

// dialect is the wire form of c.Version, chosen at the first call.
func (c *Client) dialect() dialect {
	c.pick.Do(func() { c.d = dialectFor(c.Version) })
	return c.d
}

// taskCall calls a method that takes a task id and answers with the task.
func (c *Client) taskCall(ctx context.Context, method, id string) (*Task, error) {
	var t wireTask
	if err := c.call(ctx, method, map[string]any{"id": id}, &t); err != nil {
		return nil, err
	}
	task, err := toTask(&t)
	if err != nil {
		return nil, &Error{Op: method, Err: err}
	}
	return task, nil
}

// call makes one JSON-RPC call and decodes its result into out.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	req, err := c.newRequest(ctx, method, params)
	if err != nil {
		return &Error{Op: method, Err: err}
	}
	hc := *defaultHTTP
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = refuseRedirect
	resp, err := hc.Do(req)
	if err != nil {
		var refused *NotAllowedError
		if errors.As(err, &refused) {
			return &Error{Op: method, Err: refused}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the Agent's; the cause is what matters
		}
		return &Error{Op: method, Retryable: ctx.Err() == nil, Err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	return readAnswer(method, resp, out)
}

// newRequest is the HTTP request of one JSON-RPC call, with the dialect's,
// the token's and the caller's headers, in that order.
func (c *Client) newRequest(ctx context.Context, method string, params any) (*http.Request, error) {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: c.ids.Add(1), Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	c.dialect().setHeaders(req.Header)
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

// readAnswer reads a JSON-RPC answer and decodes its result into out.
func readAnswer(method string, resp *http.Response, out any) error {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return &Error{Op: method, Retryable: true, Err: fmt.Errorf("reading the answer: %w", err)}
	}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return &Error{Op: method, StatusCode: resp.StatusCode, Err: redirectError(resp.Header.Get("Location"))}
	case resp.StatusCode != http.StatusOK:
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return &Error{Op: method, StatusCode: resp.StatusCode, Retryable: retry, Err: errors.New(snippet(data))}
	}
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return &Error{Op: method, Err: fmt.Errorf("the answer is not JSON-RPC: %w", err)}
	}
	if r.Error != nil {
		msg := Sanitize(r.Error.Message)
		if msg == "" {
			msg = "no message"
		}
		return &Error{Op: method, RPCCode: r.Error.Code, Err: errors.New(msg)}
	}
	if len(r.Result) == 0 || string(r.Result) == "null" {
		return &Error{Op: method, Err: errors.New("the answer has no result")}
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return &Error{Op: method, Err: fmt.Errorf("decoding the result: %w", err)}
	}
	return nil
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
