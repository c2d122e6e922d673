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

package controllers

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// The message a run sends, as DESIGN.md section 5 fixes it.

const (
	payloadOpen  = "<webhook-payload>"
	payloadClose = "</webhook-payload>"
	// MetadataKey holds hookrun's metadata object on every message.
	MetadataKey = "https://hookrun.dev/a2a/webhook-run/v1"
	// payloadFileName names the file part of a body that is not UTF-8.
	payloadFileName = "webhook-payload"
)

// neutralizeClosingTags replaces the "<" of every occurrence of the closing
// tag, in any (ASCII) letter case, with "&lt;", so the body cannot end the
// wrapper early. Nothing else changes.
func neutralizeClosingTags(body string) string {
	var b strings.Builder
	found, last := false, 0
	for i := 0; i+len(payloadClose) <= len(body); i++ {
		if body[i] != '<' || !asciiEqualFold(body[i:i+len(payloadClose)], payloadClose) {
			continue
		}
		if !found {
			b.Grow(len(body) + 8)
			found = true
		}
		b.WriteString(body[last:i])
		b.WriteString("&lt;")
		last = i + 1
		i += len(payloadClose) - 1
	}
	if !found {
		return body
	}
	b.WriteString(body[last:])
	return b.String()
}

// asciiEqualFold compares s with the lower-case ASCII pattern, ignoring the
// case of ASCII letters only (a Unicode fold could match runes of other widths).
func asciiEqualFold(s, pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != pattern[i] {
			return false
		}
	}
	return true
}

// composeMessage builds the text (and, for a body that is not valid UTF-8,
// the file) of a run's message: prompt, a blank line, the opening tag, a
// newline, the body, a newline, the closing tag.
func composeMessage(prompt string, body []byte, contentType string) (string, *a2a.File) {
	if utf8.Valid(body) {
		return prompt + "\n\n" + payloadOpen + "\n" + neutralizeClosingTags(string(body)) + "\n" + payloadClose, nil
	}
	// The caller chose the Content-Type: only a well-formed media type
	// goes into the wrapper (and the file part), never raw text.
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		contentType = mt
	} else {
		contentType = "application/octet-stream"
	}
	note := fmt.Sprintf("[The payload is %d bytes that are not UTF-8 text (Content-Type %s); it is attached as the file %q.]",
		len(body), contentType, payloadFileName)
	return prompt + "\n\n" + payloadOpen + "\n" + note + "\n" + payloadClose,
		&a2a.File{Name: payloadFileName, MediaType: contentType, Bytes: body}
}

// runMetadata is the object sent under MetadataKey.
func runMetadata(run *agentsv1alpha1.AgentRun, model, threadTitle string) map[string]any {
	m := map[string]any{
		"runId":    run.Name,
		"endpoint": run.Namespace + "/" + run.Spec.EndpointRef.Name,
		"trust":    string(run.Spec.Trust),
	}
	if run.Spec.Owner != nil {
		m["owner"] = run.Spec.Owner.User
	}
	if model != "" {
		m["model"] = model
	}
	if run.Spec.ThreadNamingHint != "" {
		m["threadNamingHint"] = run.Spec.ThreadNamingHint
	} else if threadTitle != "" {
		m["threadTitle"] = threadTitle
	}
	m["sender"] = senderMetadata(run.Spec.Sender)
	return map[string]any{MetadataKey: m}
}

// senderMetadata is the "sender" object: always the type (Header for runs
// recorded before senders existed), the event and delivery ID when known.
func senderMetadata(s *agentsv1alpha1.RunSender) map[string]any {
	m := map[string]any{"type": string(agentsv1alpha1.SenderHeader)}
	if s == nil {
		return m
	}
	if s.Type != "" {
		m["type"] = string(s.Type)
	}
	if s.Event != "" {
		m["event"] = s.Event
	}
	if s.DeliveryID != "" {
		m["deliveryId"] = s.DeliveryID
	}
	return m
}
