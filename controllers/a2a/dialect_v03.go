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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
)

// dialectV03 is A2A 0.3: methods message/send, tasks/get and tasks/cancel;
// parts and results tell their shape by "kind"; no version header.
type dialectV03 struct{}

func (dialectV03) methods() methods {
	return methods{send: "message/send", get: "tasks/get", cancel: "tasks/cancel"}
}

func (dialectV03) setHeaders(http.Header) {}

func (dialectV03) sendParams(msg Message) map[string]any {
	parts := []wirePart{{Kind: "text", Text: msg.Text}}
	if f := msg.File; f != nil {
		parts = append(parts, wirePart{Kind: "file", File: &wireFile03{
			Bytes: base64.StdEncoding.EncodeToString(f.Bytes), MimeType: f.MediaType, Name: f.Name,
		}})
	}
	return map[string]any{
		"message": wireMessage{
			Kind: "message", MessageID: msg.MessageID, ContextID: msg.ContextID, Role: "user",
			Parts: parts, Metadata: msg.Metadata,
		},
		"configuration": map[string]any{"blocking": false},
	}
}

// decodeSendResult tells a task from a message by "kind".
func (dialectV03) decodeSendResult(raw json.RawMessage) (*Task, error) {
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("decoding the result: %w", err)
	}
	if probe.Kind == "message" {
		var m wireMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("decoding the message: %w", err)
		}
		return messageAsTask(&m), nil
	}
	var t wireTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("decoding the task: %w", err)
	}
	return toTask(&t)
}
