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
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// TestStructuredCloudEventNamesAreExact: structured mode reads the
// attributes by their exact (lower-case) names, as the agent and the SDKs
// read them; encoding/json's case-insensitive field matching would take
// "ID" for "id", and the last of the two as the delivery.
func TestStructuredCloudEventNamesAreExact(t *testing.T) {
	h := http.Header{"Content-Type": {"application/cloudevents+json"}}
	const ok = `"specversion":"1.0","source":"/s","type":"t"`
	for _, tc := range []struct {
		body   string
		wantID string // "" means no event
	}{
		{`{` + ok + `,"id":"a"}`, "a"},
		{`{` + ok + `,"id":"a","ID":"b"}`, "a"},
		{`{` + ok + `,"ID":"b"}`, ""},
		{`{"SpecVersion":"1.0","id":"a","source":"/s","type":"t"}`, ""},
		{`{` + ok + `,"id":7}`, ""},
		{`{` + ok + `,"id":"a","subject":1}`, ""},
		{`[]`, ""},
	} {
		d := DescribeCloudEvent(h, []byte(tc.body))
		switch {
		case tc.wantID == "" && d.Refusal != refusedNotCloudEvent:
			t.Errorf("%s: taken as event %q, want 400", tc.body, d.DeliveryID)
		case tc.wantID != "" && (d.Refusal != nil || d.DeliveryID != tc.wantID):
			t.Errorf("%s: delivery %q (refusal %v), want %q", tc.body, d.DeliveryID, d.Refusal, tc.wantID)
		}
	}
}

// An attribute holding a character the CloudEvents String type excludes
// (controls U+0000–U+001F and U+007F–U+009F, surrogates, noncharacters),
// or bytes that are not UTF-8, is no event the receiver takes, in either
// mode: it would reach the agent's metadata outside the payload wrapper.
func TestCloudEventAttributesAreStrings(t *testing.T) {
	for _, c := range []struct {
		name  string
		value string // as it reaches a header; JSON-escaped in structured mode
		ok    bool
	}{
		{"plain", "a/b:c-1", true},
		{"non-ASCII", "urn:é→😀", true},
		{"U+FFFD sent as such", "a\uFFFDb", true},
		{"NUL", "a\x00b", false},
		{"tab", "a\tb", false},
		{"newline", "a\nb", false},
		{"U+001F", "a\x1fb", false},
		{"DEL", "a\x7fb", false},
		{"U+0085", "a\u0085b", false},
		{"U+009F", "a\u009fb", false},
		{"U+FDD0", "a\uFDD0b", false},
		{"U+FFFE", "a\uFFFEb", false},
		{"U+1FFFF", "a\U0001FFFFb", false},
		{"not UTF-8", "a\xffb", false},
		{"an encoded surrogate", "a\xed\xa0\x80b", false},
	} {
		for _, attr := range []string{"id", "source", "type", "subject"} {
			binary := http.Header{}
			for _, a := range []string{"id", "source", "type"} {
				binary.Set("ce-"+a, "x")
			}
			binary.Set("ce-specversion", "1.0")
			binary.Set("ce-"+attr, c.value)
			value, _ := json.Marshal(c.value)
			members := map[string]json.RawMessage{"specversion": json.RawMessage(`"1.0"`), "id": json.RawMessage(`"x"`), "source": json.RawMessage(`"x"`), "type": json.RawMessage(`"x"`)}
			members[attr] = value
			if !utf8.ValidString(c.value) {
				members[attr] = json.RawMessage(`"` + c.value + `"`) // the bytes as sent
			}
			body, _ := json.Marshal(members)
			for mode, d := range map[string]Delivery{
				"binary":     DescribeCloudEvent(binary, nil),
				"structured": DescribeCloudEvent(http.Header{"Content-Type": {"application/cloudevents+json"}}, body),
			} {
				if got := d.Refusal == nil; got != c.ok {
					t.Errorf("%s in %s, %s mode: event %v (refusal %v), want %v", c.name, attr, mode, got, d.Refusal, c.ok)
				} else if !c.ok && d.Refusal != refusedCloudEventString {
					t.Errorf("%s in %s, %s mode: refusal %v, want refusedCloudEventString", c.name, attr, mode, d.Refusal)
				}
			}
		}
	}
	// A lone surrogate escape decodes to U+FFFD: a replacement, not what was sent.
	for _, body := range []string{
		`{"specversion":"1.0","id":"a\ud800b","source":"x","type":"t"}`,
		`{"specversion":"1.0","id":"a\uDFFF","source":"x","type":"t"}`,
	} {
		if d := DescribeCloudEvent(http.Header{"Content-Type": {"application/cloudevents+json"}}, []byte(body)); d.Refusal != refusedCloudEventString {
			t.Errorf("%s: refusal %v, want refusedCloudEventString", body, d.Refusal)
		}
	}
	for _, body := range []string{
		`{"specversion":"1.0","id":"a\ud83d\ude00","source":"x","type":"t"}`,
		`{"specversion":"1.0","id":"a\ufffd","source":"x","type":"t"}`,
	} {
		if d := DescribeCloudEvent(http.Header{"Content-Type": {"application/cloudevents+json"}}, []byte(body)); d.Refusal != nil {
			t.Errorf("%s: refusal %v, want an event", body, d.Refusal)
		}
	}
}

// Reading a structured event keeps none of its members but the attributes
// it reads: what one call allocates stays within a small multiple of its
// body however the body is built (a million tiny members, a large data).
func TestStructuredCloudEventMemory(t *testing.T) {
	h := http.Header{"Content-Type": {"application/cloudevents+json"}}
	head := `{"specversion":"1.0","id":"1","source":"urn:s","type":"t"`
	var members, elements strings.Builder
	for i := 0; members.Len() < agentsv1alpha1.MaxPayloadBytes-100; i++ {
		fmt.Fprintf(&members, `,"m%d":0`, i)
	}
	for elements.Len() < agentsv1alpha1.MaxPayloadBytes-100 {
		elements.WriteString(`{},`)
	}
	for name, body := range map[string]string{
		"many members":  head + members.String() + "}",
		"a large data":  head + `,"data":"` + strings.Repeat("a", agentsv1alpha1.MaxPayloadBytes-100) + `"}`,
		"many elements": head + `,"data":[` + elements.String() + `{}]}`,
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d := DescribeCloudEvent(h, []byte(body))
		runtime.ReadMemStats(&after)
		if d.Refusal != nil || d.DeliveryID != "1" {
			t.Fatalf("%s: refusal %v, delivery %q", name, d.Refusal, d.DeliveryID)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(2*len(body)) {
			t.Errorf("%s: %d bytes allocated for a body of %d, want at most twice the body", name, got, len(body))
		}
	}
}
