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
// asking again may help, after reading no more than it must.
func TestReadCardHostile(t *testing.T) {
	const under, origin = "/agents/a" + cardPath, cardPath
	endlessCard, written := endless(200, `{"name":"`)
	elsewhere := newCardServer(t, map[string]http.HandlerFunc{"/card": answer(200, `{"url":"http://x/"}`)})
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/card", http.StatusFound)
	}
	html := answer(200, "<!doctype html><html>an app that answers every path</html>")
	usable := answer(200, `{"url":"http://127.0.0.1:1/","preferredTransport":"JSONRPC"}`)

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
		{name: "not JSON at both", routes: map[string]http.HandlerFunc{under: html, origin: answer(200, "[1,2]")},
			parts: []string{"no agent card at {u} (HTTP 200, not a JSON object) nor at {o} (HTTP 200, not a JSON object)"},
			asked: []string{under, origin}},
		{name: "an app's page, then the card", routes: map[string]http.HandlerFunc{under: html, origin: usable},
			want: &Interface{URL: "http://127.0.0.1:1/", Binding: BindingJSONRPC, Version: V03}, asked: []string{under, origin}},
		{name: "busy, then 404", routes: map[string]http.HandlerFunc{under: answer(503, "busy")}, retryable: true,
			parts: []string{"no agent card at {u} (HTTP 503) nor at {o} (HTTP 404)"}, asked: []string{under, origin}},
		{name: "too many requests", routes: map[string]http.HandlerFunc{origin: answer(429, "")}, retryable: true,
			parts: []string{"nor at {o} (HTTP 429)"}, asked: []string{under, origin}},
		{name: "redirect", routes: map[string]http.HandlerFunc{under: redirect},
			parts: []string{"no agent card at {u} (HTTP 302, a redirect to " + elsewhere.URL + "/card, not followed) nor at {o} (HTTP 404)"},
			asked: []string{under, origin}},
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
