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
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// restStatusBody is a google.rpc.Status body as a2a-go/v2 writes one.
func restStatusBody(code int, status, reason, message string) string {
	body, err := json.Marshal(map[string]any{"error": map[string]any{
		"code": code, "status": status, "message": message,
		"details": []any{
			map[string]any{"@type": "type.googleapis.com/google.protobuf.Struct", "value": map[string]any{}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"},
		},
	}})
	if err != nil {
		panic(err)
	}
	return string(body)
}

// TestHTTPJSONErrors: an HTTP+JSON error's status, reason and message, and
// whether it is retryable or a version refusal (a send's 404, 405 and 501
// are; a get's 404 is a task the agent does not know).
func TestHTTPJSONErrors(t *testing.T) {
	cases := []struct {
		name       string
		send       bool
		status     int
		body       string
		retryable  bool
		refused    bool
		wantInText string
	}{
		{"version not supported", true, 400, restStatusBody(400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "this version is not supported"),
			false, true, "a2a SendMessage: HTTP 400 VERSION_NOT_SUPPORTED: this version is not supported"},
		{"version not supported on a get", false, 400, restStatusBody(400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "no"),
			false, true, "HTTP 400 VERSION_NOT_SUPPORTED: no"},
		{"send: no such path", true, 404, "404 page not found", false, true, "a2a SendMessage: HTTP 404: the answer was: 404 page not found"},
		{"send: no such method", true, 405, "", false, true, "HTTP 405: empty answer"},
		{"send: not implemented", true, 501, restStatusBody(501, "UNIMPLEMENTED", "METHOD_NOT_FOUND", "method not found"), false, true, "HTTP 501 METHOD_NOT_FOUND"},
		{"get: unknown task", false, 404, restStatusBody(404, "NOT_FOUND", "TASK_NOT_FOUND", "task not found"), false, false, "a2a GetTask: HTTP 404 TASK_NOT_FOUND: task not found"},
		{"busy", false, 503, "busy", true, false, "HTTP 503"},
		{"slow down", true, 429, "", true, false, "HTTP 429"},
		{"internal, hostile message", false, 500, restStatusBody(500, "INTERNAL", "INTERNAL_ERROR", "line one\nline two \u001b[31m"),
			true, false, "HTTP 500 INTERNAL_ERROR: line one line two [31m"},
		{"no result", false, 200, "null", false, false, "the answer has no result"},
		{"redirect", false, 307, "", false, false, "which is not followed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRecordingServer(t, func(recorded) (int, string) { return tc.status, tc.body })
			c := &Client{URL: srv.URL, Version: V10, Binding: BindingHTTPJSON}
			var err error
			if tc.send {
				_, err = c.SendMessage(t.Context(), Message{MessageID: "m", Text: "hi"})
			} else {
				_, err = c.GetTask(t.Context(), "t")
			}
			if err == nil {
				t.Fatal("no error")
			}
			if IsRetryable(err) != tc.retryable || IsVersionRefused(err) != tc.refused || IsTransport(err) || !strings.Contains(err.Error(), tc.wantInText) {
				t.Errorf("err %q retryable=%v refused=%v; want retryable=%v refused=%v containing %q",
					err, IsRetryable(err), IsVersionRefused(err), tc.retryable, tc.refused, tc.wantInText)
			}
		})
	}
}

// endless is a handler that answers status and prefix, then up to 100 MiB
// more, as long as the reader reads; written counts what it wrote.
func endless(status int, prefix string) (h http.HandlerFunc, written *atomic.Int64) {
	written = &atomic.Int64{}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(prefix))
		chunk := []byte(strings.Repeat("a", 64<<10))
		for range 1600 {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}, written
}

// maxWritten bounds what an endless answer may have written when the
// client hung up after its bound: that bound, plus the sockets' buffers.
const maxWritten = 32 << 20

// TestAnswerBounds: a result bigger than the client reads is an error,
// read no further; an error's body is only cut short.
func TestAnswerBounds(t *testing.T) {
	for _, binding := range []Binding{BindingJSONRPC, BindingHTTPJSON} {
		for _, status := range []int{200, 503} {
			h, written := endless(status, `{"jsonrpc":"2.0","result":{"id":"`)
			srv := httptest.NewServer(h)
			_, err := (&Client{URL: srv.URL, Version: V10, Binding: binding}).GetTask(t.Context(), "t")
			srv.Close()
			if status == 200 && (IsRetryable(err) || !strings.Contains(fmt.Sprint(err), "the answer is larger than 8 MiB")) {
				t.Errorf("%s, endless result: %v", binding, err)
			}
			if status == 503 && (!IsRetryable(err) || !strings.Contains(fmt.Sprint(err), "HTTP 503") || !strings.Contains(fmt.Sprint(err), TruncatedMark)) {
				t.Errorf("%s, endless 503: %v", binding, err)
			}
			if n := written.Load(); n > maxWritten {
				t.Errorf("%s, endless %d: the agent wrote %d bytes before the client hung up", binding, status, n)
			}
		}
	}
}

// TestIsTransport: only a call that got no answer is a transport error;
// neither an answer nor an allow-list refusal is.
func TestIsTransport(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	t.Cleanup(answering.Close)
	namesOnly, err := NewAllowList([]string{"agents.example"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	cases := []struct {
		name                 string
		ctx                  context.Context
		c                    *Client
		transport, retryable bool
	}{
		{"connection refused", t.Context(), &Client{URL: closed.URL}, true, true},
		{"connection refused, HTTP+JSON", t.Context(), &Client{URL: closed.URL, Version: V10, Binding: BindingHTTPJSON}, true, true},
		{"call canceled", canceled, &Client{URL: answering.URL}, true, false},
		{"an answer", t.Context(), &Client{URL: answering.URL, Binding: BindingJSONRPC}, false, true},
		{"refused by the allow list", t.Context(), &Client{URL: answering.URL, HTTP: NewHTTPClient(namesOnly, DefaultTimeout)}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.GetTask(tc.ctx, "t")
			if err == nil || IsTransport(err) != tc.transport || IsRetryable(err) != tc.retryable || IsVersionRefused(err) {
				t.Errorf("err %v: transport=%v retryable=%v, want %v and %v", err, IsTransport(err), IsRetryable(err), tc.transport, tc.retryable)
			}
		})
	}
}
