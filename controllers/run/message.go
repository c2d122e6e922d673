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

package run

import (
	"fmt"
	"mime"
	"strings"
	"unicode"
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
	// binaryMediaType is the media type of that file part, whatever the
	// caller's Content-Type said.
	binaryMediaType = "application/octet-stream"
)

// neutralizeClosingTags replaces the "<" of every closing tag of the
// wrapper in the body with "&lt;", so the body cannot end the wrapper early
// (DESIGN section 10, "Closing tag"): "<", "/", optional white space (space,
// tab, CR, LF, form feed), "webhook-payload" under Unicode case folding (as
// strings.EqualFold: the Kelvin sign counts as a k), not followed by a
// letter, a digit, "-", "_", "." or ":". What follows the name is left
// alone, so "</webhook-payload >", "</webhook-payload x=\"1\">",
// "</webhook-payload/>" and an unterminated one at the end are all caught,
// while "</webhook-payloads>" names another tag. Nothing else changes.
func neutralizeClosingTags(body string) string {
	var b strings.Builder
	found, last := false, 0
	for i := strings.IndexByte(body, '<'); i >= 0; {
		if n := closingTagAt(body, i); n > 0 {
			if !found {
				b.Grow(len(body) + 8)
				found = true
			}
			b.WriteString(body[last:i])
			b.WriteString("&lt;")
			last = i + 1
			i += n - 1
		}
		next := strings.IndexByte(body[i+1:], '<')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if !found {
		return body
	}
	b.WriteString(body[last:])
	return b.String()
}

// payloadTagName is the wrapper's tag name, lower case.
const payloadTagName = "webhook-payload"

// closingTagAt returns the length of the wrapper's closing tag that starts
// at body[i] ("<", "/", white space and the name: what follows the name is
// not part of it), or 0.
func closingTagAt(body string, i int) int {
	j := i + 1
	if j >= len(body) || body[j] != '/' {
		return 0
	}
	j = skipTagSpace(body, j+1)
	for k := 0; k < len(payloadTagName); k++ {
		if j >= len(body) {
			return 0
		}
		r, size := utf8.DecodeRuneInString(body[j:])
		if !foldsTo(r, payloadTagName[k]) {
			return 0
		}
		j += size
	}
	if j < len(body) {
		if r, _ := utf8.DecodeRuneInString(body[j:]); continuesTagName(r) {
			return 0
		}
	}
	return j - i
}

// skipTagSpace skips space, tab, CR, LF and form feed from body[j].
func skipTagSpace(body string, j int) int {
	for j < len(body) && isTagSpace(body[j]) {
		j++
	}
	return j
}

func isTagSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'
}

// continuesTagName tells whether r, right after "webhook-payload", makes
// the name another one: a letter, a digit, "-", "_", "." or ":" (what XML
// names continue with; HTML's tag names run to white space, "/" or ">", so
// anything else is caught).
func continuesTagName(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' || r == ':'
}

// foldsTo tells whether r is c under Unicode simple case folding, as
// strings.EqualFold compares (c is a lower-case ASCII letter or '-').
func foldsTo(r rune, c byte) bool {
	if r == rune(c) {
		return true
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == rune(c) {
			return true
		}
	}
	return false
}

// composeMessage builds the text (and, for a body that is not valid UTF-8,
// the file) of a run's message: prompt, a blank line, the opening tag, a
// newline, the body, a newline, the closing tag.
func composeMessage(prompt string, body []byte, contentType string) (string, *a2a.File) {
	if utf8.Valid(body) {
		return prompt + "\n\n" + payloadOpen + "\n" + neutralizeClosingTags(string(body)) + "\n" + payloadClose, nil
	}
	// The caller chose the Content-Type: only a well-formed media type
	// goes into the wrapper, never raw text, and the file part is always
	// application/octet-stream (a "text/plain" part of bytes that are not
	// text would reach the agent as text, outside the wrapper).
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		contentType = mt
	} else {
		contentType = binaryMediaType
	}
	note := fmt.Sprintf("[The payload is %d bytes that are not UTF-8 text (sent as Content-Type %s); it is attached as the file %q (%s).]",
		len(body), contentType, payloadFileName, binaryMediaType)
	return prompt + "\n\n" + payloadOpen + "\n" + note + "\n" + payloadClose,
		&a2a.File{Name: payloadFileName, MediaType: binaryMediaType, Bytes: body}
}

// runMetadata is the object sent under MetadataKey; with the run's fields
// (its endpoint's spec.fields) "fields" and "fieldErrors" (an empty list
// when every field has its value).
func runMetadata(run *agentsv1alpha1.AgentRun, model, threadTitle string, p payload) map[string]any {
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
	if p.fields != nil {
		m["fields"] = p.fields
		m["fieldErrors"] = append([]string{}, p.fieldErrors...)
	}
	return map[string]any{MetadataKey: m}
}

// senderMetadata is the "sender" object: always the type (Header for runs
// recorded before senders existed), the event and delivery ID when known,
// and a CloudEvent's source and subject. An OIDC sender's subject is its
// verified token's sub (DESIGN.md section 11); a CloudEvent's own subject
// attribute is then eventSubject.
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
	if s.Source != "" {
		m["source"] = s.Source
	}
	if s.Subject != "" {
		m["subject"] = s.Subject
	}
	if s.TokenSubject != "" {
		if s.Subject != "" {
			m["eventSubject"] = s.Subject
		}
		m["subject"] = s.TokenSubject
	}
	return m
}
