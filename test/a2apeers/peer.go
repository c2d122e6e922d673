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

package a2apeers

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
)

// cardPath is where every peer serves its agent card.
const cardPath = "/.well-known/agent-card.json"

// Peer is one A2A agent served on loopback.
type Peer struct {
	// URL is the agent's base URL, with a trailing slash: its JSON-RPC
	// endpoint, or the base of its HTTP+JSON paths.
	URL string

	srv   *httptest.Server
	tls   *tls.Config
	stop  chan struct{} // closed by Close: hanging tasks end
	gates gates

	tarpit bool

	mu        sync.Mutex
	requests  []Request
	messages  []Message
	trouble   trouble
	refuseAll bool
	holding   holding
	overlap   overlap
}

// Request is an HTTP request a peer received, its card's included.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Message is a message a peer was sent, as its SDK read it.
type Message struct {
	MessageID, ContextID, TaskID string
	// Tenant is the tenant the call named (1.0 only): in its HTTP+JSON path
	// or its JSON-RPC params.
	Tenant   string
	Metadata map[string]any
	// Text is the message's text parts, joined by newlines.
	Text  string
	Files []File
	// Header is the HTTP header of the call that carried the message.
	Header http.Header
}

// File is a file part of a message.
type File struct {
	Name, MediaType string
	Bytes           []byte
}

// Option changes a peer.
type Option func(*config)

type config struct {
	refuse bool
	card   func(url string) []byte
	tenant string
	tls    *tls.Config
	tarpit bool
	strict bool
}

// RefuseVersion makes the peer answer every call as a server of another
// protocol version does: a 1.0 peer with the SDK's VersionNotSupported
// error (JSON-RPC -32009; HTTP+JSON 400, reason VERSION_NOT_SUPPORTED), the
// 0.3 peer with method not found (-32601).
func RefuseVersion() Option { return func(c *config) { c.refuse = true } }

// WithCard serves card(url) as the peer's agent card, url being the peer's
// URL; a nil card answers 404.
func WithCard(card func(url string) []byte) Option { return func(c *config) { c.card = card } }

// WithTenant makes a 1.0 peer list tenant in its card's interface and, over
// HTTP+JSON, serve its paths under /{tenant}/ only. The 0.3 peer ignores it.
func WithTenant(tenant string) Option { return func(c *config) { c.tenant = tenant } }

// WithTLS serves the peer, its card included, over TLS with conf (its
// certificates, and whom it asks for a client certificate); its URL is
// https://.
func WithTLS(conf *tls.Config) Option { return func(c *config) { c.tls = conf } }

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// newPeer is a peer of cfg not yet serving: its URL is known (for its card), its
// handlers are not.
func newPeer(cfg config) *Peer {
	srv := httptest.NewUnstartedServer(nil)
	scheme := "http://"
	if cfg.tls != nil {
		scheme = "https://"
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses
	}
	return &Peer{URL: scheme + srv.Listener.Addr().String() + "/", srv: srv, tls: cfg.tls, tarpit: cfg.tarpit, stop: make(chan struct{})}
}

// serve starts p: card at cardPath (a nil card answers 404), a2a for
// everything else.
func (p *Peer) serve(card, a2a http.Handler) *Peer {
	mux := http.NewServeMux()
	if card == nil {
		card = http.NotFoundHandler()
	}
	mux.Handle("GET "+cardPath, card)
	mux.Handle("/", a2a)
	return p.start(mux)
}

// start serves h, recording every request; a tarpit holds each, and the
// trouble a test set turns calls away before h sees them.
func (p *Peer) start(h http.Handler) *Peer {
	p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		p.requests = append(p.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body})
		p.mu.Unlock()
		if p.tarpit {
			p.hold(r)
			return
		}
		if p.turnAway(w, r) {
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), headerKey{}, r.Header.Clone())))
	})
	if p.tls != nil {
		p.srv.TLS = p.tls
		p.srv.StartTLS()
		return p
	}
	p.srv.Start()
	return p
}

// CloseConnections closes the connections open to the peer: the next call
// shakes hands again.
func (p *Peer) CloseConnections() { p.srv.CloseClientConnections() }

// customCard is the handler of a card given by WithCard.
func (p *Peer) customCard(card func(url string) []byte) http.Handler {
	body := card(p.URL)
	if body == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

// Close stops the peer and ends its hanging tasks.
func (p *Peer) Close() {
	close(p.stop)
	p.srv.Close()
}

// Requests are the HTTP requests the peer received, oldest first.
func (p *Peer) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Messages are the messages the peer was sent, oldest first.
func (p *Peer) Messages() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.messages)
}

func (p *Peer) received(m Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.messages = append(p.messages, m)
}

// hung waits until ctx ends or the peer closes.
func (p *Peer) hung(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-p.stop:
	}
}

// gates hold a task a non-blocking send created at submitted until the
// send has its answer, so that the answer is always the submitted task and
// the client has to poll. They are keyed by message ID, which both the
// send and the agent's execution know.
type gates struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

// hold makes the execution of messageID wait until release is called.
func (g *gates) hold(messageID string) (release func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	if g.held == nil {
		g.held = map[string]chan struct{}{}
	}
	g.held[messageID] = ch
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		if g.held[messageID] == ch {
			delete(g.held, messageID)
		}
		g.mu.Unlock()
		close(ch)
	}
}

// wait waits for messageID's gate, if it has one, or for ctx or the peer
// to end.
func (p *Peer) wait(ctx context.Context, messageID string) {
	p.gates.mu.Lock()
	ch := p.gates.held[messageID]
	p.gates.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	case <-p.stop:
	}
}
