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
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
)

// echoAgent is an a2a-go agent (A2A 0.3): it answers "echo: <text>" plus
// what it saw of files and metadata, fails for "fail", and works until
// canceled for "hang".
type echoAgent struct {
	mu      sync.Mutex
	headers []http.Header
}

func (a *echoAgent) Execute(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	var text string
	var files []string
	for _, p := range reqCtx.Message.Parts {
		switch p := p.(type) {
		case sdk.TextPart:
			text += p.Text
		case sdk.FilePart:
			if fb, ok := p.File.(sdk.FileBytes); ok {
				raw, err := base64.StdEncoding.DecodeString(fb.Bytes)
				if err != nil {
					return err
				}
				files = append(files, fmt.Sprintf("%s %s %q", fb.Name, fb.MimeType, raw))
			}
		}
	}
	if reqCtx.StoredTask == nil {
		if err := q.Write(ctx, sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateSubmitted, nil)); err != nil {
			return err
		}
	}
	switch text {
	case "fail":
		ev := sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateFailed, sdk.NewMessage(sdk.MessageRoleAgent, sdk.TextPart{Text: "the agent broke"}))
		ev.Final = true
		return q.Write(ctx, ev)
	case "hang":
		if err := q.Write(ctx, sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateWorking, nil)); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	}
	meta, _ := json.Marshal(reqCtx.Message.Metadata)
	out := fmt.Sprintf("echo: %s | files: %s | metadata: %s | context: %v", text, strings.Join(files, ","), meta, reqCtx.Message.ContextID != "")
	if err := q.Write(ctx, sdk.NewArtifactEvent(reqCtx, sdk.TextPart{Text: out})); err != nil {
		return err
	}
	ev := sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateCompleted, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

func (a *echoAgent) Cancel(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

func newSDKServer(t *testing.T) (*httptest.Server, *echoAgent) {
	t.Helper()
	agent := &echoAgent{}
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent.mu.Lock()
		agent.headers = append(agent.headers, r.Header.Clone())
		agent.mu.Unlock()
		rpc.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, agent
}

// waitFor polls a task until it is terminal.
func waitFor(t *testing.T, c *Client, id string) *Task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		task, err := c.GetTask(t.Context(), id)
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		if task.State.Terminal() {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s after 10s", id, task.State)
		}
		<-tick.C
	}
}

func TestV03AgainstA2AGoServer(t *testing.T) {
	srv, agent := newSDKServer(t)
	c := &Client{URL: srv.URL, Version: V03, Token: "tok", Headers: map[string]string{"X-User-Id": "alice"}}

	task, err := c.SendMessage(t.Context(), Message{
		MessageID: "run-uid-1", ContextID: "ctx-1", Text: "hello",
		File:     &File{Name: "payload.bin", MediaType: "application/octet-stream", Bytes: []byte{0, 0xff, 'x'}},
		Metadata: map[string]any{"https://hookrun.dev/a2a/webhook-run/v1": map[string]any{"runId": "r1"}},
	})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if task.ID == "" {
		t.Fatal("no task id")
	}
	done := waitFor(t, c, task.ID)
	if done.State != StateCompleted {
		t.Fatalf("state %s, want completed", done.State)
	}
	for _, want := range []string{"echo: hello", `payload.bin application/octet-stream "\x00\xffx"`, `"runId":"r1"`, "context: true"} {
		if !strings.Contains(done.Output, want) {
			t.Errorf("output %q lacks %q", done.Output, want)
		}
	}
	if done.ContextID != "ctx-1" {
		t.Errorf("context %q, want ctx-1 (the one sent)", done.ContextID)
	}
	agent.mu.Lock()
	h := agent.headers[0]
	agent.mu.Unlock()
	if h.Get("Authorization") != "Bearer tok" || h.Get("X-User-Id") != "alice" || h.Get("A2A-Version") != "" {
		t.Errorf("headers %v: want bearer token, X-User-Id and no A2A-Version for 0.3", h)
	}

	failed, err := c.SendMessage(t.Context(), Message{MessageID: "run-uid-2", Text: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, c, failed.ID); got.State != StateFailed || got.StatusText != "the agent broke" {
		t.Errorf("failing agent: %+v", got)
	}

	hung, err := c.SendMessage(t.Context(), Message{MessageID: "run-uid-3", Text: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelTask(t.Context(), hung.ID); err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if got := waitFor(t, c, hung.ID); got.State != StateCanceled {
		t.Errorf("canceled task is %s", got.State)
	}

	_, err = c.GetTask(t.Context(), "no-such-task")
	if err == nil || IsRetryable(err) {
		t.Errorf("unknown task: err %v, want a final error", err)
	}
}
