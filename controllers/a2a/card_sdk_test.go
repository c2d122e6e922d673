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
	"strings"
	"testing"
	"time"

	"github.com/hookrun/hookrun/test/a2apeers"
)

// cardClient is an HTTP client as the operator passes ReadCard one.
func cardClient(allow *AllowList) *http.Client { return NewHTTPClient(allow, 5*time.Second) }

// TestReadCardSDKPeers: the card of each SDK peer, found under the agent's
// URL or at its origin, leads to an interface that runs a message.
func TestReadCardSDKPeers(t *testing.T) {
	for _, pc := range peerCases {
		t.Run(pc.name, func(t *testing.T) {
			p, _ := startPeer(t, pc)
			want := Interface{URL: p.URL, Binding: pc.binding, Version: pc.version}
			got, err := ReadCard(t.Context(), cardClient(nil), nil, p.URL)
			if err != nil || got != want {
				t.Fatalf("ReadCard = %+v, %v; want %+v", got, err, want)
			}
			c := &Client{URL: got.URL, Binding: got.Binding, Version: got.Version, Tenant: got.Tenant}
			if _, done := sendAndWait(t, c, Message{MessageID: "m", Text: wrapped("via the card")}); done.Output != "echo: via the card" {
				t.Errorf("task %+v", done)
			}

			// The card is not under this URL: the origin's is read next.
			got, err = ReadCard(t.Context(), cardClient(nil), nil, p.URL+"agents/triage/")
			if err != nil || got != want {
				t.Fatalf("ReadCard under a path = %+v, %v; want %+v from the origin", got, err, want)
			}
			var paths []string
			for _, r := range p.Requests() {
				if r.Method == http.MethodGet && strings.HasSuffix(r.Path, cardPath) {
					paths = append(paths, r.Path)
					if r.Header.Get("Accept") != "application/json" || r.Header.Get("Authorization") != "" {
						t.Errorf("card request headers %v: want Accept: application/json and no token", r.Header)
					}
				}
			}
			wantPaths := []string{cardPath, "/agents/triage" + cardPath, cardPath}
			if fmt.Sprint(paths) != fmt.Sprint(wantPaths) {
				t.Errorf("card requests %v, want %v", paths, wantPaths)
			}
		})
	}
}

// TestReadCardTenant: a tenant listed in a 1.0 card reaches the agent
// through either binding.
func TestReadCardTenant(t *testing.T) {
	for _, pc := range peerCases[:2] {
		t.Run(pc.name, func(t *testing.T) {
			p, _ := startPeer(t, pc, a2apeers.WithTenant("team-a"))
			iface, err := ReadCard(t.Context(), cardClient(nil), nil, p.URL)
			if err != nil || iface.Tenant != "team-a" {
				t.Fatalf("ReadCard = %+v, %v; want tenant team-a", iface, err)
			}
			c := &Client{URL: iface.URL, Binding: iface.Binding, Version: iface.Version, Tenant: iface.Tenant}
			if _, done := sendAndWait(t, c, Message{MessageID: "m", Text: wrapped("tenant")}); done.State != StateCompleted {
				t.Errorf("task %+v", done)
			}
			if got := p.Messages(); len(got) != 1 || got[0].Tenant != "team-a" {
				t.Errorf("peer got %+v, want tenant team-a", got)
			}
			if pc.binding != BindingHTTPJSON {
				return
			}
			for _, r := range p.Requests() {
				if !strings.HasSuffix(r.Path, cardPath) && !strings.HasPrefix(r.Path, "/team-a/") {
					t.Errorf("%s %s: want the tenant's path", r.Method, r.Path)
				}
			}
		})
	}
}

// TestReadCardOrder: the first interface the client speaks, in the card's
// order, among others it does not, in 1.0 and 0.3 cards.
func TestReadCardOrder(t *testing.T) {
	cases := []struct {
		name  string
		start func(...a2apeers.Option) *a2apeers.Peer
		card  string // %[1]s is the peer's URL
		want  Interface
	}{
		{"1.0 card", a2apeers.V1HTTPJSON, `{"supportedInterfaces":[
			{"url":"https://grpc.example/","protocolBinding":"GRPC","protocolVersion":"1.0"},
			{"url":"https://rpc.example/","protocolBinding":"JSONRPC","protocolVersion":"2.0"},
			{"url":"https://rest.example/","protocolBinding":"HTTP+JSON","protocolVersion":"0.3"},
			{"url":%[1]q,"protocolBinding":"HTTP+JSON","protocolVersion":"1.0.1"},
			{"url":%[1]q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
			Interface{Binding: BindingHTTPJSON, Version: V10}},
		{"0.3 card", a2apeers.V03, `{"protocolVersion":"0.3.0","url":"https://grpc.example/","preferredTransport":"GRPC",
			"additionalInterfaces":[{"url":"https://grpc.example/","transport":"GRPC"},{"url":%[1]q,"transport":"JSONRPC"}]}`,
			Interface{Binding: BindingJSONRPC, Version: V03}},
		{"0.3 card without a transport", a2apeers.V03, `{"protocolVersion":"0.3.0","url":%[1]q}`,
			Interface{Binding: BindingJSONRPC, Version: V03}},
		{"both shapes: 1.0's wins", a2apeers.V1JSONRPC, `{"protocolVersion":"0.3.0","url":"https://old.example/",
			"supportedInterfaces":[{"url":%[1]q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
			Interface{Binding: BindingJSONRPC, Version: V10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.start(a2apeers.WithCard(func(url string) []byte { return fmt.Appendf(nil, tc.card, url) }))
			t.Cleanup(p.Close)
			want := tc.want
			want.URL = p.URL
			got, err := ReadCard(t.Context(), cardClient(nil), nil, p.URL)
			if err != nil || got != want {
				t.Fatalf("ReadCard = %+v, %v; want %+v", got, err, want)
			}
			c := &Client{URL: got.URL, Binding: got.Binding, Version: got.Version}
			if _, done := sendAndWait(t, c, Message{MessageID: "m", Text: wrapped("picked")}); done.Output != "echo: picked" {
				t.Errorf("task %+v", done)
			}
		})
	}
}

// TestReadCardKagent: the kagent peer, served as kagent's controller serves
// an Agent since its move to A2A 1.0, is found through the card under its
// path (the origin has none), and takes JSON-RPC 1.0 there; hookrun's 0.3,
// which carries no A2A-Version header, is refused with HTTP 400.
func TestReadCardKagent(t *testing.T) {
	p := a2apeers.Kagent("kagent", "k8s-agent")
	t.Cleanup(p.Close)
	if !strings.HasSuffix(p.URL, "/api/a2a/kagent/k8s-agent/") {
		t.Fatalf("URL %s: want kagent's path", p.URL)
	}
	want := Interface{URL: p.URL, Binding: BindingJSONRPC, Version: V10}
	got, err := ReadCard(t.Context(), cardClient(nil), nil, p.URL)
	if err != nil || got != want {
		t.Fatalf("ReadCard = %+v, %v; want %+v", got, err, want)
	}
	c := &Client{URL: got.URL, Binding: got.Binding, Version: got.Version}
	if _, done := sendAndWait(t, c, Message{MessageID: "m", Text: wrapped("via kagent")}); done.Output != "echo: via kagent" {
		t.Errorf("task %+v", done)
	}

	origin := strings.TrimSuffix(p.URL, "api/a2a/kagent/k8s-agent/")
	if got, err := ReadCard(t.Context(), cardClient(nil), nil, origin); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("ReadCard at the origin = %+v, %v; want no card (404)", got, err)
	}

	_, err = (&Client{URL: p.URL, Version: V03}).SendMessage(t.Context(), Message{MessageID: "m03", Text: "hi"})
	if err == nil || !strings.Contains(err.Error(), "400") || IsRetryable(err) {
		t.Errorf("0.3 to kagent: %v, want a final HTTP 400", err)
	}
}
