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

package senders

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookrun/hookrun/receiver/internal/answer"
)

// The CloudEvents sender type (DESIGN.md section 10): CloudEvents 1.0 over
// the HTTP protocol binding, with the secret as a Bearer token. A call is
// one event, in binary mode (the attributes in ce-* headers, the body is the
// event's data) or in structured mode (Content-Type
// application/cloudevents+json, the body is the whole event). Header values
// are taken as sent, not percent-decoded, as the CloudEvents Go SDK reads
// them.

// ceSpecVersion is the one CloudEvents version the receiver takes.
const ceSpecVersion = "1.0"

// maxSourceBytes and maxSubjectBytes bound what a run records of an
// event's source and subject (longer values are cut; the run name is
// derived from the whole source).
const (
	maxSourceBytes  = 256
	maxSubjectBytes = 256
)

// The binary-mode attribute headers, in canonical form.
var (
	hdrCESpecVersion = http.CanonicalHeaderKey("ce-specversion")
	hdrCEID          = http.CanonicalHeaderKey("ce-id")
	hdrCESource      = http.CanonicalHeaderKey("ce-source")
	hdrCEType        = http.CanonicalHeaderKey("ce-type")
	hdrCESubject     = http.CanonicalHeaderKey("ce-subject")
)

// The headers of the abuse-protection handshake of the CloudEvents HTTP
// webhook spec, in canonical form.
var (
	HeaderWebHookRequestOrigin = http.CanonicalHeaderKey("WebHook-Request-Origin")
	HeaderWebHookAllowedOrigin = http.CanonicalHeaderKey("WebHook-Allowed-Origin")
	HeaderWebHookAllowedRate   = http.CanonicalHeaderKey("WebHook-Allowed-Rate")
)

// The media types of the structured and batched modes (JSON format).
const (
	mediaCloudEvents      = "application/cloudevents"
	mediaCloudEventsJSON  = "application/cloudevents+json"
	mediaCloudEventsBatch = "application/cloudevents-batch"
)

var (
	answerNotCloudEvent = answer.New(http.StatusBadRequest, answer.CodeBadRequest,
		"Not a CloudEvent: specversion 1.0, id, source and type are required (ce-* headers in binary mode, JSON members in structured mode)")
	answerCloudEventString = answer.New(http.StatusBadRequest, answer.CodeBadRequest,
		"A CloudEvents attribute holds a character the String type excludes (a control character, a surrogate or a noncharacter), or is not UTF-8")
	answerCloudEventsBatch = answer.New(http.StatusUnsupportedMediaType, answer.CodeUnsupportedMediaType,
		"CloudEvents batch mode is not supported: send one event per request, in binary or structured (application/cloudevents+json) mode")
	answerCloudEventsFormat = answer.New(http.StatusUnsupportedMediaType, answer.CodeUnsupportedMediaType,
		"Only the JSON event format is supported in structured mode (application/cloudevents+json)")
)

const (
	reasonNotCloudEvent     = "not a CloudEvents 1.0 event"
	reasonCloudEventString  = "CloudEvents attribute not a String"
	reasonCloudEventsBatch  = "CloudEvents batch"
	reasonCloudEventsFormat = "CloudEvents structured format not JSON"
)

// The refusals of a call to a CloudEvents endpoint that is not one
// CloudEvents 1.0 event: 400 without specversion 1.0, id, source or type,
// 400 for an attribute that is not a CloudEvents String, 415 for a batch
// or a structured format other than JSON.
var (
	refusedNotCloudEvent    = &Refusal{answerNotCloudEvent, reasonNotCloudEvent}
	refusedCloudEventString = &Refusal{answerCloudEventString, reasonCloudEventString}
	refusedCloudEventsBatch = &Refusal{answerCloudEventsBatch, reasonCloudEventsBatch}
	refusedCloudEventFormat = &Refusal{answerCloudEventsFormat, reasonCloudEventsFormat}
)

// ceMode is how a call carries its event, as its Content-Type tells.
type ceMode uint8

const (
	// ceBinary: anything but application/cloudevents...
	ceBinary ceMode = iota
	ceStructured
	ceBatched
	// ceOtherFormat: structured in another format than JSON.
	ceOtherFormat
)

func ceModeOf(h http.Header) ceMode {
	ct := h["Content-Type"]
	if len(ct) == 0 {
		return ceBinary
	}
	media, _, _ := strings.Cut(ct[0], ";")
	media = strings.ToLower(strings.TrimSpace(media))
	switch {
	case media == mediaCloudEventsJSON:
		return ceStructured
	case strings.HasPrefix(media, mediaCloudEventsBatch):
		return ceBatched
	case strings.HasPrefix(media, mediaCloudEvents):
		return ceOtherFormat
	}
	return ceBinary
}

// ceAttributes are the attributes of an event the receiver reads.
type ceAttributes struct {
	SpecVersion, ID, Source, Type, Subject string
}

// field is where the attribute named name (exactly, lower case as the spec
// names them) is read into; nil for any other member.
func (a *ceAttributes) field(name string) *string {
	switch name {
	case "specversion":
		return &a.SpecVersion
	case "id":
		return &a.ID
	case "source":
		return &a.Source
	case "type":
		return &a.Type
	case "subject":
		return &a.Subject
	}
	return nil
}

// valid tells whether every attribute is a CloudEvents String: no
// character the type excludes (controls U+0000–U+001F and U+007F–U+009F,
// surrogates, noncharacters) and valid UTF-8. Such a character would reach
// the agent's metadata outside the payload wrapper.
func (a *ceAttributes) valid() bool {
	return CEString(a.SpecVersion) && CEString(a.ID) && CEString(a.Source) && CEString(a.Type) && CEString(a.Subject)
}

// ceString tells whether s is a value of the CloudEvents String type:
// valid UTF-8 without the characters the type excludes.
func CEString(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1: // not UTF-8
			return false
		case r <= 0x1F, r >= 0x7F && r <= 0x9F: // controls
			return false
		case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE: // noncharacters
			return false
		}
		// Surrogates (U+D800–U+DFFF) are not valid UTF-8: RuneError above.
		i += size
	}
	return true
}

// readStructured reads the attributes of a structured event from its
// members, by their exact names, and skips every other member (data above
// all) where it is, in the body: what a call allocates beyond its body is
// the decoder and the attributes, not a copy of each member. A member of
// another type than string (null is none), or a body that is not one JSON
// object, is no event. Of a member written twice the last counts, as in
// encoding/json (telling names apart would keep a set of them).
func readStructured(body []byte, a *ceAttributes) *Refusal {
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '{' {
		return refusedNotCloudEvent
	}
	var name [maxAttributeName]byte
	for dec.PeekKind() == '"' {
		raw, err := dec.ReadValue()
		if err != nil {
			return refusedNotCloudEvent
		}
		var to *string
		if len(raw) <= len(name) {
			if unquoted, err := jsontext.AppendUnquote(name[:0], raw); err == nil {
				to = a.field(string(unquoted))
			}
		}
		if to == nil {
			if dec.SkipValue() != nil {
				return refusedNotCloudEvent
			}
			continue
		}
		v, err := dec.ReadValue()
		switch {
		case err != nil:
			return refusedNotCloudEvent
		case v.Kind() == 'n':
			*to = ""
		case v.Kind() != '"':
			return refusedNotCloudEvent
		default:
			// A lone surrogate escape ("\ud800") or bytes that are not
			// UTF-8 fail to unquote: not a CloudEvents String.
			s, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return refusedCloudEventString
			}
			*to = string(s)
		}
	}
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '}' {
		return refusedNotCloudEvent
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return refusedNotCloudEvent
	}
	return nil
}

// maxAttributeName bounds a member name that may be an attribute's: the
// longest, "specversion", with every character escaped (\u0073...), and
// its quotes.
const maxAttributeName = 6*len("specversion") + 2

// describeCloudEvent reads the event type, the delivery (id and source) and
// the subject of a CloudEvents call, or its refusal: why it is not one
// event.
func DescribeCloudEvent(h http.Header, body []byte) Delivery {
	var a ceAttributes
	switch ceModeOf(h) {
	case ceBatched:
		return Delivery{Refusal: refusedCloudEventsBatch}
	case ceOtherFormat:
		return Delivery{Refusal: refusedCloudEventFormat}
	case ceStructured:
		if r := readStructured(body, &a); r != nil {
			return Delivery{Refusal: r}
		}
	default:
		a = ceAttributes{
			SpecVersion: single(h, hdrCESpecVersion), ID: single(h, hdrCEID),
			Source: single(h, hdrCESource), Type: single(h, hdrCEType), Subject: single(h, hdrCESubject),
		}
	}
	if a.SpecVersion != ceSpecVersion || a.ID == "" || a.Source == "" || a.Type == "" {
		return Delivery{Refusal: refusedNotCloudEvent}
	}
	if !a.valid() {
		return Delivery{Refusal: refusedCloudEventString}
	}
	return Delivery{
		Event: a.Type, DeliveryID: a.ID,
		Source:  Recordable(a.Source, maxSourceBytes),
		Subject: Recordable(a.Subject, maxSubjectBytes),
		// The delivery is source and id together: the length of source
		// first, so that no other source and id give the same key.
		Key: strconv.Itoa(len(a.Source)) + ":" + a.Source + a.ID,
	}
}
