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
	"encoding/json"
	"errors"
	"strings"
)

// The JSON shapes both protocol versions share. Reading is tolerant: a part,
// a task and a state are read in either version's spelling, whichever
// version was asked for; only what is sent and how a send's result is
// wrapped differ (see dialect).

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// wirePart holds both versions' part shapes: 0.3 has "kind" and a nested
// "file"; 1.0 is told apart by which member is present.
type wirePart struct {
	Kind string `json:"kind,omitempty"`
	Text string `json:"text,omitempty"`
	// 1.0 file part
	Raw       string `json:"raw,omitempty"`
	Filename  string `json:"filename,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	// 0.3 file part
	File *wireFile03     `json:"file,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

// wireFile03 is the "file" member of a 0.3 file part.
type wireFile03 struct {
	Bytes    string `json:"bytes,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Name     string `json:"name,omitempty"`
}

type wireMessage struct {
	Kind      string         `json:"kind,omitempty"`
	MessageID string         `json:"messageId"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Role      string         `json:"role"`
	Parts     []wirePart     `json:"parts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type wireTask struct {
	Kind      string `json:"kind,omitempty"`
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string       `json:"state"`
		Message *wireMessage `json:"message,omitempty"`
	} `json:"status"`
	Artifacts []struct {
		Parts []wirePart `json:"parts"`
	} `json:"artifacts,omitempty"`
	History []wireMessage `json:"history,omitempty"`
}

// messageAsTask is the task an agent finished by answering with a message.
func messageAsTask(m *wireMessage) *Task {
	return &Task{ID: m.TaskID, ContextID: m.ContextID, State: StateCompleted, Output: partsText(m.Parts)}
}

// toTask reads what the dispatcher needs of a task.
func toTask(t *wireTask) (*Task, error) {
	if t.ID == "" {
		return nil, errors.New("the agent returned a task without an id")
	}
	out := &Task{ID: t.ID, ContextID: t.ContextID, State: parseState(t.Status.State)}
	if t.Status.Message != nil {
		out.StatusText = partsText(t.Status.Message.Parts)
	}
	var texts []string
	for _, a := range t.Artifacts {
		if s := partsText(a.Parts); s != "" {
			texts = append(texts, s)
		}
	}
	out.Output = strings.Join(texts, "\n")
	if out.Output == "" {
		out.Output = out.StatusText
	}
	return out, nil
}

// parseState maps both versions' spellings to State.
func parseState(s string) State {
	s = strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_"))
	s = strings.ReplaceAll(s, "_", "-")
	switch st := State(s); st {
	case StateSubmitted, StateWorking, StateCompleted, StateFailed, StateCanceled, StateRejected, StateInputRequired, StateAuthRequired:
		return st
	case "cancelled":
		return StateCanceled
	}
	return StateUnknown
}

func partsText(parts []wirePart) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
