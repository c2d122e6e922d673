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

package ui

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// stubPlugin is a Plugin over a fake client, for the rules that do not
// depend on what the plugin says (the plugin's own tests use the real one).
type stubPlugin struct {
	c      client.WithWatch
	curl   string
	paused []string
}

func (p *stubPlugin) Client() client.WithWatch                     { return p.c }
func (p *stubPlugin) Phase(*agentsv1alpha1.WebhookEndpoint) string { return "Active" }
func (p *stubPlugin) Printable(s string) string                    { return s }
func (p *stubPlugin) Thread(*agentsv1alpha1.AgentRun) string       { return "-" }
func (p *stubPlugin) Payload(context.Context, *agentsv1alpha1.AgentRun) ([]byte, error) {
	return []byte("{}"), nil
}
func (p *stubPlugin) SampleCurl(context.Context, *agentsv1alpha1.WebhookEndpoint) (string, string) {
	return p.curl, ""
}
func (p *stubPlugin) SetPaused(_ context.Context, ns, name string, pause bool) (string, error) {
	p.paused = append(p.paused, name)
	return "asked", nil
}

const testSecret = "s3cret-never-in-a-url"

// served starts the UI on a real loopback HTTP server; it returns the
// server, its base URL and what it logged.
func served(t *testing.T) (*Server, *stubPlugin, string, *bytes.Buffer) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := agentsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "triage"}},
		&agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hooks"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}}},
	).Build()
	plugin := &stubPlugin{c: c, curl: "curl -H 'X-Webhook-Secret: " + testSecret + "' https://hooks.example.com/x"}
	ts := httptest.NewUnstartedServer(nil)
	var log bytes.Buffer
	s, err := New(ts.Listener.Addr().String(), Options{Plugin: plugin, Namespace: "team", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return s, plugin, ts.URL, &log
}

// browser is an HTTP client with cookies that follows no redirect.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, req)
}

// signIn opens the printed address and follows its redirect.
func signIn(t *testing.T, s *Server) *http.Client {
	t.Helper()
	c := browser(t)
	resp, _ := get(t, c, s.URL())
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the printed address: %s", resp.Status)
	}
	return c
}

func TestThePrintedAddressSetsAStrictHttpOnlyCookieAndDropsTheToken(t *testing.T) {
	s, _, base, _ := served(t)
	c := browser(t)
	resp, _ := get(t, c, s.URL())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("the printed address answers %s, Location %q; want 303 to / (the token out of the address)", resp.Status, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Value != s.token {
		t.Fatalf("cookie %+v; want the token, HttpOnly, SameSite=Strict", cookies)
	}
	resp, _ = get(t, c, base+"/")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/namespaces/team/agents" {
		t.Fatalf("/ with the cookie: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	resp, body := get(t, c, base+"/namespaces/team/agents")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "triage") {
		t.Fatalf("the Agents page with the cookie: %s\n%s", resp.Status, body)
	}
	// A token given with another path keeps the rest of the address.
	resp, _ = get(t, browser(t), base+"/namespaces/team/agents?token="+s.token+"&x=1")
	if got := resp.Header.Get("Location"); got != "/namespaces/team/agents?x=1" {
		t.Errorf("Location %q", got)
	}
	// Never to another site: a path of two slashes would be a
	// protocol-relative address.
	for _, path := range []string{"//evil.example/x", "///evil.example", "/\\evil.example"} {
		resp, _ = get(t, browser(t), base+path+"?token="+s.token)
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.Host != "" || strings.HasPrefix(loc.Path, "//") || strings.HasPrefix(resp.Header.Get("Location"), "/\\") {
			t.Errorf("%s: Location %q leaves this UI", path, resp.Header.Get("Location"))
		}
	}
}

func TestEveryRequestNeedsTheToken(t *testing.T) {
	s, _, base, _ := served(t)
	for _, path := range []string{"/", "/namespaces/team/agents", "/namespaces/team/agents/triage", "/static/ui.js",
		"/namespaces/team/agents/triage/events", "/namespaces/team/runs/x", "/?token=wrong", "/?token=" + s.token + "x"} {
		c := browser(t)
		if path == "/namespaces/team/agents" { // a cookie of the right name with another value
			u, _ := url.Parse(base)
			c.Jar.SetCookies(u, []*http.Cookie{{Name: s.cookieName(), Value: "guess"}})
		}
		if resp, _ := get(t, c, base+path); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %s; want 401", path, resp.Status)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/namespaces/team/endpoints/hooks/pause", strings.NewReader("agent=triage"))
	req.Header.Set("Origin", base)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, _ := do(t, browser(t), req); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without the token: %s; want 401", resp.Status)
	}
}

func TestAnotherHostIsRefused(t *testing.T) {
	s, _, base, _ := served(t)
	c := signIn(t, s)
	for _, host := range []string{"evil.example.com", "localhost:" + strings.Split(s.addr, ":")[1], "evil.example.com:" + strings.Split(s.addr, ":")[1]} {
		req, _ := http.NewRequest(http.MethodGet, base+"/namespaces/team/agents", nil)
		req.Host = host
		if resp, _ := do(t, c, req); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %s: %s; want 403", host, resp.Status)
		}
		req, _ = http.NewRequest(http.MethodGet, s.URL(), nil)
		req.Host = host
		if resp, _ := do(t, browser(t), req); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("the printed address with Host %s: %s, cookies %v; want 403 and none", host, resp.Status, resp.Cookies())
		}
	}
}

func TestAChangeNeedsThisOrigin(t *testing.T) {
	s, plugin, base, _ := served(t)
	c := signIn(t, s)
	for _, origin := range []string{"", "http://evil.example.com", "null", "https://" + s.addr, base} {
		req, _ := http.NewRequest(http.MethodPost, base+"/namespaces/team/endpoints/hooks/pause", strings.NewReader("agent=triage"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, body := do(t, c, req)
		want := http.StatusForbidden
		if origin == base {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("POST with Origin %q: %s; want %d\n%s", origin, resp.Status, want, body)
		}
	}
	if len(plugin.paused) != 1 {
		t.Errorf("paused %d times; want once, from this origin", len(plugin.paused))
	}
}

var (
	inlineScript  = regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]`)
	eventHandler  = regexp.MustCompile(`(?i)<[^>]+\son[a-z]+\s*=`)
	styleAttr     = regexp.MustCompile(`(?i)<[^>]+\sstyle\s*=`)
	addressAttrib = regexp.MustCompile(`(?i)(?:href|src|action|data-[a-z]+)="([^"]*)"`)
)

func TestPagesAllowNoInlineScriptAndPutNoSecretInAnAddressOrTheLog(t *testing.T) {
	s, _, base, log := served(t)
	c := signIn(t, s)
	for _, path := range []string{"/namespaces/team/agents", "/namespaces/team/agents/triage", "/namespaces/team/agents/triage/endpoints"} {
		resp, body := get(t, c, base+path)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		for name, re := range map[string]*regexp.Regexp{"an inline script": inlineScript, "an event handler attribute": eventHandler, "a style attribute": styleAttr} {
			if m := re.FindString(body); m != "" {
				t.Errorf("%s has %s: %s", path, name, m)
			}
		}
		for _, m := range addressAttrib.FindAllStringSubmatch(body, -1) {
			if strings.Contains(m[1], testSecret) || strings.Contains(m[1], s.token) {
				t.Errorf("%s puts a secret or the token in an address: %s", path, m[0])
			}
		}
		if path == "/namespaces/team/agents/triage" && !strings.Contains(body, testSecret) {
			t.Errorf("the card does not show the sample call:\n%s", body)
		}
	}
	if strings.Contains(log.String(), testSecret) || strings.Contains(log.String(), s.token) {
		t.Errorf("the log holds a secret or the token:\n%s", log)
	}
}

func (p *stubPlugin) TakeOwnership(_ context.Context, ns, name string) (string, error) {
	p.paused = append(p.paused, name)
	return "asked", nil
}

func (p *stubPlugin) Delete(context.Context, string, string) (string, error) { return "deleted", nil }

func (p *stubPlugin) Rotate(context.Context, string, string) (NewSecret, error) {
	return NewSecret{Said: "New secret of endpoint team/hooks.", Secret: testSecret, Warning: "Save this secret now."}, nil
}

func (p *stubPlugin) AddSecret(context.Context, string, string) (NewSecret, error) {
	return NewSecret{Said: "Secret of endpoint team/hooks.", Secret: testSecret, Warning: "Save this secret now."}, nil
}

// A new secret (rotated or added) is shown once: in the answer to the
// POST, which no cache keeps, and never in an address (no redirect) or the
// log.
func TestANewSecretIsShownOnlyInTheAnswer(t *testing.T) {
	for _, action := range []string{"rotate", "add-secret"} {
		s, _, base, log := served(t)
		c := signIn(t, s)
		req, _ := http.NewRequest(http.MethodPost, base+"/namespaces/team/endpoints/hooks/"+action, strings.NewReader("agent=triage&confirmed=yes"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", base)
		resp, body := do(t, c, req)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<pre id="new-secret">`+testSecret+`</pre>`) || !strings.Contains(body, "Save this secret now.") {
			t.Fatalf("%s answered %s without the secret and its warning:\n%s", action, resp.Status, body)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: the answer with the secret may be stored: Cache-Control %q", action, cc)
		}
		if loc := resp.Header.Get("Location"); loc != "" {
			t.Errorf("%s redirects to %q", action, loc)
		}
		for _, m := range addressAttrib.FindAllStringSubmatch(body, -1) {
			if strings.Contains(m[1], testSecret) {
				t.Errorf("%s: the secret is in an address: %s", action, m[0])
			}
		}
		if strings.Contains(log.String(), testSecret) {
			t.Errorf("%s: the log holds the secret:\n%s", action, log)
		}
	}
}

func (p *stubPlugin) Send(context.Context, string, string) (string, error) { return "sent", nil }

func (p *stubPlugin) Redeliver(context.Context, string, string) (string, error) { return "sent", nil }

func (p *stubPlugin) CreateEndpoint(context.Context, *agentsv1alpha1.WebhookEndpoint) (string, error) {
	return "created", nil
}

func (p *stubPlugin) EditEndpoint(context.Context, string, string, map[string]any) (string, error) {
	return "edited", nil
}
