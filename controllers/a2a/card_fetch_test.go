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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadCardHostile: agents whose card is missing, huge, not JSON,
// elsewhere or out of bounds get an error that says so, retryable when
// asking again may help, after reading no more than it must. The card at
// the origin, which behind a gateway routing by path may be another
// agent's, is read only when the place under the agent has none (404,
// 410): never when that place is down, refuses, redirects or answers
// something else.
func TestReadCardHostile(t *testing.T) {
	const under, origin = "/agents/a" + cardPath, cardPath
	endlessCard, written := endless(200, `{"name":"`)
	elsewhere := newCardServer(t, map[string]http.HandlerFunc{"/card": answer(200, `{"url":"http://x/"}`)})
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/card", http.StatusFound)
	}
	html := answer(200, "<!doctype html><html>an app that answers every path</html>")
	usable := answer(200, `{"url":"http://127.0.0.1:1/","preferredTransport":"JSONRPC"}`)
	hangUp := func(w http.ResponseWriter, _ *http.Request) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
	}
	breakOff := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte(`{"url":`))
	}
	// stopped is the error of a place, {u}, that answered what (say) and
	// was not passed over for the card at the origin.
	stopped := func(what string) string {
		return "no agent card at {u} (" + what + "), and the origin's is read only when that place answers 404 or 410; publish one there, or set spec.a2a.protocolVersion to skip the card"
	}
	onlyUnder := []string{under}

	cases := []struct {
		name      string
		routes    map[string]http.HandlerFunc
		want      *Interface // nil when an error is expected
		retryable bool
		parts     []string // of the error; {u} is the card URL under the agent, {o} at its origin
		asked     []string
	}{
		{name: "endless card", routes: map[string]http.HandlerFunc{under: endlessCard, origin: usable},
			parts: []string{"the agent card at {u} is larger than 1 MiB, more than the operator reads; set spec.a2a.protocolVersion to skip the card"},
			asked: []string{under}},
		{name: "404 at both", asked: []string{under, origin},
			parts: []string{"no agent card at {u} (HTTP 404) nor at {o} (HTTP 404); publish one there, or set spec.a2a.protocolVersion to skip the card"}},
		{name: "410, then the card", routes: map[string]http.HandlerFunc{under: answer(410, "gone"), origin: usable},
			want: &Interface{URL: "http://127.0.0.1:1/", Binding: BindingJSONRPC, Version: V03}, asked: []string{under, origin}},
		{name: "404, then too many requests", routes: map[string]http.HandlerFunc{origin: answer(429, "")}, retryable: true,
			parts: []string{"no agent card at {u} (HTTP 404) nor at {o} (HTTP 429); publish one there"}, asked: []string{under, origin}},
		{name: "busy", routes: map[string]http.HandlerFunc{under: answer(503, "busy"), origin: usable}, retryable: true,
			parts: []string{stopped("HTTP 503")}, asked: onlyUnder},
		{name: "too many requests", routes: map[string]http.HandlerFunc{under: answer(429, ""), origin: usable}, retryable: true,
			parts: []string{stopped("HTTP 429")}, asked: onlyUnder},
		{name: "unauthorized", routes: map[string]http.HandlerFunc{under: answer(401, ""), origin: usable},
			parts: []string{stopped("HTTP 401")}, asked: onlyUnder},
		{name: "forbidden", routes: map[string]http.HandlerFunc{under: answer(403, ""), origin: usable},
			parts: []string{stopped("HTTP 403")}, asked: onlyUnder},
		{name: "redirect", routes: map[string]http.HandlerFunc{under: redirect, origin: usable},
			parts: []string{stopped("HTTP 302, a redirect to " + elsewhere.URL + "/card, not followed")}, asked: onlyUnder},
		{name: "an app's page", routes: map[string]http.HandlerFunc{under: html, origin: usable},
			parts: []string{stopped("HTTP 200, not a JSON object")}, asked: onlyUnder},
		{name: "connection closed", routes: map[string]http.HandlerFunc{under: hangUp, origin: usable}, retryable: true,
			parts: []string{"no agent card at {u} (", "), and the origin's is read only when that place answers 404 or 410;"}, asked: onlyUnder},
		{name: "body broken off", routes: map[string]http.HandlerFunc{under: breakOff, origin: usable}, retryable: true,
			parts: []string{stopped("HTTP 200, but reading it failed: unexpected EOF")}, asked: onlyUnder},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCardServer(t, tc.routes)
			got, err := ReadCard(t.Context(), cardClient(nil), nil, srv.URL+"/agents/a")
			if tc.want != nil {
				if err != nil || got != *tc.want {
					t.Errorf("ReadCard = %+v, %v; want %+v", got, err, *tc.want)
				}
			} else {
				r := strings.NewReplacer("{u}", srv.URL+under, "{o}", srv.URL+origin)
				parts := make([]string, len(tc.parts))
				for i, p := range tc.parts {
					parts[i] = r.Replace(p)
				}
				checkCardError(t, err, tc.retryable, parts...)
			}
			if asked := srv.asked(); fmt.Sprint(asked) != fmt.Sprint(tc.asked) {
				t.Errorf("asked for %v, want %v", asked, tc.asked)
			}
		})
	}
	if asked := elsewhere.asked(); len(asked) != 0 {
		t.Errorf("the redirect was followed to %v", asked)
	}
	if n := written.Load(); n > maxWritten {
		t.Errorf("the endless card had %d bytes written before the client hung up", n)
	}
}

// TestReadCardEgress: a card's host is checked by the allow list, by name
// before anything is sent and by address when dialed; an agent that does
// not answer may answer later.
func TestReadCardEgress(t *testing.T) {
	srv := newCardServer(t, nil)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	namesOnly, err := NewAllowList([]string{"agents.example"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	otherCIDR, err := NewAllowList(nil, []string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	// The client's dialer and ReadCard's own check each refuse: the first
	// case passes ReadCard a client without the list.
	cases := []struct {
		name, url string
		hc        *http.Client
		allow     *AllowList
		retryable bool
		part      string
	}{
		{"refused by name", srv.URL + "/a/", cardClient(nil), namesOnly, false,
			"the agent card at " + srv.URL + "/a" + cardPath + ` was not read: the operator may not connect to agent host "127.0.0.1"`},
		{"refused when dialed", "http://localhost:" + port + "/a/", cardClient(otherCIDR), otherCIDR, false,
			`was not read: the operator may not connect to agent host "localhost" at `},
		{"nothing listening", closed.URL, cardClient(nil), nil, true, "no agent card at " + closed.URL + cardPath + " (dial tcp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCard(t.Context(), tc.hc, tc.allow, tc.url)
			checkCardError(t, err, tc.retryable, tc.part)
		})
	}
	if asked := srv.asked(); len(asked) != 0 {
		t.Errorf("a refused card was asked for: %v", asked)
	}
	_, err = ReadCard(t.Context(), cardClient(nil), nil, "javascript:alert(1)")
	checkCardError(t, err, false, `spec.a2a.url "javascript:alert(1)" is not an absolute http:// or https:// URL`)
}

// TestReadCardManyInterfaces: a card of 1 MiB that lists some 350,000
// empty interfaces costs the operator a few MiB to read, not one
// allocation per entry, and its error lists a few of them.
func TestReadCardManyInterfaces(t *testing.T) {
	entries := func(n int) string { return strings.TrimSuffix(strings.Repeat("{},", n), ",") }
	const n = (maxCardBytes - 128) / 3
	cards := map[string]struct{ card, part string }{
		"1.0 card": {`{"supportedInterfaces":[` + entries(n) + `]}`,
			fmt.Sprintf("it lists: (no binding) (no version) at (no URL), (no binding) (no version) at (no URL), (no binding) (no version) at (no URL), (no binding) (no version) at (no URL), (no binding) (no version) at (no URL) and %d more (only the first 64 of a list are read);", n-5)},
		"0.3 card": {`{"url":"https://agents.example/","preferredTransport":"GRPC","additionalInterfaces":[` + entries(n) + `]}`,
			fmt.Sprintf("it lists: GRPC 0.3 at https://agents.example/, (no binding) 0.3 at (no URL), (no binding) 0.3 at (no URL), (no binding) 0.3 at (no URL), (no binding) 0.3 at (no URL) and %d more (only the first 64 of a list are read);", n+1-5)},
	}
	for name, tc := range cards {
		t.Run(name, func(t *testing.T) {
			card := tc.card
			srv := newCardServer(t, map[string]http.HandlerFunc{cardPath: answer(200, card)})
			_, err := ReadCard(t.Context(), cardClient(nil), nil, srv.URL)
			checkCardError(t, err, false, tc.part)
			alloc := testing.Benchmark(func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					_, _ = ReadCard(t.Context(), cardClient(nil), nil, srv.URL)
				}
			}).AllocedBytesPerOp()
			t.Logf("reading a card of %d bytes allocated %d bytes", len(card), alloc)
			if alloc > 8<<20 {
				t.Errorf("reading a card of %d bytes allocated %d bytes, want at most 8 MiB", len(card), alloc)
			}
		})
	}
}
