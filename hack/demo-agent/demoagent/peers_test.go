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

package demoagent

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	a2aclientv03 "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	hookrun "github.com/hookrun/hookrun/controllers/a2a"
)

// peer is one client of the agent, seen the same way whatever its SDK, so
// every scenario runs through each: hookrun's own client (0.3 and 1.0
// JSON-RPC), a2a-go v2's (1.0 JSON-RPC and HTTP+JSON) and a2a-go v0.3's.
type peer interface {
	send(ctx context.Context, m outgoing) (view, error)
	get(ctx context.Context, id string) (view, error)
	cancel(ctx context.Context, id string) (view, error)
}

// outgoing is a message sent without blocking; a file, when set, is sent as
// a second part after the text.
type outgoing struct {
	id, contextID, text string
	file                []byte
	mediaType           string
}

// view is a task as every peer reports it: the state in A2A 0.3's spelling,
// the text of its artifacts or else of its status message.
type view struct {
	id, contextID string
	state         hookrun.State
	text          string
}

// hookrunPeer is hookrun's JSON-RPC client, as the operator uses it.
type hookrunPeer struct{ c *hookrun.Client }

func (p hookrunPeer) send(ctx context.Context, m outgoing) (view, error) {
	msg := hookrun.Message{MessageID: m.id, ContextID: m.contextID, Text: m.text}
	if m.file != nil {
		msg.File = &hookrun.File{MediaType: m.mediaType, Bytes: m.file}
	}
	return hookrunView(p.c.SendMessage(ctx, msg))
}

func (p hookrunPeer) get(ctx context.Context, id string) (view, error) {
	return hookrunView(p.c.GetTask(ctx, id))
}

func (p hookrunPeer) cancel(ctx context.Context, id string) (view, error) {
	return hookrunView(p.c.CancelTask(ctx, id))
}

func hookrunView(t *hookrun.Task, err error) (view, error) {
	if err != nil {
		return view{}, err
	}
	return view{id: t.ID, contextID: t.ContextID, state: t.State, text: t.Output}, nil
}

// sdkPeer is a2a-go v2's client, made from the agent's card.
type sdkPeer struct{ c *a2aclient.Client }

func (p sdkPeer) send(ctx context.Context, m outgoing) (view, error) {
	parts := []*a2a.Part{a2a.NewTextPart(m.text)}
	if m.file != nil {
		parts = append(parts, &a2a.Part{Content: a2a.Raw(m.file), MediaType: m.mediaType})
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	msg.ID, msg.ContextID = m.id, m.contextID
	res, err := p.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		return view{}, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return view{}, fmt.Errorf("the agent answered a send with %T, not a task", res)
	}
	return sdkView(task, nil)
}

func (p sdkPeer) get(ctx context.Context, id string) (view, error) {
	return sdkView(p.c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)}))
}

func (p sdkPeer) cancel(ctx context.Context, id string) (view, error) {
	return sdkView(p.c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(id)}))
}

func sdkView(t *a2a.Task, err error) (view, error) {
	if err != nil {
		return view{}, err
	}
	v := view{id: string(t.ID), contextID: t.ContextID, state: state(string(t.Status.State))}
	for _, a := range t.Artifacts {
		v.text += sdkText(a.Parts)
	}
	if v.text == "" && t.Status.Message != nil {
		v.text = sdkText(t.Status.Message.Parts)
	}
	return v, nil
}

func sdkText(parts []*a2a.Part) string {
	var s string
	for _, p := range parts {
		s += p.Text()
	}
	return s
}

// v03Peer is a2a-go v0.3's client, told the agent's 0.3 JSON-RPC URL (the
// card is in 1.0's shape, which that client does not read).
type v03Peer struct{ c *a2aclientv03.Client }

func (p v03Peer) send(ctx context.Context, m outgoing) (view, error) {
	parts := []a2av03.Part{a2av03.TextPart{Text: m.text}}
	if m.file != nil {
		parts = append(parts, a2av03.FilePart{File: a2av03.FileBytes{
			FileMeta: a2av03.FileMeta{MimeType: m.mediaType}, Bytes: base64.StdEncoding.EncodeToString(m.file),
		}})
	}
	msg := a2av03.NewMessage(a2av03.MessageRoleUser, parts...)
	msg.ID, msg.ContextID = m.id, m.contextID
	blocking := false
	res, err := p.c.SendMessage(ctx, &a2av03.MessageSendParams{Message: msg, Config: &a2av03.MessageSendConfig{Blocking: &blocking}})
	if err != nil {
		return view{}, err
	}
	task, ok := res.(*a2av03.Task)
	if !ok {
		return view{}, fmt.Errorf("the agent answered a send with %T, not a task", res)
	}
	return v03View(task, nil)
}

func (p v03Peer) get(ctx context.Context, id string) (view, error) {
	return v03View(p.c.GetTask(ctx, &a2av03.TaskQueryParams{ID: a2av03.TaskID(id)}))
}

func (p v03Peer) cancel(ctx context.Context, id string) (view, error) {
	return v03View(p.c.CancelTask(ctx, &a2av03.TaskIDParams{ID: a2av03.TaskID(id)}))
}

func v03View(t *a2av03.Task, err error) (view, error) {
	if err != nil {
		return view{}, err
	}
	v := view{id: string(t.ID), contextID: t.ContextID, state: state(string(t.Status.State))}
	for _, a := range t.Artifacts {
		v.text += v03Text(a.Parts)
	}
	if v.text == "" && t.Status.Message != nil {
		v.text = v03Text(t.Status.Message.Parts)
	}
	return v, nil
}

func v03Text(parts a2av03.ContentParts) string {
	var s string
	for _, p := range parts {
		if t, ok := p.(a2av03.TextPart); ok {
			s += t.Text
		}
	}
	return s
}

// state is a task state in A2A 0.3's spelling, whichever version named it.
func state(s string) hookrun.State {
	return hookrun.State(strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_")), "_", "-"))
}
