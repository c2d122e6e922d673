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
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorded is one request a recordingServer got.
type recorded struct {
	method, path string
	header       http.Header
	body         string
}

// recordingServer records every request and answers with answer.
type recordingServer struct {
	*httptest.Server
	mu  sync.Mutex
	got []recorded
}

func newRecordingServer(t *testing.T, answer func(r recorded) (int, string)) *recordingServer {
	t.Helper()
	s := &recordingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := recorded{method: r.Method, path: r.URL.EscapedPath(), header: r.Header.Clone(), body: string(body)}
		s.mu.Lock()
		s.got = append(s.got, rec)
		s.mu.Unlock()
		status, out := answer(rec)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(out))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *recordingServer) last() recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[len(s.got)-1]
}

const wireTaskJSON = `{"id":"a/b c","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}`

// TestHTTPJSONRequests: the method, path, headers and body of each
// operation, with and without a tenant, task ids escaped.
func TestHTTPJSONRequests(t *testing.T) {
	srv := newRecordingServer(t, func(r recorded) (int, string) {
		if strings.HasSuffix(r.path, "/message:send") {
			return 200, `{"task":` + wireTaskJSON + `}`
		}
		return 200, wireTaskJSON
	})
	for _, tc := range []struct{ tenant, prefix string }{
		{"", "/base"},
		{"projects/p 1/locations/l", "/base/projects/p%201/locations/l"},
	} {
		c := &Client{URL: srv.URL + "/base/", Version: V10, Binding: BindingHTTPJSON, Tenant: tc.tenant}
		if _, err := c.SendMessage(t.Context(), Message{MessageID: "m1", ContextID: "c1", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		send := srv.last()
		var body map[string]any
		if err := json.Unmarshal([]byte(send.body), &body); err != nil {
			t.Fatal(err)
		}
		cfg, _ := body["configuration"].(map[string]any)
		msg, _ := body["message"].(map[string]any)
		if send.method != http.MethodPost || send.path != tc.prefix+"/message:send" || cfg["returnImmediately"] != true ||
			msg["messageId"] != "m1" || body["tenant"] != nil || body["jsonrpc"] != nil || len(body) != 2 {
			t.Errorf("send: %s %s %s", send.method, send.path, send.body)
		}
		if send.header.Get("A2A-Version") != "1.0" || send.header.Get("Content-Type") != "application/json" || send.header.Get("Accept") != "application/json" {
			t.Errorf("send headers %v", send.header)
		}
		if _, err := c.GetTask(t.Context(), "a/b c"); err != nil {
			t.Fatal(err)
		}
		if get := srv.last(); get.method != http.MethodGet || get.path != tc.prefix+"/tasks/a%2Fb%20c" || get.body != "" || get.header.Get("Content-Type") != "" {
			t.Errorf("get: %s %s %q %v", get.method, get.path, get.body, get.header)
		}
		if _, err := c.CancelTask(t.Context(), "a/b c"); err != nil {
			t.Fatal(err)
		}
		if cancel := srv.last(); cancel.method != http.MethodPost || cancel.path != tc.prefix+"/tasks/a%2Fb%20c:cancel" || cancel.body != "{}" {
			t.Errorf("cancel: %s %s %q", cancel.method, cancel.path, cancel.body)
		}
	}
}

// TestJSONRPCTenant: a tenant is a member of every call's params.
func TestJSONRPCTenant(t *testing.T) {
	srv := newRecordingServer(t, func(r recorded) (int, string) {
		if strings.Contains(r.body, `"SendMessage"`) {
			return 200, `{"jsonrpc":"2.0","id":1,"result":{"task":` + wireTaskJSON + `}}`
		}
		return 200, `{"jsonrpc":"2.0","id":1,"result":` + wireTaskJSON + `}`
	})
	for _, tenant := range []string{"", "team-a"} {
		c := &Client{URL: srv.URL, Version: V10, Tenant: tenant}
		if _, err := c.SendMessage(t.Context(), Message{MessageID: "m", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		send := srv.last()
		if _, err := c.CancelTask(t.Context(), "t1"); err != nil {
			t.Fatal(err)
		}
		for _, r := range []recorded{send, srv.last()} {
			var req struct {
				Params map[string]any `json:"params"`
			}
			if err := json.Unmarshal([]byte(r.body), &req); err != nil {
				t.Fatal(err)
			}
			if got, has := req.Params["tenant"]; tenant == "" && has || tenant != "" && got != tenant {
				t.Errorf("tenant %q: params %v", tenant, req.Params)
			}
		}
	}
}

// TestWiringRefused: a binding the version has not, or none the client
// speaks, fails every call before anything is sent.
func TestWiringRefused(t *testing.T) {
	srv := newRecordingServer(t, func(recorded) (int, string) { return 500, "" })
	for _, tc := range []struct {
		c    *Client
		want string
	}{
		{&Client{URL: srv.URL, Version: V03, Binding: BindingHTTPJSON}, `a2a tasks/get: the HTTP+JSON binding is A2A 1.0 only, and the protocol version is "0.3"`},
		{&Client{URL: srv.URL, Version: V10, Binding: "GRPC"}, `a2a GetTask: the binding "GRPC" is not one the operator speaks (JSONRPC or HTTP+JSON)`},
	} {
		_, err := tc.c.GetTask(t.Context(), "t")
		if err == nil || err.Error() != tc.want || IsRetryable(err) || IsVersionRefused(err) || IsTransport(err) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	if len(srv.got) != 0 {
		t.Errorf("requests were sent: %v", srv.got)
	}
}
