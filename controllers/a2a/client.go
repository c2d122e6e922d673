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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// Binding is how messages travel to an agent.
type Binding string

const (
	BindingJSONRPC  Binding = "JSONRPC"
	BindingHTTPJSON Binding = "HTTP+JSON"
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
	// URL is the agent's endpoint: where JSON-RPC calls are posted, or the
	// base of HTTP+JSON's paths.
	URL string
	// Version selects the wire protocol (see dialect). Version, Binding and
	// Tenant are read once, at the first call.
	Version Version
	// Binding is how calls travel; empty means JSON-RPC. HTTP+JSON is A2A
	// 1.0 only: with Version 0.3 every call fails, saying so.
	Binding Binding
	// Tenant is 1.0's optional tenant of an interface: the first segments of
	// HTTP+JSON's paths, "tenant" in JSON-RPC's params. Empty: none.
	Tenant string
	// Token, if set, is sent as "Authorization: Bearer <Token>".
	Token string
	// HTTP is the client used; it should have a timeout. Nil: a client of
	// NewHTTPClient without an allow list, with DefaultTimeout.
	HTTP *http.Client
	// Headers are added to every request (for example X-User-Id).
	Headers map[string]string

	ids  atomic.Int64
	pick sync.Once
	w    wiring
}

// traceContext writes the W3C traceparent and tracestate headers.
var traceContext = propagation.TraceContext{}

// DefaultTimeout bounds one call when HTTP is nil.
const DefaultTimeout = 30 * time.Second

var defaultHTTP = NewHTTPClient(nil, DefaultTimeout)

// SendMessage sends msg without blocking for the result and returns the task
// the agent created. An agent that answers with a message instead of a task
// has finished: the result is a completed task with that message as output.
func (c *Client) SendMessage(ctx context.Context, msg Message) (*Task, error) {
	w, err := c.route(opSend)
	if err != nil {
		return nil, err
	}
	cl := &call{kind: opSend, name: w.d.methods().of(opSend), params: w.d.sendParams(msg)}
	raw, err := c.do(ctx, w, cl)
	if err != nil {
		return nil, err
	}
	task, err := w.d.decodeSendResult(raw)
	if err != nil {
		return nil, &Error{Op: cl.name, Err: err}
	}
	return task, nil
}

// GetTask reads a task.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	return c.taskCall(ctx, opGet, id)
}

// CancelTask asks the agent to cancel a task.
func (c *Client) CancelTask(ctx context.Context, id string) (*Task, error) {
	return c.taskCall(ctx, opCancel, id)
}

// taskCall calls an operation that takes a task id and answers with the task.
func (c *Client) taskCall(ctx context.Context, kind opKind, id string) (*Task, error) {
	w, err := c.route(kind)
	if err != nil {
		return nil, err
	}
	name := w.d.methods().of(kind)
	cl := &call{kind: kind, name: name, taskID: id, params: map[string]any{"id": id}}
	raw, err := c.do(ctx, w, cl)
	if err != nil {
		return nil, err
	}
	var t wireTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, &Error{Op: name, Err: fmt.Errorf("decoding the result: %w", err)}
	}
	task, err := toTask(&t)
	if err != nil {
		return nil, &Error{Op: name, Err: err}
	}
	return task, nil
}

// wiring is a dialect and a binding; err says why a client cannot call at
// all.
type wiring struct {
	d   dialect
	b   binding
	err error
}

// route is c's wiring, chosen at the first call, or the error every call of
// c gets, named after the operation asked for.
func (c *Client) route(kind opKind) (wiring, error) {
	c.pick.Do(func() { c.w = chooseWiring(c.Version, c.Binding) })
	if c.w.err != nil {
		return wiring{}, &Error{Op: dialectFor(c.Version).methods().of(kind), Err: c.w.err}
	}
	return c.w, nil
}

// chooseWiring is the dialect of v and the binding b names.
func chooseWiring(v Version, b Binding) wiring {
	d := dialectFor(v)
	switch b {
	case "", BindingJSONRPC:
		return wiring{d: d, b: jsonRPC{}}
	case BindingHTTPJSON:
		if v != V10 {
			return wiring{err: fmt.Errorf("the HTTP+JSON binding is A2A 1.0 only, and the protocol version is %q", v)}
		}
		return wiring{d: d, b: httpJSON{}}
	}
	return wiring{err: fmt.Errorf("the binding %q is not one the operator speaks (JSONRPC or HTTP+JSON)", b)}
}
