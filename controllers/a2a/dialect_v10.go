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
	"errors"
	"fmt"
	"net/http"
)

// dialectV10 is A2A 1.0: methods SendMessage, GetTask and CancelTask;
// header A2A-Version: 1.0; parts tell their shape by which member is
// present; a send's result is wrapped as {"task": ...} or {"message": ...}.
type dialectV10 struct{}

func (dialectV10) methods() methods {
	return methods{send: "SendMessage", get: "GetTask", cancel: "CancelTask"}
}

func (dialectV10) setHeaders(h http.Header) {
	h.Set("A2A-Version", string(V10))
}

func (dialectV10) sendParams(msg Message) map[string]any {
	parts := []wirePart{{Text: msg.Text, MediaType: "text/plain"}}
	if f := msg.File; f != nil {
		parts = append(parts, wirePart{Raw: base64.StdEncoding.EncodeToString(f.Bytes), Filename: f.Name, MediaType: f.MediaType})
	}
	return map[string]any{
		"message": wireMessage{
			MessageID: msg.MessageID, ContextID: msg.ContextID, Role: "ROLE_USER",
			Parts: parts, Metadata: msg.Metadata,
		},
		// 1.0 blocks by default; returnImmediately asks for the task at once.
		"configuration": map[string]any{"returnImmediately": true},
	}
}

func (dialectV10) decodeSendResult(raw json.RawMessage) (*Task, error) {
	var wrapped struct {
		Task    *wireTask    `json:"task"`
		Message *wireMessage `json:"message"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return nil, fmt.Errorf("decoding the result: %w", err)
	}
	switch {
	case wrapped.Task != nil:
		return toTask(wrapped.Task)
	case wrapped.Message != nil:
		return messageAsTask(wrapped.Message), nil
	}
	return nil, errors.New("the result has neither a task nor a message")
}
