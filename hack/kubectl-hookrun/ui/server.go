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

// Package ui is the web UI of `kubectl hookrun ui`, the Invocations tab: a
// server on loopback that shows an Agent's webhook endpoints as cards with
// their recent invocations, updates them live, and acts on them, each
// request as the kubeconfig's user (RBAC and the admission policies decide;
// nothing is installed in the cluster).
//
// What it shows and does comes from the plugin's commands through Plugin, so
// the page says what `kubectl hookrun show` prints and does what `kubectl
// hookrun pause` does. Like the plugin it imports only api/ of hookrun.
//
// Security (server.go, security.go): every request needs the per-process
// token (the printed URL sets it as an HttpOnly, SameSite=Strict cookie);
// a Host other than the served address is refused (DNS rebinding); a state
// change needs the served address as its Origin; the Content-Security-Policy
// allows no inline script. No endpoint secret is put in a URL or a log.
package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Plugin is what the UI takes from kubectl-hookrun's commands. Every call
// acts as the kubeconfig's user.
type Plugin interface {
	// Client is the API client, as the user.
	Client() client.WithWatch
	// Phase is the endpoint's phase and, when it takes no calls, why
	// ("Paused (OwnerNotMember)"), as `kubectl hookrun endpoints` prints it.
	Phase(ep *agentsv1alpha1.WebhookEndpoint) string
	// SampleCurl is the sample call `kubectl hookrun show` prints, and its
	// note (only the note when there is no call to show).
	SampleCurl(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (curl, note string)
	// Printable is free text a user, a sender or an agent wrote (a
	// message, an output, a payload) with every control, bidirectional and
	// invisible character written as an escape, as the commands print it:
	// html/template escapes markup, not what reorders or hides text.
	Printable(s string) string
	// Thread names the thread a run worked in (printable).
	Thread(run *agentsv1alpha1.AgentRun) string
	// Payload is the body the receiver stored for run.
	Payload(ctx context.Context, run *agentsv1alpha1.AgentRun) ([]byte, error)
	// SetPaused asks hookrun to pause or resume an endpoint (without
	// waiting for the operator); it returns what to tell the user, or the
	// refusal in the API server's words.
	SetPaused(ctx context.Context, ns, name string, pause bool) (string, error)
	// TakeOwnership resumes an endpoint paused because its owner left, with
	// the user as its owner (kubectl hookrun resume --take-ownership).
	TakeOwnership(ctx context.Context, ns, name string) (string, error)
	// Rotate rotates an endpoint's generated secret and waits for the
	// new one (kubectl hookrun rotate).
	Rotate(ctx context.Context, ns, name string) (NewSecret, error)
	// AddSecret gives an endpoint that allows unauthenticated calls a
	// generated secret and waits for it (kubectl hookrun add-secret).
	AddSecret(ctx context.Context, ns, name string) (NewSecret, error)
	// Send sends one call as the endpoint's sender would, with a sample
	// body (kubectl hookrun test --no-follow): what it sent and the
	// receiver's answer.
	Send(ctx context.Context, ns, name string) (string, error)
	// Redeliver sends a run's stored payload again through its endpoint
	// (kubectl hookrun redeliver --no-follow): what it sent and the
	// receiver's answer.
	Redeliver(ctx context.Context, ns, run string) (string, error)
	// CreateEndpoint creates ep.
	CreateEndpoint(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, error)
	// EditEndpoint merge-patches the endpoint's spec with spec.
	EditEndpoint(ctx context.Context, ns, name string, spec map[string]any) (string, error)
	// Delete deletes an endpoint.
	Delete(ctx context.Context, ns, name string) (string, error)
}

// NewSecret is a secret made at the user's request, shown once. On a
// failure, Said is what was done before it.
type NewSecret struct {
	// Said is what was done, and what it changed for calls.
	Said string
	// Secret is the plain value; Warning, the warning to save it.
	Secret, Warning string
}

// Options configure a Server.
type Options struct {
	Plugin Plugin
	// Namespace is the namespace shown first (the kubeconfig's).
	Namespace string
	// Log receives the server's own errors; never a URL, a token or a
	// secret. Nil discards them.
	Log io.Writer
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Server serves the UI at one address.
type Server struct {
	opts  Options
	token string
	addr  string // host:port as served, the only Host accepted
	pages *template.Template
	mux   *http.ServeMux
}

// New makes a Server for a listener's address (host:port): the only Host
// and Origin it accepts.
func New(addr string, opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	pages, err := template.New("").Funcs(funcs()).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, token: rand.Text(), addr: addr, pages: pages, mux: http.NewServeMux()}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.routes()
	return s, nil
}

// URL is the address to open: it carries the token once, and the page sets
// it as a cookie and drops it from the address.
func (s *Server) URL() string {
	return fmt.Sprintf("http://%s/?token=%s", s.addr, s.token)
}

// Handler is the UI with its security checks in front.
func (s *Server) Handler() http.Handler {
	return s.secure(s.mux)
}

// Serve serves on l until ctx is done, then shuts down.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          nil,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// logf writes one of the server's own errors.
func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.opts.Log, "ui: "+format+"\n", args...)
}
