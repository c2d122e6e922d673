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

// Package demoagent is the demo A2A agent of `make dev` and the end-to-end
// suite, built on the official SDK (a2a-go v2) and importable so tests can
// run it in-process.
package demoagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Agent is a deterministic A2A agent. It answers every message with what it
// received: the payload's size, content type and first line. A payload whose
// first line is "demo:fail" fails; "demo:hang" works until canceled;
// "demo:input" asks for input. It serves A2A 1.0 over JSON-RPC and
// HTTP+JSON and A2A 0.3 over JSON-RPC (see Interface), and its agent card.
type Agent struct {
	serves  map[Interface]bool
	ledger  *ledger
	handler http.Handler
	// jsonrpc10 and jsonrpc03 serve JSON-RPC at the base URL; nil if not served.
	jsonrpc10, jsonrpc03 http.Handler
}

// Remember is how many message IDs the agent keeps, and at most how many
// tasks (see taskStore); the oldest are forgotten.
const Remember = 100_000

// maxRequestBytes bounds what the agent reads of a request.
const maxRequestBytes = 4 << 20

// JSON-RPC error codes of the answers the agent gives before the SDK's
// handlers see a request.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
)

// Option changes what New makes.
type Option func(*config)

type config struct {
	serves   []Interface
	remember int
}

// Serve makes the agent serve only these interfaces, and list only them in
// its card (by default it serves all three).
func Serve(interfaces ...Interface) Option {
	return func(c *config) { c.serves = interfaces }
}

// withRemember bounds the messages and tasks kept, for tests.
func withRemember(n int) Option {
	return func(c *config) { c.remember = n }
}

// New returns an agent with no tasks.
func New(opts ...Option) *Agent {
	c := config{serves: allInterfaces, remember: Remember}
	for _, o := range opts {
		o(&c)
	}
	a := &Agent{serves: map[Interface]bool{}, ledger: newLedger(c.remember)}
	for _, i := range c.serves {
		a.serves[i] = true
	}
	sdk := a2asrv.NewHandler(&executor{ledger: a.ledger},
		a2asrv.WithTaskStore(newTaskStore(c.remember)), a2asrv.WithCapabilityChecks(&capabilities))
	handler := &dedupe{RequestHandler: sdk, ledger: a.ledger}
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(a.card)))
	if a.serves[HTTPJSON] {
		mux.Handle("/"+restPath+"/", http.StripPrefix("/"+restPath, a2asrv.NewRESTHandler(handler)))
	}
	if a.serves[JSONRPC] {
		a.jsonrpc10 = a2asrv.NewJSONRPCHandler(handler)
	}
	if a.serves[JSONRPC03] {
		a.jsonrpc03 = a2av0.NewJSONRPCHandler(handler)
	}
	if a.jsonrpc10 != nil || a.jsonrpc03 != nil {
		mux.HandleFunc("POST /{$}", a.serveJSONRPC)
	}
	a.handler = mux
	return a
}

// Seen is how many times a message with this ID arrived.
func (a *Agent) Seen(messageID string) int { return a.ledger.seen(messageID) }

// Tasks is how many tasks the agent has made.
func (a *Agent) Tasks() int { return a.ledger.tasks() }

// ServeHTTP serves the agent card at /.well-known/agent-card.json, JSON-RPC
// (both versions) at / and HTTP+JSON under /rest/.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	// The agent does not know its external address: the card's URLs are
	// those the client used to reach it.
	r = r.WithContext(context.WithValue(r.Context(), baseKey{}, baseURL(r)))
	a.handler.ServeHTTP(w, r)
}

func baseURL(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host + "/"
	}
	return "http://" + r.Host + "/"
}

// serveJSONRPC hands a JSON-RPC request to the SDK's handler of its
// version: A2A 0.3's methods have a "/" in their name (message/send),
// 1.0's do not (SendMessage).
func (a *Agent) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			rpcError(w, nil, codeInvalidRequest, "the request is over 4 MiB; send a smaller payload")
			return
		}
		rpcError(w, nil, codeParseError, "reading the request: "+err.Error())
		return
	}
	var call struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &call); err != nil {
		rpcError(w, nil, codeParseError, "the request is not JSON: "+err.Error())
		return
	}
	h, version := a.jsonrpc10, "1.0"
	if strings.Contains(call.Method, "/") {
		h, version = a.jsonrpc03, "0.3"
	}
	if h == nil {
		rpcError(w, call.ID, codeMethodNotFound, "method "+call.Method+" is A2A "+version+", which this agent does not serve; see its card")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.ServeHTTP(w, r)
}

// rpcError answers a request the SDK's handlers never saw; id is null
// when the request could not be read.
func rpcError(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message},
	})
}
