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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// v10Server is an A2A 1.0 JSON-RPC peer written from the 1.0 specification:
// methods SendMessage, GetTask, CancelTask; header A2A-Version: 1.0 required;
// parts told apart by member ("text", "raw"); roles ROLE_*; states
// TASK_STATE_*; SendMessage answers {"task": {...}}. Tasks complete on the
// second GetTask, so a client must poll.
type v10Server struct {
	mu    sync.Mutex
	tasks map[string]*v10Task
	seen  []map[string]any // SendMessage params as received
}

type v10Task struct {
	ID, ContextID, State, Output string
	polls                        int
}

func (s *v10Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     any             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	reply := func(result any, code int, msg string) {
		out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if code != 0 {
			out["error"] = map[string]any{"code": code, "message": msg}
		} else {
			out["result"] = result
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		reply(nil, -32700, "parse error")
		return
	}
	if r.Header.Get("A2A-Version") != "1.0" {
		reply(nil, -32009, "VersionNotSupportedError: A2A-Version 1.0 required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Method {
	case "SendMessage":
		var p struct {
			Message struct {
				MessageID string           `json:"messageId"`
				ContextID string           `json:"contextId"`
				Role      string           `json:"role"`
				Kind      string           `json:"kind"`
				Parts     []map[string]any `json:"parts"`
				Metadata  map[string]any   `json:"metadata"`
			} `json:"message"`
			Configuration json.RawMessage `json:"configuration"`
		}
		var generic map[string]any
		_ = json.Unmarshal(req.Params, &generic)
		s.seen = append(s.seen, generic)
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Message.Role != "ROLE_USER" || p.Message.Kind != "" {
			reply(nil, -32602, "invalid params: 1.0 messages have role ROLE_USER and no kind")
			return
		}
		// SendMessageConfiguration has exactly these members in 1.0
		// (0.3's "blocking" is gone; 1.0 blocks unless returnImmediately).
		var cfg struct {
			AcceptedOutputModes        []string        `json:"acceptedOutputModes"`
			TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig"`
			HistoryLength              *int            `json:"historyLength"`
			ReturnImmediately          bool            `json:"returnImmediately"`
		}
		if len(p.Configuration) > 0 {
			dec := json.NewDecoder(strings.NewReader(string(p.Configuration)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&cfg); err != nil {
				reply(nil, -32602, "invalid params: configuration: "+err.Error())
				return
			}
		}
		var out []string
		for _, part := range p.Message.Parts {
			if _, ok := part["kind"]; ok {
				reply(nil, -32602, "invalid params: 1.0 parts have no kind")
				return
			}
			if t, ok := part["text"].(string); ok {
				out = append(out, "echo: "+t)
			}
			if raw, ok := part["raw"].(string); ok {
				b, err := base64.StdEncoding.DecodeString(raw)
				if err != nil {
					reply(nil, -32602, "invalid base64")
					return
				}
				out = append(out, fmt.Sprintf("file %v %v %q", part["filename"], part["mediaType"], b))
			}
		}
		id := fmt.Sprintf("task-%d", len(s.tasks)+1)
		ctx := p.Message.ContextID
		if ctx == "" {
			ctx = "server-ctx"
		}
		state := "TASK_STATE_COMPLETED"
		if len(out) > 0 && out[0] == "echo: fail" {
			state = "TASK_STATE_FAILED"
		}
		if len(out) > 0 && out[0] == "echo: input" {
			state = "TASK_STATE_INPUT_REQUIRED"
		}
		s.tasks[id] = &v10Task{ID: id, ContextID: ctx, State: state, Output: strings.Join(out, "\n")}
		if !cfg.ReturnImmediately {
			// Blocking, the 1.0 default: the answer comes when the task is done.
			s.tasks[id].polls = 2
			reply(map[string]any{"task": s.wire(s.tasks[id], state)}, 0, "")
			return
		}
		reply(map[string]any{"task": s.wire(s.tasks[id], "TASK_STATE_SUBMITTED")}, 0, "")
	case "GetTask", "CancelTask":
		var p struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(req.Params, &p)
		t, ok := s.tasks[p.ID]
		if !ok {
			reply(nil, -32001, "TaskNotFoundError")
			return
		}
		if req.Method == "CancelTask" {
			t.State = "TASK_STATE_CANCELED"
		}
		t.polls++
		state := t.State
		if t.polls < 2 && req.Method == "GetTask" {
			state = "TASK_STATE_WORKING"
		}
		reply(s.wire(t, state), 0, "")
	default:
		reply(nil, -32601, "method not found: "+req.Method)
	}
}

func (s *v10Server) wire(t *v10Task, state string) map[string]any {
	task := map[string]any{"id": t.ID, "contextId": t.ContextID, "status": map[string]any{"state": state}}
	switch state {
	case "TASK_STATE_COMPLETED":
		task["artifacts"] = []any{map[string]any{"artifactId": "a1", "parts": []any{map[string]any{"text": t.Output}}}}
	case "TASK_STATE_FAILED", "TASK_STATE_INPUT_REQUIRED":
		task["status"] = map[string]any{"state": state, "message": map[string]any{
			"messageId": "m", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "needs a human"}},
		}}
	}
	return task
}

func TestV10AgainstSpecServer(t *testing.T) {
	peer := &v10Server{tasks: map[string]*v10Task{}}
	srv := httptest.NewServer(peer)
	defer srv.Close()
	c := &Client{URL: srv.URL, Version: V10}

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
	if done.State != StateCompleted || done.Output != "echo: hello\nfile body application/octet-stream \"\\xc3(\"" {
		t.Errorf("completed task %+v", done)
	}
	sent := peer.seen[0]
	if cfg, _ := sent["configuration"].(map[string]any); cfg["returnImmediately"] != true || cfg["blocking"] != nil {
		t.Errorf("SendMessage configuration %v, want returnImmediately true (1.0 has no blocking field)", sent["configuration"])
	}
	msg, _ := sent["message"].(map[string]any)
	if meta, _ := msg["metadata"].(map[string]any); msg["messageId"] != "uid" || meta["k"] != "v" {
		t.Errorf("message %v lacks messageId or metadata", msg)
	}

	for text, want := range map[string]State{"fail": StateFailed, "input": StateInputRequired} {
		task, err := c.SendMessage(t.Context(), Message{MessageID: text, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		got := waitFor(t, c, task.ID)
		if got.State != want || got.StatusText != "needs a human" {
			t.Errorf("%s: %+v, want %s with the status message", text, got, want)
		}
	}
	canceled, err := c.CancelTask(t.Context(), task.ID)
	if err != nil || canceled.State != StateCanceled {
		t.Errorf("CancelTask: %+v, %v", canceled, err)
	}

	// The same server refuses a 0.3 client: it sends no A2A-Version.
	old := &Client{URL: srv.URL, Version: V03}
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
