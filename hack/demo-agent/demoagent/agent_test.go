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

package demoagent

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookrun/hookrun/controllers/a2a"
)

func TestDemoAgentSpeaksBothVersions(t *testing.T) {
	ag := New()
	srv := httptest.NewServer(ag)
	defer srv.Close()
	for _, v := range []a2a.Version{a2a.V03, a2a.V10} {
		c := &a2a.Client{URL: srv.URL, Version: v}
		poll := func(id string) *a2a.Task {
			t.Helper()
			deadline := time.Now().Add(5 * time.Second)
			for {
				task, err := c.GetTask(t.Context(), id)
				if err != nil {
					t.Fatalf("%s GetTask: %v", v, err)
				}
				if task.State.Terminal() || time.Now().After(deadline) {
					return task
				}
			}
		}
		task, err := c.SendMessage(t.Context(), a2a.Message{
			MessageID: "m-" + string(v), Text: "Triage.\n\n<webhook-payload>\n{\"a\":1}\nsecond line\n</webhook-payload>",
		})
		if err != nil {
			t.Fatalf("%s SendMessage: %v", v, err)
		}
		done := poll(task.ID)
		if done.State != a2a.StateCompleted || done.Output != `Demo agent received 19 bytes (text). First line: {"a":1}` {
			t.Errorf("%s: %+v", v, done)
		}

		bin, _ := c.SendMessage(t.Context(), a2a.Message{MessageID: "b" + string(v), Text: "x", File: &a2a.File{MediaType: "image/png", Bytes: []byte{0x89, 'P'}}})
		if got := poll(bin.ID); !strings.Contains(got.Output, "2 bytes (image/png file)") {
			t.Errorf("%s binary: %+v", v, got)
		}

		failed, _ := c.SendMessage(t.Context(), a2a.Message{MessageID: "f" + string(v), Text: "<webhook-payload>\ndemo:fail\n</webhook-payload>"})
		if got := poll(failed.ID); got.State != a2a.StateFailed {
			t.Errorf("%s demo:fail: %+v", v, got)
		}

		hung, _ := c.SendMessage(t.Context(), a2a.Message{MessageID: "h" + string(v), Text: "<webhook-payload>\ndemo:hang\n</webhook-payload>"})
		if got, _ := c.GetTask(t.Context(), hung.ID); got.State != a2a.StateWorking {
			t.Errorf("%s demo:hang: %+v", v, got)
		}
		if got, err := c.CancelTask(t.Context(), hung.ID); err != nil || got.State != a2a.StateCanceled {
			t.Errorf("%s cancel: %+v %v", v, got, err)
		}
	}
	if ag.Seen("m-0.3") != 1 || ag.Seen("m-1.0") != 1 {
		t.Errorf("messages seen %v", ag.seen)
	}
}

func TestDemoAgentDedupesByMessageID(t *testing.T) {
	ag := New()
	srv := httptest.NewServer(ag)
	defer srv.Close()
	c := &a2a.Client{URL: srv.URL, Version: a2a.V10}
	msg := a2a.Message{MessageID: "run-uid", Text: "<webhook-payload>\n{}\n</webhook-payload>"}
	first, err := c.SendMessage(t.Context(), msg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.SendMessage(t.Context(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || ag.Tasks() != 1 || ag.Seen("run-uid") != 2 {
		t.Errorf("sent twice: tasks %q and %q, %d tasks made, seen %d times; want one task seen twice", first.ID, again.ID, ag.Tasks(), ag.Seen("run-uid"))
	}
}

func TestDemoAgentForgetsTheOldestBeyondRemember(t *testing.T) {
	m := map[string]int{}
	var order []string
	for i := range Remember + 5 {
		k := strconv.Itoa(i)
		m[k] = i
		remember(m, &order, k)
	}
	if len(m) != Remember || len(order) != Remember {
		t.Fatalf("kept %d keys (%d in order), want %d", len(m), len(order), Remember)
	}
	if _, ok := m["4"]; ok {
		t.Error("key 4 is among the oldest and should be forgotten")
	}
	if _, ok := m["5"]; !ok {
		t.Error("key 5 should be kept")
	}
}
