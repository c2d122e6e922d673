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
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestDialectFor(t *testing.T) {
	for v, want := range map[Version]dialect{
		V03: dialectV03{}, V10: dialectV10{}, "": dialectV03{}, "2.0": dialectV03{},
	} {
		if got := dialectFor(v); got != want {
			t.Errorf("dialectFor(%q) = %T, want %T", v, got, want)
		}
	}
}

func TestDialectMethodsAndHeaders(t *testing.T) {
	cases := []struct {
		d       dialect
		methods methods
		version string // the A2A-Version header, "" for none
	}{
		{dialectV03{}, methods{send: "message/send", get: "tasks/get", cancel: "tasks/cancel"}, ""},
		{dialectV10{}, methods{send: "SendMessage", get: "GetTask", cancel: "CancelTask"}, "1.0"},
	}
	for _, tc := range cases {
		if got := tc.d.methods(); got != tc.methods {
			t.Errorf("%T methods %+v, want %+v", tc.d, got, tc.methods)
		}
		h := http.Header{}
		tc.d.setHeaders(h)
		if got := h.Get("A2A-Version"); got != tc.version || len(h) > 1 {
			t.Errorf("%T headers %v, want A2A-Version %q and nothing else", tc.d, h, tc.version)
		}
	}
}

func TestDialectSendParams(t *testing.T) {
	msg := Message{
		MessageID: "uid", ContextID: "ctx", Text: "hello",
		File:     &File{Name: "body", MediaType: "application/octet-stream", Bytes: []byte{0xc3, 0x28}},
		Metadata: map[string]any{"k": "v"},
	}
	cases := []struct {
		d    dialect
		want string
	}{
		{dialectV03{}, `{"configuration":{"blocking":false},"message":{"kind":"message","messageId":"uid","contextId":"ctx",
			"role":"user","metadata":{"k":"v"},"parts":[{"kind":"text","text":"hello"},
			{"kind":"file","file":{"bytes":"wyg=","mimeType":"application/octet-stream","name":"body"}}]}}`},
		{dialectV10{}, `{"configuration":{"returnImmediately":true},"message":{"messageId":"uid","contextId":"ctx",
			"role":"ROLE_USER","metadata":{"k":"v"},"parts":[{"text":"hello","mediaType":"text/plain"},
			{"raw":"wyg=","filename":"body","mediaType":"application/octet-stream"}]}}`},
	}
	for _, tc := range cases {
		raw, err := json.Marshal(tc.d.sendParams(msg))
		if err != nil {
			t.Fatalf("%T: %v", tc.d, err)
		}
		var got, want any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T params\n got %s\nwant %s", tc.d, raw, tc.want)
		}
	}
}

func TestDialectDecodeSendResult(t *testing.T) {
	// task is a task's members without braces, in either version's spelling.
	task := func(state, role string) string {
		return fmt.Sprintf(`"id":"t1","contextId":"c1","status":{"state":%q,"message":{"messageId":"m","role":%q,"parts":[{"text":"on it"}]}}`, state, role)
	}
	cases := []struct {
		name, raw string
		d         dialect
		want      *Task  // nil when an error is expected
		wantErr   string // part of the error's text
	}{
		{"0.3 task", `{"kind":"task",` + task("working", "agent") + `}`, dialectV03{},
			&Task{ID: "t1", ContextID: "c1", State: StateWorking, StatusText: "on it", Output: "on it"}, ""},
		{"0.3 message", `{"kind":"message","messageId":"m","contextId":"c1","taskId":"t1","role":"agent","parts":[{"kind":"text","text":"done"}]}`,
			dialectV03{}, &Task{ID: "t1", ContextID: "c1", State: StateCompleted, Output: "done"}, ""},
		{"0.3 wrapped as 1.0", `{"task":{` + task("working", "agent") + `}}`, dialectV03{}, nil, "task without an id"},
		{"0.3 not JSON", `[`, dialectV03{}, nil, "decoding the result"},
		{"1.0 task", `{"task":{` + task("TASK_STATE_SUBMITTED", "ROLE_AGENT") + `}}`, dialectV10{},
			&Task{ID: "t1", ContextID: "c1", State: StateSubmitted, StatusText: "on it", Output: "on it"}, ""},
		{"1.0 message", `{"message":{"messageId":"m","contextId":"c1","role":"ROLE_AGENT","parts":[{"text":"done"}]}}`,
			dialectV10{}, &Task{ContextID: "c1", State: StateCompleted, Output: "done"}, ""},
		{"1.0 task without id", `{"task":{"status":{"state":"TASK_STATE_WORKING"}}}`, dialectV10{}, nil, "task without an id"},
		{"1.0 unwrapped as 0.3", `{"kind":"task",` + task("working", "agent") + `}`, dialectV10{},
			nil, "neither a task nor a message"},
		{"1.0 not JSON", `[`, dialectV10{}, nil, "decoding the result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.d.decodeSendResult(json.RawMessage(tc.raw))
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
