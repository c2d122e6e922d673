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
	"encoding/json"
	"io"
	"net/http"
)

// StrictWire makes a 1.0 JSON-RPC peer hold each request to the A2A 1.0
// specification's wire before its SDK reads it, where the SDK is lenient:
// header A2A-Version: 1.0 (else -32009, VersionNotSupported), and in a
// SendMessage the message's role ROLE_USER, no "kind" on the message or
// its parts (0.3's), and a configuration with only 1.0's members
// (acceptedOutputModes, taskPushNotificationConfig, historyLength,
// returnImmediately; 0.3's "blocking" is gone), else -32602. Other peers
// ignore it.
func StrictWire() Option { return func(c *config) { c.strict = true } }

// JSON-RPC error codes of strictWire's refusals.
const (
	codeInvalidParams      = -32602
	codeVersionUnsupported = -32009
)

// strictWire is next behind the checks of StrictWire.
func strictWire(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		var call struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(body, &call); err != nil {
			rpcError(w, nil, -32700, "parse error")
			return
		}
		if r.Header.Get("A2A-Version") != "1.0" {
			rpcError(w, call.ID, codeVersionUnsupported, "VersionNotSupportedError: A2A-Version 1.0 required")
			return
		}
		if call.Method == "SendMessage" {
			if msg := strictSend(call.Params); msg != "" {
				rpcError(w, call.ID, codeInvalidParams, "invalid params: "+msg)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// strictSend is what is wrong with SendMessage params by the 1.0 wire, or "".
func strictSend(params json.RawMessage) string {
	var p struct {
		Message struct {
			Role  string           `json:"role"`
			Kind  *string          `json:"kind"`
			Parts []map[string]any `json:"parts"`
		} `json:"message"`
		Configuration json.RawMessage `json:"configuration"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return err.Error()
	}
	if p.Message.Role != "ROLE_USER" || p.Message.Kind != nil {
		return "1.0 messages have role ROLE_USER and no kind"
	}
	for _, part := range p.Message.Parts {
		if _, ok := part["kind"]; ok {
			return "1.0 parts have no kind"
		}
	}
	if len(p.Configuration) == 0 {
		return ""
	}
	var cfg struct {
		AcceptedOutputModes        []string        `json:"acceptedOutputModes"`
		TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig"`
		HistoryLength              *int            `json:"historyLength"`
		ReturnImmediately          bool            `json:"returnImmediately"`
	}
	dec := json.NewDecoder(bytes.NewReader(p.Configuration))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return "configuration: " + err.Error()
	}
	return ""
}

// rpcError answers a JSON-RPC error.
func rpcError(w http.ResponseWriter, id any, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message},
	})
}
