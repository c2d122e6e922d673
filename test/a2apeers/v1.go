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
	"context"
	"iter"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// V1JSONRPC is an A2A 1.0 agent of a2a-go/v2 that serves the JSON-RPC
// binding only, at its URL; its card lists that one interface.
func V1JSONRPC(opts ...Option) *Peer {
	return serveV1(a2a.TransportProtocolJSONRPC, newConfig(opts))
}

// V1HTTPJSON is an A2A 1.0 agent of a2a-go/v2 that serves the HTTP+JSON
// binding only, under its URL; its card lists that one interface.
func V1HTTPJSON(opts ...Option) *Peer {
	return serveV1(a2a.TransportProtocolHTTPJSON, newConfig(opts))
}

func serveV1(binding a2a.TransportProtocol, cfg config) *Peer {
	p := newPeer(cfg)
	handler := &v1Handler{RequestHandler: a2asrv.NewHandler(v1Echo{p}), p: p, refuse: cfg.refuse}
	var served http.Handler
	switch {
	case binding == a2a.TransportProtocolJSONRPC:
		// Only its URL: a call on another path (HTTP+JSON's) finds nothing.
		jsonrpc := a2asrv.NewJSONRPCHandler(handler)
		if cfg.strict {
			jsonrpc = strictWire(jsonrpc)
		}
		mux := http.NewServeMux()
		mux.Handle("POST /{$}", jsonrpc)
		served = mux
	case cfg.tenant != "":
		served = a2asrv.NewTenantRESTHandler("/{*}", handler)
	default:
		served = a2asrv.NewRESTHandler(handler)
	}
	return p.serve(p.v1Card(binding, cfg), served)
}

// v1Card is the handler of a 1.0 peer's card: one interface, binding at
// p.URL, unless WithCard gave another card.
func (p *Peer) v1Card(binding a2a.TransportProtocol, cfg config) http.Handler {
	if cfg.card != nil {
		return p.customCard(cfg.card)
	}
	return a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{
		Name: "echo", Description: "hookrun's test echo agent", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{{
			URL: p.URL, ProtocolBinding: binding, ProtocolVersion: a2a.Version, Tenant: cfg.tenant,
		}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "echoes the payload's first line", Tags: []string{"test"}}},
	})
}

// v1Handler is the SDK's request handler, recording messages, holding the
// tasks of non-blocking sends at submitted until they are answered, and
// refusing every call when told to.
type v1Handler struct {
	a2asrv.RequestHandler
	p      *Peer
	refuse bool
}

func (h *v1Handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if h.refuse {
		return nil, a2a.ErrVersionNotSupported
	}
	if req.Message != nil {
		m := v1Message(req)
		m.Header = headerOf(ctx)
		h.p.received(m)
		if req.Config != nil && req.Config.ReturnImmediately {
			defer h.p.gates.hold(req.Message.ID)()
		}
	}
	return h.RequestHandler.SendMessage(ctx, req)
}

func (h *v1Handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if h.refuse {
		return nil, a2a.ErrVersionNotSupported
	}
	return h.RequestHandler.GetTask(ctx, req)
}

func (h *v1Handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if h.refuse {
		return nil, a2a.ErrVersionNotSupported
	}
	return h.RequestHandler.CancelTask(ctx, req)
}

// v1Message is what a peer records of a send.
func v1Message(req *a2a.SendMessageRequest) Message {
	m := req.Message
	out := Message{MessageID: m.ID, ContextID: m.ContextID, TaskID: string(m.TaskID), Tenant: req.Tenant, Metadata: m.Metadata}
	out.Text = v1Text(m)
	for _, part := range m.Parts {
		if raw := part.Raw(); raw != nil {
			out.Files = append(out.Files, File{Name: part.Filename, MediaType: part.MediaType, Bytes: raw})
		}
	}
	return out
}

func v1Text(m *a2a.Message) string {
	var texts []string
	for _, part := range m.Parts {
		if t, ok := part.Content.(a2a.Text); ok {
			texts = append(texts, string(t))
		}
	}
	return strings.Join(texts, "\n")
}

// v1Echo is the echo agent on a2a-go/v2.
type v1Echo struct{ p *Peer }

func (e v1Echo) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		e.p.wait(ctx, ec.Message.ID)
		out := echo(v1Text(ec.Message))
		if out.kind == slow {
			e.p.work(ctx, ec.Message.ContextID)
		}
		reply := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(out.text))
		switch out.kind {
		case fail:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, reply), nil)
		case input:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, reply), nil)
		case hang:
			if yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
				e.p.hung(ctx)
			}
		default:
			if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(out.text)), nil) {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
			}
		}
	}
}

func (e v1Echo) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}
