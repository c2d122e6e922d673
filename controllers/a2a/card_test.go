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
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestChooseInterface: what a card lists, and what the client makes of it.
func TestChooseInterface(t *testing.T) {
	allow, err := NewAllowList([]string{"agents.example"}, []string{"10.1.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	iface := func(url, binding, version string) string {
		return fmt.Sprintf(`{"url":%q,"protocolBinding":%q,"protocolVersion":%q}`, url, binding, version)
	}
	card := func(ifaces ...string) string { return `{"supportedInterfaces":[` + strings.Join(ifaces, ",") + `]}` }
	cases := []struct {
		name, card string
		want       Interface // zero when an error is expected
		wantErr    []string  // parts of the error
		hidden     string    // not in the error
	}{
		{name: "patch version", card: card(iface("http://agents.example/a2a", "JSONRPC", "1.0.3")),
			want: Interface{URL: "http://agents.example/a2a", Binding: BindingJSONRPC, Version: V10}},
		{name: "0.3 over JSON-RPC in a 1.0 card", card: card(iface("http://10.1.2.3/", "jsonrpc", "0.3.0")),
			want: Interface{URL: "http://10.1.2.3/", Binding: BindingJSONRPC, Version: V03}},
		{name: "tenant", card: `{"supportedInterfaces":[{"url":"https://agents.example/","protocolBinding":"HTTP+JSON","protocolVersion":"1.0","tenant":"t1"}]}`,
			want: Interface{URL: "https://agents.example/", Binding: BindingHTTPJSON, Version: V10, Tenant: "t1"}},
		{name: "refused host passed over", card: card(iface("http://10.2.0.1/", "JSONRPC", "1.0"), iface("http://agents.example/", "HTTP+JSON", "1.0")),
			want: Interface{URL: "http://agents.example/", Binding: BindingHTTPJSON, Version: V10}},
		{name: "nothing spoken", card: card(iface("https://agents.example/g", "GRPC", "1.0"), iface("https://agents.example/r", "JSONRPC", "2.0"), iface("https://agents.example/h", "HTTP+JSON", "0.3")),
			wantErr: []string{"lists no interface the operator speaks (A2A 1.0 JSONRPC or HTTP+JSON, or 0.3 JSONRPC); it lists: GRPC 1.0 at https://agents.example/g, JSONRPC 2.0 at https://agents.example/r, HTTP+JSON 0.3 at https://agents.example/h; set spec.a2a.protocolVersion to skip the card"}},
		{name: "no version, no binding", card: card(iface("https://agents.example/", "", "")),
			wantErr: []string{"it lists: (no binding) (no version) at https://agents.example/;"}},
		{name: "URLs the client may not use", card: card(
			iface("javascript:alert(1)", "JSONRPC", "1.0"), iface("/a2a", "JSONRPC", "1.0"), iface("//agents.example/a2a", "JSONRPC", "1.0"),
			iface("ftp://agents.example/", "JSONRPC", "1.0"), iface("http://192.0.2.1/", "JSONRPC", "1.0"),
			iface("http://agents.example/"+strings.Repeat("a", 2048), "JSONRPC", "1.0")),
			wantErr: []string{
				"lists no interface the operator speaks at a URL it may use",
				"JSONRPC 1.0 at javascript:alert(1) (not an absolute http(s) URL)",
				"JSONRPC 1.0 at /a2a (not an absolute http(s) URL)",
				"JSONRPC 1.0 at //agents.example/a2a (not an absolute http(s) URL)",
				"JSONRPC 1.0 at ftp://agents.example/ (not an absolute http(s) URL)",
				"JSONRPC 1.0 at http://192.0.2.1/ (its host is not on the operator's agent allow-list)",
				"and 1 more;",
			}},
		{name: "tenant too long", card: `{"supportedInterfaces":[{"url":"https://agents.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"` + strings.Repeat("t", 257) + `"}]}`,
			wantErr: []string{"(a tenant longer than 256 bytes)"}},
		{name: "hostile text", card: card(`{"url":"http://agents.example/\n\u202eevil` + strings.Repeat("x", 300) + `","protocolBinding":"GRPC\u0007","protocolVersion":"1.0"}`),
			wantErr: []string{"it lists: GRPC 1.0 at http://agents.example/ evil", TruncatedMark}},
		{name: "text that would reach status unsanitized passed over", card: card(
			iface("http://agents.example/\u202eevil", "JSONRPC", "1.0"), iface("http://agents.example/a\u200bb", "JSONRPC", "1.0"),
			`{"url":"https://agents.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"t\u202e1"}`,
			iface("http://agents.example/ok", "JSONRPC", "1.0")),
			want: Interface{URL: "http://agents.example/ok", Binding: BindingJSONRPC, Version: V10}},
		{name: "text that would reach status unsanitized", card: card(
			iface("http://agents.example/\u202eevil", "JSONRPC", "1.0"), iface("http://agents.example/a\u200bb", "JSONRPC", "1.0"),
			iface("http://agents.example/a b", "JSONRPC", "1.0"), "{\"url\":\"http://agents.example/\xff\",\"protocolBinding\":\"JSONRPC\",\"protocolVersion\":\"1.0\"}",
			`{"url":"https://agents.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"t\u00ad1"}`),
			wantErr: []string{
				"lists no interface the operator speaks at a URL it may use",
				"JSONRPC 1.0 at http://agents.example/ evil (a URL with white space, a control or format character, or invalid UTF-8)",
				"JSONRPC 1.0 at http://agents.example/a b (a URL with white space, a control or format character, or invalid UTF-8)",
				"JSONRPC 1.0 at http://agents.example/a b (a URL with white space, a control or format character, or invalid UTF-8), JSONRPC 1.0 at http://agents.example/\ufffd (a URL with",
				"JSONRPC 1.0 at https://agents.example/ (a tenant with white space, a control or format character, or invalid UTF-8)",
			}},
		{name: "user info", card: card(iface("https://bot:s3cret@agents.example/", "JSONRPC", "1.0"), iface("https://s3cret@agents.example/", "HTTP+JSON", "1.0")),
			wantErr: []string{"JSONRPC 1.0 at https://xxxxx@agents.example/ (a URL with user info (user:password@); a card is public, put no credentials in it), HTTP+JSON 1.0 at https://xxxxx@agents.example/ (a URL with user info"},
			hidden:  "s3cret"},
		{name: "no interfaces", card: `{"name":"x"}`, wantErr: []string{"lists no interfaces (1.0's supportedInterfaces, or 0.3's url)"}},
		{name: "0.3 card of another transport", card: `{"url":"https://agents.example/","preferredTransport":"GRPC"}`,
			wantErr: []string{"it lists: GRPC 0.3 at https://agents.example/;"}},
		{name: "not a card", card: `{"supportedInterfaces":"all of them"}`, wantErr: []string{"is not an agent card: json: cannot unmarshal"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseInterface("https://agents.example/card", []byte(tc.card), allow)
			if len(tc.wantErr) == 0 {
				if err != nil || got != tc.want {
					t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %+v, want an error", got)
			}
			checkCardError(t, err, false, append(tc.wantErr, "the agent card at https://agents.example/card ")...)
			if tc.hidden != "" && strings.Contains(err.Error(), tc.hidden) {
				t.Errorf("error %q shows %q", err, tc.hidden)
			}
		})
	}
}

// checkCardError checks that err is a one-line *CardError, retryable or
// not, containing each of parts.
func checkCardError(t *testing.T, err error, retryable bool, parts ...string) {
	t.Helper()
	var ce *CardError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want a *CardError", err, err)
	}
	msg := ce.Error()
	if strings.ContainsAny(msg, "\n\r\t\u202e\a") || len(msg) > 1500 {
		t.Errorf("error of %d bytes is not one short line: %q", len(msg), msg)
	}
	if IsRetryable(err) != retryable {
		t.Errorf("error %q retryable=%v, want %v", msg, IsRetryable(err), retryable)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q lacks %q", msg, p)
		}
	}
}

// cardServer answers each path with its handler (404 otherwise) and
// records the paths asked for.
type cardServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newCardServer(t *testing.T, routes map[string]http.HandlerFunc) *cardServer {
	t.Helper()
	s := &cardServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *cardServer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}
