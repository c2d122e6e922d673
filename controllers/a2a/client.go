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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
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
	// Version selects the wire protocol.
	Version Version
	// Token, if set, is sent as "Authorization: Bearer <Token>".
	Token string
	// HTTP is the client used; it should have a timeout. Nil: a client of
	// NewHTTPClient without an allow list, with DefaultTimeout.
	HTTP *http.Client
	// Headers are added to every request (for example X-User-Id).
	Headers map[string]string

	ids atomic.Int64
}

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
	method, params := "message/send", c.sendParams03(msg)
	if c.Version == V10 {
		method, params = "SendMessage", c.sendParams10(msg)
	}
	var raw json.RawMessage
	if err := c.call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	return c.decodeSendResult(method, raw)
}

// GetTask reads a task.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	method := "tasks/get"
	if c.Version == V10 {
		method = "GetTask"
	}
	var t wireTask
	if err := c.call(ctx, method, map[string]any{"id": id}, &t); err != nil {
		return nil, err
	}
	return c.toTask(method, &t)
}

// CancelTask asks the agent to cancel a task.
func (c *Client) CancelTask(ctx context.Context, id string) (*Task, error) {
	method := "tasks/cancel"
	if c.Version == V10 {
		method = "CancelTask"
	}
	var t wireTask
	if err := c.call(ctx, method, map[string]any{"id": id}, &t); err != nil {
		return nil, err
	}
	return c.toTask(method, &t)
}

// --- wire shapes -----------------------------------------------------------

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// wirePart holds both versions' part shapes: 0.3 has "kind" and a nested
// "file"; 1.0 is told apart by which member is present.
type wirePart struct {
	Kind string `json:"kind,omitempty"`
	Text string `json:"text,omitempty"`
	// 1.0 file part
	Raw       string `json:"raw,omitempty"`
	Filename  string `json:"filename,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	// 0.3 file part
	File *struct {
		Bytes    string `json:"bytes,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
		Name     string `json:"name,omitempty"`
	} `json:"file,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

type wireMessage struct {
	Kind      string         `json:"kind,omitempty"`
	MessageID string         `json:"messageId"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Role      string         `json:"role"`
	Parts     []wirePart     `json:"parts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type wireTask struct {
	Kind      string `json:"kind,omitempty"`
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string       `json:"state"`
		Message *wireMessage `json:"message,omitempty"`
	} `json:"status"`
	Artifacts []struct {
		Parts []wirePart `json:"parts"`
	} `json:"artifacts,omitempty"`
	History []wireMessage `json:"history,omitempty"`
}

func (c *Client) sendParams03(msg Message) map[string]any {
	parts := []wirePart{{Kind: "text", Text: msg.Text}}
	if f := msg.File; f != nil {
		p := wirePart{Kind: "file"}
		p.File = &struct {
			Bytes    string `json:"bytes,omitempty"`
			MimeType string `json:"mimeType,omitempty"`
			Name     string `json:"name,omitempty"`
		}{Bytes: base64.StdEncoding.EncodeToString(f.Bytes), MimeType: f.MediaType, Name: f.Name}
		parts = append(parts, p)
	}
	return map[string]any{
		"message": wireMessage{
			Kind: "message", MessageID: msg.MessageID, ContextID: msg.ContextID, Role: "user",
			Parts: parts, Metadata: msg.Metadata,
		},
		"configuration": map[string]any{"blocking": false},
	}
}

func (c *Client) sendParams10(msg Message) map[string]any {
	parts := []wirePart{{Text: msg.Text, MediaType: "text/plain"}}
	if f := msg.File; f != nil {
		parts = append(parts, wirePart{Raw: base64.StdEncoding.EncodeToString(f.Bytes), Filename: f.Name, MediaType: f.MediaType})
	}
	return map[string]any{
		"message": wireMessage{
			MessageID: msg.MessageID, ContextID: msg.ContextID, Role: "ROLE_USER",
			Parts: parts, Metadata: msg.Metadata,
		},
		// 1.0 blocks by default; returnImmediately asks for the task at once.
		"configuration": map[string]any{"returnImmediately": true},
	}
}

// decodeSendResult accepts a task or a message: 0.3 tells them apart by
// "kind", 1.0 wraps them in {"task": ...} or {"message": ...}.
func (c *Client) decodeSendResult(method string, raw json.RawMessage) (*Task, error) {
	if c.Version == V10 {
		var wrapped struct {
			Task    *wireTask    `json:"task"`
			Message *wireMessage `json:"message"`
		}
		if err := json.Unmarshal(raw, &wrapped); err != nil {
			return nil, &Error{Op: method, Err: fmt.Errorf("decoding the result: %w", err)}
		}
		switch {
		case wrapped.Task != nil:
			return c.toTask(method, wrapped.Task)
		case wrapped.Message != nil:
			return messageAsTask(wrapped.Message), nil
		}
		return nil, &Error{Op: method, Err: errors.New("the result has neither a task nor a message")}
	}
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, &Error{Op: method, Err: fmt.Errorf("decoding the result: %w", err)}
	}
	if probe.Kind == "message" {
		var m wireMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &Error{Op: method, Err: fmt.Errorf("decoding the message: %w", err)}
		}
		return messageAsTask(&m), nil
	}
	var t wireTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, &Error{Op: method, Err: fmt.Errorf("decoding the task: %w", err)}
	}
	return c.toTask(method, &t)
}

func messageAsTask(m *wireMessage) *Task {
	return &Task{ID: m.TaskID, ContextID: m.ContextID, State: StateCompleted, Output: partsText(m.Parts)}
}

func (c *Client) toTask(method string, t *wireTask) (*Task, error) {
	if t.ID == "" {
		return nil, &Error{Op: method, Err: errors.New("the agent returned a task without an id")}
	}
	out := &Task{ID: t.ID, ContextID: t.ContextID, State: parseState(t.Status.State)}
	if t.Status.Message != nil {
		out.StatusText = partsText(t.Status.Message.Parts)
	}
	var texts []string
	for _, a := range t.Artifacts {
		if s := partsText(a.Parts); s != "" {
			texts = append(texts, s)
		}
	}
	out.Output = strings.Join(texts, "\n")
	if out.Output == "" {
		out.Output = out.StatusText
	}
	return out, nil
}

// parseState maps both versions' spellings to State.
func parseState(s string) State {
	s = strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_"))
	s = strings.ReplaceAll(s, "_", "-")
	switch st := State(s); st {
	case StateSubmitted, StateWorking, StateCompleted, StateFailed, StateCanceled, StateRejected, StateInputRequired, StateAuthRequired:
		return st
	case "cancelled":
		return StateCanceled
	}
	return StateUnknown
}

func partsText(parts []wirePart) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// call makes one JSON-RPC call and decodes its result into out.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: c.ids.Add(1), Method: method, Params: params})
	if err != nil {
		return &Error{Op: method, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return &Error{Op: method, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.Version == V10 {
		req.Header.Set("A2A-Version", string(V10))
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
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
