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
	"encoding/base64"
	"net/http"
	"strings"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	a2asrvv03 "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
)

// V03 is an A2A 0.3 agent of a2a-go v0.3 that serves JSON-RPC at its URL;
// its card is a 0.3 card (url, preferredTransport JSONRPC).
func V03(opts ...Option) *Peer {
	cfg := newConfig(opts)
	p := newPeer(cfg)
	handler := &v03Handler{RequestHandler: a2asrvv03.NewHandler(v03Echo{p}), p: p, refuse: cfg.refuse}
	mux := http.NewServeMux()
	mux.Handle("POST /{$}", a2asrvv03.NewJSONRPCHandler(handler))
	card := a2asrvv03.NewStaticAgentCardHandler(&a2av03.AgentCard{
		Name: "echo", Description: "hookrun's test echo agent", Version: "1",
		URL: p.URL, PreferredTransport: a2av03.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0",
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2av03.AgentSkill{{ID: "echo", Name: "echo", Description: "echoes the payload's first line", Tags: []string{"test"}}},
	})
	if cfg.card != nil {
		card = p.customCard(cfg.card)
	}
	return p.serve(card, mux)
}

// v03Handler is v1Handler for a2a-go v0.3.
type v03Handler struct {
	a2asrvv03.RequestHandler
	p      *Peer
	refuse bool
}

func (h *v03Handler) OnSendMessage(ctx context.Context, params *a2av03.MessageSendParams) (a2av03.SendMessageResult, error) {
	if h.refuse {
		return nil, a2av03.ErrMethodNotFound
	}
	if params.Message != nil {
		m := v03Message(params.Message)
		m.Header = headerOf(ctx)
		h.p.received(m)
		if params.Config != nil && params.Config.Blocking != nil && !*params.Config.Blocking {
			defer h.p.gates.hold(params.Message.ID)()
		}
	}
	return h.RequestHandler.OnSendMessage(ctx, params)
}

func (h *v03Handler) OnGetTask(ctx context.Context, query *a2av03.TaskQueryParams) (*a2av03.Task, error) {
	if h.refuse {
		return nil, a2av03.ErrMethodNotFound
	}
	return h.RequestHandler.OnGetTask(ctx, query)
}

func (h *v03Handler) OnCancelTask(ctx context.Context, id *a2av03.TaskIDParams) (*a2av03.Task, error) {
	if h.refuse {
		return nil, a2av03.ErrMethodNotFound
	}
	return h.RequestHandler.OnCancelTask(ctx, id)
}

// v03Message is what a peer records of a 0.3 message.
func v03Message(m *a2av03.Message) Message {
	out := Message{MessageID: m.ID, ContextID: m.ContextID, TaskID: string(m.TaskID), Metadata: m.Metadata, Text: v03Text(m)}
	for _, part := range m.Parts {
		fp, ok := part.(a2av03.FilePart)
		if !ok {
			continue
		}
		if fb, ok := fp.File.(a2av03.FileBytes); ok {
			raw, err := base64.StdEncoding.DecodeString(fb.Bytes)
			if err != nil {
				raw = []byte(fb.Bytes) // recorded as sent, for the test to see
			}
			out.Files = append(out.Files, File{Name: fb.Name, MediaType: fb.MimeType, Bytes: raw})
		}
	}
	return out
}

func v03Text(m *a2av03.Message) string {
	var texts []string
	for _, part := range m.Parts {
		if tp, ok := part.(a2av03.TextPart); ok {
			texts = append(texts, tp.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// v03Echo is the echo agent on a2a-go v0.3.
type v03Echo struct{ p *Peer }

func (e v03Echo) Execute(ctx context.Context, rc *a2asrvv03.RequestContext, q eventqueue.Queue) error {
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2av03.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	e.p.wait(ctx, rc.Message.ID)
	out := echo(v03Text(rc.Message))
	if out.kind == slow {
		e.p.work(ctx, rc.Message.ContextID)
	}
	reply := a2av03.NewMessageForTask(a2av03.MessageRoleAgent, rc, a2av03.TextPart{Text: out.text})
	switch out.kind {
	case fail:
		return q.Write(ctx, finalStatus(rc, a2av03.TaskStateFailed, reply))
	case input:
		return q.Write(ctx, finalStatus(rc, a2av03.TaskStateInputRequired, reply))
	case hang:
		if err := q.Write(ctx, a2av03.NewStatusUpdateEvent(rc, a2av03.TaskStateWorking, nil)); err != nil {
			return err
		}
		e.p.hung(ctx)
		return nil
	}
	if err := q.Write(ctx, a2av03.NewArtifactEvent(rc, a2av03.TextPart{Text: out.text})); err != nil {
		return err
	}
	return q.Write(ctx, finalStatus(rc, a2av03.TaskStateCompleted, nil))
}

func (e v03Echo) Cancel(ctx context.Context, rc *a2asrvv03.RequestContext, q eventqueue.Queue) error {
	return q.Write(ctx, finalStatus(rc, a2av03.TaskStateCanceled, nil))
}

// finalStatus is 0.3's last status event of a task.
func finalStatus(rc *a2asrvv03.RequestContext, state a2av03.TaskState, msg *a2av03.Message) *a2av03.TaskStatusUpdateEvent {
	ev := a2av03.NewStatusUpdateEvent(rc, state, msg)
	ev.Final = true
	return ev
}
