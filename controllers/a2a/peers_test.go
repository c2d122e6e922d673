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
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hookrun/hookrun/test/a2apeers"
)

// peerCase is one of the SDK peers and the client settings that speak to it.
type peerCase struct {
	name    string
	start   func(...a2apeers.Option) *a2apeers.Peer
	version Version
	binding Binding
}

var peerCases = []peerCase{
	{"1.0 JSON-RPC", a2apeers.V1JSONRPC, V10, BindingJSONRPC},
	{"1.0 HTTP+JSON", a2apeers.V1HTTPJSON, V10, BindingHTTPJSON},
	{"0.3 JSON-RPC", a2apeers.V03, V03, BindingJSONRPC},
}

// startPeer starts pc's peer for the test and a client that speaks to it.
func startPeer(t *testing.T, pc peerCase, opts ...a2apeers.Option) (*a2apeers.Peer, *Client) {
	t.Helper()
	p := pc.start(opts...)
	t.Cleanup(p.Close)
	return p, &Client{URL: p.URL, Version: pc.version, Binding: pc.binding}
}

// wrapped is a message text as the dispatcher sends it.
func wrapped(payload string) string {
	return "Triage this.\n\n<webhook-payload>\n" + payload + "\n</webhook-payload>"
}

// sendAndWait sends text and polls its task to its end.
func sendAndWait(t *testing.T, c *Client, msg Message) (sent, done *Task) {
	t.Helper()
	sent, err := c.SendMessage(t.Context(), msg)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	return sent, waitFor(t, c, sent.ID)
}

// waitFor polls a task until it is terminal.
func waitFor(t *testing.T, c *Client, id string) *Task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		task, err := c.GetTask(t.Context(), id)
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		if task.State.Terminal() {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s after 10s", id, task.State)
		}
		<-tick.C
	}
}

// TestSDKPeers is the main proof of the client: each of the SDK peers,
// through each binding and version, runs a message to its end, keeps a
// thread, cancels, fails and asks for input.
func TestSDKPeers(t *testing.T) {
	for _, pc := range peerCases {
		t.Run(pc.name, func(t *testing.T) {
			t.Run("output", func(t *testing.T) { testPeerOutput(t, pc) })
			t.Run("thread", func(t *testing.T) { testPeerThread(t, pc) })
			t.Run("cancel", func(t *testing.T) { testPeerCancel(t, pc) })
			t.Run("ends", func(t *testing.T) { testPeerEnds(t, pc) })
		})
	}
}

// testPeerOutput sends a message with a file, metadata, a token, headers
// and a trace, and reads the output once the task completes.
func testPeerOutput(t *testing.T, pc peerCase) {
	p, c := startPeer(t, pc)
	c.Token, c.Headers = "tok", map[string]string{"X-User-Id": "alice"}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(t.Context(), sc)
	sent, err := c.SendMessage(ctx, Message{
		MessageID: "run-uid-1", ContextID: "ctx-1", Text: wrapped("hello world\nsecond line"),
		File:     &File{Name: "webhook-payload", MediaType: "application/octet-stream", Bytes: []byte{0, 0xff, 'x'}},
		Metadata: map[string]any{"https://hookrun.dev/a2a/webhook-run/v1": map[string]any{"runId": "r1"}},
	})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if sent.State != StateSubmitted || sent.ContextID != "ctx-1" {
		t.Errorf("send answered %+v, want the submitted task in ctx-1 (the peer holds it there until answered)", sent)
	}
	done := waitFor(t, c, sent.ID)
	if done.State != StateCompleted || done.Output != "echo: hello world" || done.ContextID != "ctx-1" {
		t.Errorf("task %+v, want completed in ctx-1 with output \"echo: hello world\"", done)
	}

	got := p.Messages()
	if len(got) != 1 {
		t.Fatalf("peer got %d messages, want 1", len(got))
	}
	m := got[0]
	meta, _ := m.Metadata["https://hookrun.dev/a2a/webhook-run/v1"].(map[string]any)
	if m.MessageID != "run-uid-1" || m.ContextID != "ctx-1" || meta["runId"] != "r1" || !strings.Contains(m.Text, "hello world") {
		t.Errorf("peer got %+v", m)
	}
	if len(m.Files) != 1 || m.Files[0].Name != "webhook-payload" || m.Files[0].MediaType != "application/octet-stream" || string(m.Files[0].Bytes) != "\x00\xffx" {
		t.Errorf("peer got files %+v, want webhook-payload's three bytes", m.Files)
	}
	wantVersion := map[Version]string{V10: "1.0", V03: ""}[pc.version]
	reqs := p.Requests()
	for _, r := range reqs {
		h := r.Header
		if h.Get("Authorization") != "Bearer tok" || h.Get("X-User-Id") != "alice" || h.Get("A2A-Version") != wantVersion {
			t.Errorf("%s %s headers %v: want the token, X-User-Id and A2A-Version %q", r.Method, r.Path, h, wantVersion)
		}
	}
	if send := reqs[0].Header.Get("Traceparent"); !strings.Contains(send, sc.TraceID().String()) {
		t.Errorf("the send's traceparent is %q, want the trace of its context", send)
	}
}

// testPeerThread sends two messages in one context: the agent's, kept.
func testPeerThread(t *testing.T, pc peerCase) {
	p, c := startPeer(t, pc)
	_, first := sendAndWait(t, c, Message{MessageID: "m1", Text: wrapped("one")})
	if first.ContextID == "" {
		t.Fatal("the agent gave the first task no context")
	}
	_, second := sendAndWait(t, c, Message{MessageID: "m2", ContextID: first.ContextID, Text: wrapped("two")})
	if second.ContextID != first.ContextID || second.Output != "echo: two" || second.ID == first.ID {
		t.Errorf("second task %+v, want a new task in context %q", second, first.ContextID)
	}
	if got := p.Messages(); len(got) != 2 || got[1].ContextID != first.ContextID {
		t.Errorf("peer got %+v, want the second message in context %q", got, first.ContextID)
	}
}

// testPeerCancel cancels a task that would work forever.
func testPeerCancel(t *testing.T, pc peerCase) {
	_, c := startPeer(t, pc)
	hung, err := c.SendMessage(t.Context(), Message{MessageID: "h", Text: wrapped("hang")})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetTask(t.Context(), hung.ID); err != nil || got.State.Terminal() {
		t.Fatalf("hanging task: %+v, %v; want it open", got, err)
	}
	if _, err := c.CancelTask(t.Context(), hung.ID); err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if got := waitFor(t, c, hung.ID); got.State != StateCanceled {
		t.Errorf("canceled task is %s", got.State)
	}
	_, err = c.GetTask(t.Context(), "no-such-task")
	if err == nil || IsRetryable(err) || IsVersionRefused(err) || IsTransport(err) {
		t.Errorf("unknown task: %v, want a final error that is not a version refusal", err)
	}
}

// testPeerEnds runs tasks that fail and that ask for input.
func testPeerEnds(t *testing.T, pc peerCase) {
	_, c := startPeer(t, pc)
	for payload, want := range map[string]*Task{
		"fail":  {State: StateFailed, StatusText: a2apeers.FailText},
		"input": {State: StateInputRequired, StatusText: a2apeers.InputText},
	} {
		_, got := sendAndWait(t, c, Message{MessageID: payload, Text: wrapped(payload)})
		if got.State != want.State || got.StatusText != want.StatusText {
			t.Errorf("%s: %+v, want %s saying %q", payload, got, want.State, want.StatusText)
		}
	}
}

// TestSDKPeersRefuseVersion: an agent that does not speak the call's
// version or binding is told apart from every other failure.
func TestSDKPeersRefuseVersion(t *testing.T) {
	refusing := map[string]*Client{}
	for _, pc := range peerCases {
		_, c := startPeer(t, pc, a2apeers.RefuseVersion())
		refusing["refusing "+pc.name] = c
	}
	// Real peers of another version or binding refuse on their own.
	v1rpc, v1rest, v03 := a2apeers.V1JSONRPC(), a2apeers.V1HTTPJSON(), a2apeers.V03()
	for _, p := range []*a2apeers.Peer{v1rpc, v1rest, v03} {
		t.Cleanup(p.Close)
	}
	refusing["1.0 JSON-RPC to the 0.3 peer"] = &Client{URL: v03.URL, Version: V10}
	refusing["0.3 to the 1.0 JSON-RPC peer"] = &Client{URL: v1rpc.URL, Version: V03}
	refusing["HTTP+JSON to the 1.0 JSON-RPC peer"] = &Client{URL: v1rpc.URL, Version: V10, Binding: BindingHTTPJSON}
	refusing["HTTP+JSON to the 0.3 peer"] = &Client{URL: v03.URL, Version: V10, Binding: BindingHTTPJSON}
	for name, c := range refusing {
		t.Run(name, func(t *testing.T) {
			_, err := c.SendMessage(t.Context(), Message{MessageID: "m", Text: wrapped("hi")})
			if !IsVersionRefused(err) || IsRetryable(err) || IsTransport(err) {
				t.Errorf("err %v: want a final version refusal", err)
			}
		})
	}
	// JSON-RPC posted to an HTTP+JSON server finds no such path: an error,
	// but no version refusal (only a send over HTTP+JSON says so by status).
	_, err := (&Client{URL: v1rest.URL, Version: V10}).SendMessage(t.Context(), Message{MessageID: "m", Text: "hi"})
	if err == nil || IsVersionRefused(err) {
		t.Errorf("JSON-RPC to the HTTP+JSON peer: %v, want an error that is no version refusal", err)
	}
}
