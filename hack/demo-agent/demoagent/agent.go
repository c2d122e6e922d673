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
// suite, importable so tests can run it in-process.
package demoagent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Agent is a deterministic A2A agent speaking 0.3 and 1.0 over JSON-RPC.
// It answers every message with what it received: the payload's size,
// content type and first line. A payload whose first line is "demo:fail"
// fails; "demo:hang" works until canceled.
type Agent struct {
	mu    sync.Mutex
	tasks map[string]*task
	next  int
	// seen holds messages by messageId: how often each arrived, so tests
	// can check nothing is sent twice, and the task made for it, so a
	// message sent again gets that task, not a new one (dedupe by messageId).
	seen map[string]*message
	// taskOrder and seenOrder hold keys oldest first, so a long-running agent
	// forgets the oldest beyond Remember.
	taskOrder, seenOrder []string
}

// Remember is how many tasks and message IDs the agent keeps.
const Remember = 100_000

type message struct {
	count  int
	taskID string
}

type task struct {
	id, contextID, state, answer string
	v10                          bool
}

// New returns an agent with no tasks.
func New() *Agent {
	return &Agent{tasks: map[string]*task{}, seen: map[string]*message{}}
}

// Seen is how many times a message with this ID arrived.
func (a *Agent) Seen(messageID string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.seen[messageID]; m != nil {
		return m.count
	}
	return 0
}

// Tasks is how many tasks the agent has made.
func (a *Agent) Tasks() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.next
}

// remember appends key to order and drops the oldest key from m beyond Remember.
func remember[V any](m map[string]V, order *[]string, key string) {
	*order = append(*order, key)
	if len(*order) > Remember {
		delete(m, (*order)[0])
		*order = (*order)[1:]
	}
}

type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type part struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Raw       string `json:"raw"`
	MediaType string `json:"mediaType"`
	File      *struct {
		Bytes    string `json:"bytes"`
		MimeType string `json:"mimeType"`
	} `json:"file"`
}

// ServeHTTP serves A2A JSON-RPC.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req rpcRequest
	if r.Method != http.MethodPost {
		http.Error(w, "POST JSON-RPC here", http.StatusMethodNotAllowed)
		return
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
		reply(w, req.ID, nil, -32700, "parse error")
		return
	}
	v10 := r.Header.Get("A2A-Version") == "1.0"
	switch req.Method {
	case "message/send", "SendMessage":
		a.send(w, req, v10)
	case "tasks/get", "GetTask", "tasks/cancel", "CancelTask":
		var p struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(req.Params, &p)
		a.mu.Lock()
		t, ok := a.tasks[p.ID]
		if ok {
			switch {
			case strings.Contains(strings.ToLower(req.Method), "cancel"):
				t.state = "canceled"
			case t.state == "submitted":
				t.state = "completed" // finish on the first look: clients must poll
			}
		}
		var out map[string]any
		if ok {
			out = t.wire()
		}
		a.mu.Unlock()
		if !ok {
			reply(w, req.ID, nil, -32001, "task not found")
			return
		}
		reply(w, req.ID, out, 0, "")
	default:
		reply(w, req.ID, nil, -32601, "method not found: "+req.Method)
	}
}

func (a *Agent) send(w http.ResponseWriter, req rpcRequest, v10 bool) {
	var p struct {
		Message struct {
			MessageID string `json:"messageId"`
			ContextID string `json:"contextId"`
			Parts     []part `json:"parts"`
		} `json:"message"`
		Configuration struct {
			ReturnImmediately bool `json:"returnImmediately"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		reply(w, req.ID, nil, -32602, "invalid params")
		return
	}
	payload, contentType := "", "text"
	for _, pt := range p.Message.Parts {
		switch {
		case pt.Text != "":
			payload = between(pt.Text, "<webhook-payload>\n", "\n</webhook-payload>")
		case pt.Raw != "" || pt.File != nil:
			b64, mt := pt.Raw, pt.MediaType
			if pt.File != nil {
				b64, mt = pt.File.Bytes, pt.File.MimeType
			}
			raw, _ := base64.StdEncoding.DecodeString(b64)
			payload, contentType = string(raw), mt+" file"
		}
	}
	first, _, _ := strings.Cut(payload, "\n")
	state := "submitted"
	switch strings.TrimSpace(first) {
	case "demo:fail":
		state = "failed"
	case "demo:hang":
		state = "working"
	default:
		if v10 && !p.Configuration.ReturnImmediately {
			state = "completed" // 1.0 blocks until the task is done unless told not to
		}
	}
	a.mu.Lock()
	m := a.seen[p.Message.MessageID]
	if m == nil {
		m = &message{}
		a.seen[p.Message.MessageID] = m
		remember(a.seen, &a.seenOrder, p.Message.MessageID)
	}
	m.count++
	if earlier, ok := a.tasks[m.taskID]; ok && p.Message.MessageID != "" {
		again := *earlier
		again.v10 = v10 // in the shape of the protocol it is asked in now
		out := again.wire()
		a.mu.Unlock()
		a.replyTask(w, req, out, v10)
		return
	}
	a.next++
	ctxID := p.Message.ContextID
	if ctxID == "" {
		ctxID = fmt.Sprintf("demo-context-%d", a.next)
	}
	t := &task{
		id: fmt.Sprintf("demo-task-%d-%d", time.Now().UnixNano(), a.next), contextID: ctxID, state: state, v10: v10,
		answer: fmt.Sprintf("Demo agent received %d bytes (%s). First line: %s", len(payload), contentType, first),
	}
	a.tasks[t.id] = t
	remember(a.tasks, &a.taskOrder, t.id)
	m.taskID = t.id
	out := t.wire()
	a.mu.Unlock()
	a.replyTask(w, req, out, v10)
}

func (a *Agent) replyTask(w http.ResponseWriter, req rpcRequest, out map[string]any, v10 bool) {
	if v10 {
		reply(w, req.ID, map[string]any{"task": out}, 0, "")
		return
	}
	reply(w, req.ID, out, 0, "")
}

// wire is the task in its protocol version's shape.
func (t *task) wire() map[string]any {
	state := t.state
	textPart := map[string]any{"kind": "text", "text": t.answer}
	if t.v10 {
		state = "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(state, "-", "_"))
		textPart = map[string]any{"text": t.answer}
	}
	out := map[string]any{"id": t.id, "contextId": t.contextID, "status": map[string]any{"state": state}}
	if !t.v10 {
		out["kind"] = "task"
	}
	switch t.state {
	case "completed":
		out["artifacts"] = []any{map[string]any{"artifactId": "answer", "parts": []any{textPart}}}
	case "failed":
		role := "agent"
		if t.v10 {
			role = "ROLE_AGENT"
		}
		out["status"] = map[string]any{"state": state, "message": map[string]any{
			"messageId": t.id + "-status", "role": role, "parts": []any{textPart},
		}}
	}
	return out
}

func between(s, open, close string) string {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return s
	}
	if i := strings.LastIndex(rest, close); i >= 0 {
		return rest[:i]
	}
	return rest
}

func reply(w http.ResponseWriter, id json.RawMessage, result any, code int, msg string) {
	out := map[string]any{"jsonrpc": "2.0", "id": id}
	if code != 0 {
		out["error"] = map[string]any{"code": code, "message": msg}
	} else {
		out["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
