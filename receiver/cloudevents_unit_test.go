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

package receiver

import (
	"net/http"
	"testing"
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
		d := describeCloudEvent(h, []byte(tc.body))
		switch {
		case tc.wantID == "" && d.refusal != ceNotEvent:
			t.Errorf("%s: taken as event %q, want 400", tc.body, d.deliveryID)
		case tc.wantID != "" && (d.refusal != 0 || d.deliveryID != tc.wantID):
			t.Errorf("%s: delivery %q (refusal %v), want %q", tc.body, d.deliveryID, d.refusal, tc.wantID)
		}
	}
}
