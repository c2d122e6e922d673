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
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/hookrun/hookrun/test/a2apeers"
)

// TestV10Wire holds the 1.0 client's JSON-RPC to the 1.0 specification's
// wire: the SDK's 1.0 peer, checking each request strictly
// (a2apeers.StrictWire: A2A-Version 1.0, role ROLE_USER, no kind on a
// message or part, only 1.0's configuration members), takes a send with
// a file and metadata that does not block, its task polled to its end,
// tasks that fail, ask for input and are canceled; a 0.3 client is refused.
func TestV10Wire(t *testing.T) {
	peer := a2apeers.V1JSONRPC(a2apeers.StrictWire())
	t.Cleanup(peer.Close)
	c := &Client{URL: peer.URL, Version: V10}

	task, err := c.SendMessage(t.Context(), Message{
		MessageID: "uid", ContextID: "ctx-9", Text: "hello",
		File:     &File{Name: "body", MediaType: "application/octet-stream", Bytes: []byte{0xc3, 0x28}},
		Metadata: map[string]any{"k": "v"},
	})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if task.State != StateSubmitted || task.ContextID != "ctx-9" {
		t.Errorf("send result %+v, want submitted in ctx-9", task)
	}
	done := waitFor(t, c, task.ID)
	if done.State != StateCompleted || done.Output != "echo: hello" {
		t.Errorf("completed task %+v", done)
	}
	got := peer.Messages()
	if len(got) != 1 || len(got[0].Files) != 1 || !reflect.DeepEqual(got[0].Files[0], a2apeers.File{Name: "body", MediaType: "application/octet-stream", Bytes: []byte{0xc3, 0x28}}) {
		t.Errorf("peer got %+v, want the file body's two bytes", got)
	}
	var sent struct {
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(peer.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := sent.Params["configuration"].(map[string]any); cfg["returnImmediately"] != true || cfg["blocking"] != nil {
		t.Errorf("SendMessage configuration %v, want returnImmediately true (1.0 has no blocking field)", sent.Params["configuration"])
	}
	msg, _ := sent.Params["message"].(map[string]any)
	if meta, _ := msg["metadata"].(map[string]any); msg["messageId"] != "uid" || meta["k"] != "v" {
		t.Errorf("message %v lacks messageId or metadata", msg)
	}

	for text, want := range map[string]*Task{
		"fail":  {State: StateFailed, StatusText: a2apeers.FailText},
		"input": {State: StateInputRequired, StatusText: a2apeers.InputText},
	} {
		task, err := c.SendMessage(t.Context(), Message{MessageID: text, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		got := waitFor(t, c, task.ID)
		if got.State != want.State || got.StatusText != want.StatusText {
			t.Errorf("%s: %+v, want %s with the status message", text, got, want.State)
		}
	}
	hung, err := c.SendMessage(t.Context(), Message{MessageID: "hang", Text: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelTask(t.Context(), hung.ID); err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if got := waitFor(t, c, hung.ID); got.State != StateCanceled {
		t.Errorf("canceled task is %s", got.State)
	}

	// The same peer refuses a 0.3 client: it sends no A2A-Version.
	old := &Client{URL: peer.URL, Version: V03}
	if _, err := old.SendMessage(t.Context(), Message{MessageID: "x", Text: "hi"}); err == nil || IsRetryable(err) {
		t.Errorf("0.3 client against a 1.0 server: %v, want a final error", err)
	}
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]State{
		"completed": StateCompleted, "TASK_STATE_COMPLETED": StateCompleted,
		"input-required": StateInputRequired, "TASK_STATE_INPUT_REQUIRED": StateInputRequired,
		"auth-required": StateAuthRequired, "TASK_STATE_AUTH_REQUIRED": StateAuthRequired,
		"canceled": StateCanceled, "TASK_STATE_CANCELLED": StateCanceled, "TASK_STATE_REJECTED": StateRejected,
		"working": StateWorking, "TASK_STATE_SUBMITTED": StateSubmitted, "": StateUnknown, "TASK_STATE_UNSPECIFIED": StateUnknown,
	} {
		if got := parseState(in); got != want {
			t.Errorf("parseState(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorClassification(t *testing.T) {
	status := func(code int, body string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}))
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	hangup := l.Addr().String()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	defer func() { _ = l.Close() }()

	cases := []struct {
		name      string
		url       string
		retryable bool
		contains  string
	}{
		{"503", status(503, "busy").URL, true, "HTTP 503"},
		{"500", status(500, "").URL, true, "HTTP 500"},
		{"429", status(429, "slow down").URL, true, "HTTP 429"},
		{"401", status(401, "no").URL, false, "HTTP 401"},
		{"404", status(404, "").URL, false, "HTTP 404"},
		{"not JSON", status(200, "<html>").URL, false, "not JSON-RPC"},
		{"JSON-RPC error", status(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`).URL, false, "JSON-RPC error -32603"},
		{"no result", status(200, `{"jsonrpc":"2.0","id":1}`).URL, false, "no result"},
		{"connection refused", closedURL, true, "connect"},
		// The transport reports a hang-up as EOF or as "server closed idle
		// connection", depending on when it notices: either is retryable.
		{"connection closed", "http://" + hangup, true, "a2a GetTask: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{URL: tc.url, Version: V10}
			_, err := c.GetTask(t.Context(), "t")
			if err == nil {
				t.Fatal("no error")
			}
			if IsRetryable(err) != tc.retryable || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("err %q retryable=%v, want retryable=%v containing %q", err, IsRetryable(err), tc.retryable, tc.contains)
			}
		})
	}
}
