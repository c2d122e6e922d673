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
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewAllowList(t *testing.T) {
	cases := []struct {
		name         string
		hosts, cidrs []string
		wantErr      string // "" for none
		wantNil      bool
	}{
		{name: "empty is nil", wantNil: true},
		{name: "names and CIDRs", hosts: []string{"agent.example.com", "*.agents.example.com", "Triage.Team-A.svc."}, cidrs: []string{"10.0.0.0/8", "2001:db8::/32", "192.0.2.7"}},
		{name: "IP as a host", hosts: []string{"10.0.0.1"}, wantErr: "list addresses as CIDRs"},
		{name: "IPv6 as a host", hosts: []string{"[::1]"}, wantErr: "list addresses as CIDRs"},
		{name: "host with a port", hosts: []string{"agent.example.com:8080"}, wantErr: "not a host name"},
		{name: "host with a path", hosts: []string{"agent.example.com/a2a"}, wantErr: "not a host name"},
		{name: "wildcard inside", hosts: []string{"agent.*.example.com"}, wantErr: "not a host name"},
		{name: "bare wildcard", hosts: []string{"*"}, wantErr: "not a host name"},
		{name: "empty label", hosts: []string{"agent..example.com"}, wantErr: "not a host name"},
		{name: "not a CIDR", cidrs: []string{"10.0.0.0/33"}, wantErr: "not a CIDR"},
		{name: "a name as a CIDR", cidrs: []string{"example.com"}, wantErr: "not a CIDR"},
		{name: "every error at once", hosts: []string{"a b"}, cidrs: []string{"x"}, wantErr: "\"a b\" is not a host name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAllowList(tc.hosts, tc.cidrs)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			case tc.wantErr == "" && tc.wantNil != (a == nil):
				t.Fatalf("list %+v, want nil=%v", a, tc.wantNil)
			}
		})
	}
	if _, err := NewAllowList([]string{"a b"}, []string{"x"}); err == nil || !strings.Contains(err.Error(), `"x" is not a CIDR`) {
		t.Errorf("error %v: want both entries named", err)
	}
}

func TestAllowListMatches(t *testing.T) {
	a, err := NewAllowList([]string{"agent.example.com", "*.agents.example.com", "triage.team-a.svc"},
		[]string{"10.20.0.0/16", "2001:db8::/32", "192.0.2.7"})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []struct {
		host string
		want bool
	}{
		{"agent.example.com", true},
		{"AGENT.Example.COM.", true},
		{"other.example.com", false},
		{"agent.example.com.evil.test", false},
		{"evilagent.example.com", false},
		{"a.agents.example.com", true},
		{"a.b.agents.example.com", true},
		{"agents.example.com", false}, // "*." means subdomains only
		{"xagents.example.com", false},
		{"triage.team-a.svc", true},
		{"triage.team-a.svc.cluster.local", false},
		{"10.20.0.1", false}, // addresses are matched by CIDR, never by name
		{"", false},
	}
	for _, tc := range hosts {
		if got := a.AllowsHost(tc.host); got != tc.want {
			t.Errorf("AllowsHost(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
	addrs := []struct {
		addr string
		want bool
	}{
		{"10.20.0.1", true},
		{"10.20.255.255", true},
		{"10.21.0.1", false},
		{"::ffff:10.20.3.4", true}, // IPv4-mapped IPv6 is the IPv4 address
		{"2001:db8::1", true},
		{"2001:db9::1", false},
		{"192.0.2.7", true},
		{"192.0.2.8", false},
		{"127.0.0.1", false},
		{"fe80::1%eth0", false},
		{"169.254.169.254", false},
	}
	for _, tc := range addrs {
		if got := a.AllowsAddr(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("AllowsAddr(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	var none *AllowList
	if !none.Empty() || !none.AllowsHost("anything") || !none.AllowsAddr(netip.MustParseAddr("127.0.0.1")) {
		t.Error("an empty list must allow every agent")
	}
}

// Refuses is what the Agent's Ready condition says before any run: only
// hosts no connection could be allowed to.
func TestAllowListRefuses(t *testing.T) {
	withCIDRs, err := NewAllowList([]string{"*.agents.example.com"}, []string{"10.20.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	namesOnly, err := NewAllowList([]string{"*.agents.example.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		list *AllowList
		host string
		want bool
	}{
		{withCIDRs, "a.agents.example.com", false},
		{withCIDRs, "10.20.1.1", false},
		{withCIDRs, "10.21.1.1", true},
		{withCIDRs, "[2001:db8::1]", true},
		{withCIDRs, "kubernetes.default.svc", false}, // may resolve into 10.20.0.0/16: the dialer decides
		{namesOnly, "kubernetes.default.svc", true},
		{namesOnly, "10.20.1.1", true},
		{nil, "169.254.169.254", false},
	}
	for _, tc := range cases {
		if got := tc.list.Refuses(tc.host); got != tc.want {
			t.Errorf("Refuses(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

// countingServer is a loopback agent that counts the connections it
// accepted and the requests it saw.
type countingServer struct {
	*httptest.Server
	conns, requests atomic.Int32
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func answerTask(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"working"}}}`))
}

// A redirect is an error naming it, and its target is never contacted,
// whatever the HTTP client given to the Client would do.
func TestRedirectIsNotFollowed(t *testing.T) {
	target := newCountingServer(t, answerTask)
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/a2a", code)
		})
		for name, hc := range map[string]*http.Client{
			"default client":         nil,
			"operator's client":      NewHTTPClient(nil, time.Second),
			"client that follows":    {Timeout: time.Second},
			"allow-listed transport": NewHTTPClient(mustAllow(t, nil, []string{"127.0.0.0/8", "::1/128"}), time.Second),
		} {
			c := &Client{URL: redirector.URL, Version: V03, HTTP: hc}
			_, err := c.SendMessage(t.Context(), Message{MessageID: "m", Text: "hi"})
			var e *Error
			if !errors.As(err, &e) || e.StatusCode != code || IsRetryable(err) ||
				!strings.Contains(err.Error(), "redirect, which is not followed") || !strings.Contains(err.Error(), target.URL+"/a2a") {
				t.Errorf("%d, %s: error %v, want a final HTTP %d error naming the redirect and its target", code, name, err, code)
			}
		}
		if redirector.requests.Load() != 4 {
			t.Errorf("%d: the redirecting agent saw %d requests, want 4", code, redirector.requests.Load())
		}
	}
	if n := target.conns.Load(); n != 0 {
		t.Errorf("the redirect target was connected to %d times, want never", n)
	}
}

func mustAllow(t *testing.T, hosts, cidrs []string) *AllowList {
	t.Helper()
	a, err := NewAllowList(hosts, cidrs)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The allow list is checked when connecting: an agent outside it never sees
// a connection, let alone a request, and the error says why and is final.
func TestAllowListRefusesAtDial(t *testing.T) {
	agent := newCountingServer(t, answerTask)
	_, port, _ := net.SplitHostPort(agent.Listener.Addr().String())
	byIP := agent.URL                          // http://127.0.0.1:port
	byName := "http://localhost:" + port + "/" // resolved by the dialer
	loopback := []string{"127.0.0.0/8", "::1/128"}
	cases := []struct {
		name         string
		url          string
		hosts, cidrs []string
		allowed      bool
	}{
		{"address outside the CIDRs", byIP, nil, []string{"10.0.0.0/8"}, false},
		{"name resolving outside the CIDRs", byName, []string{"agent.example.com"}, []string{"10.0.0.0/8"}, false},
		{"name not listed, no CIDRs", byName, []string{"agent.example.com", "*.example.com"}, nil, false},
		{"address not matched by a name entry", byIP, []string{"localhost"}, nil, false},
		{"address inside a CIDR", byIP, nil, loopback, true},
		{"name resolving inside a CIDR", byName, nil, loopback, true},
		{"name listed", byName, []string{"localhost"}, []string{"10.0.0.0/8"}, true},
		{"no list", byIP, nil, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := agent.conns.Load()
			c := &Client{URL: tc.url, Version: V03, HTTP: NewHTTPClient(mustAllow(t, tc.hosts, tc.cidrs), 5*time.Second)}
			_, err := c.GetTask(t.Context(), "t")
			if tc.allowed {
				if err != nil {
					t.Fatalf("allowed agent: %v", err)
				}
				return
			}
			var refused *NotAllowedError
			if !errors.As(err, &refused) || IsRetryable(err) || !strings.Contains(err.Error(), "not on the operator's agent allow-list") {
				t.Fatalf("error %v, want a final NotAllowedError", err)
			}
			if len(tc.cidrs) > 0 && !netip.MustParseAddr(refused.Addr).IsLoopback() {
				t.Errorf("refused at %q, want the loopback address it resolved to: the CIDRs are checked on the address dialed", refused.Addr)
			}
			if n := agent.conns.Load() - before; n != 0 {
				t.Errorf("the refused agent was connected to %d times", n)
			}
		})
	}
	if agent.requests.Load() != 4 {
		t.Errorf("the agent saw %d requests, want 4 (the allowed cases only)", agent.requests.Load())
	}
}
