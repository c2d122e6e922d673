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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/hookrun/hookrun/test/a2apeers"
)

// benchText is a message as the dispatcher sends one: a prompt and a
// payload of about 1 KiB.
var benchText = wrapped("bench\n" + strings.Repeat(`{"key":"value","n":12345},`, 40))

var benchMeta = map[string]any{"https://hookrun.dev/a2a/webhook-run/v1": map[string]any{
	"runId": "github-issues-01m8114gv2mdj5yknfcdv1tk6x", "endpoint": "github-issues", "owner": "alice", "trust": "High",
}}

// benchWire is a version and binding, the peer that speaks it and the
// SDK client's options for it.
type benchWire struct {
	name    string
	start   func(...a2apeers.Option) *a2apeers.Peer
	version Version
	binding Binding
	sdk     func(hc *http.Client) a2aclient.FactoryOption
}

var benchWires = []benchWire{
	{"1.0-JSONRPC", a2apeers.V1JSONRPC, V10, BindingJSONRPC, a2aclient.WithJSONRPCTransport},
	{"1.0-HTTP+JSON", a2apeers.V1HTTPJSON, V10, BindingHTTPJSON, a2aclient.WithRESTTransport},
	{"0.3-JSONRPC", a2apeers.V03, V03, BindingJSONRPC, func(hc *http.Client) a2aclient.FactoryOption {
		return a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc})
	}},
}

// BenchmarkSDK compares hookrun's client with the SDK's (a2aclient of
// a2a-go/v2, with a2av0 for 0.3; both given the same HTTP client) on the
// dispatcher's work, a non-blocking send and a get of its task, over each
// version and binding, on loopback. "agent": against the SDK's own agent,
// whose work is in every figure; "replay": against a server that replays
// that agent's answers, so the figures are the clients' own.
func BenchmarkSDK(b *testing.B) {
	for _, w := range benchWires {
		p := w.start()
		b.Cleanup(p.Close)
		send, get := recordAnswers(b, p.URL, w)
		replay := httptest.NewServer(replayHandler(send, get))
		b.Cleanup(replay.Close)
		for _, server := range []struct{ name, url string }{{"agent", p.URL}, {"replay", replay.URL + "/"}} {
			hc := NewHTTPClient(nil, DefaultTimeout)
			ours := &Client{URL: server.url, Version: w.version, Binding: w.binding, HTTP: hc, Headers: map[string]string{"X-User-Id": "alice"}}
			theirs, err := a2aclient.NewFromEndpoints(b.Context(), []*sdk.AgentInterface{{
				URL: server.url, ProtocolBinding: sdk.TransportProtocol(w.binding), ProtocolVersion: sdk.ProtocolVersion(w.version),
			}}, w.sdk(hc))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(server.name+"/"+w.name+"/hookrun", func(b *testing.B) {
				benchLoop(b, func(ctx context.Context, i int) error { return oursSendGet(ctx, ours, i) })
			})
			b.Run(server.name+"/"+w.name+"/a2aclient", func(b *testing.B) {
				benchLoop(b, func(ctx context.Context, i int) error { return sdkSendGet(ctx, theirs, i) })
			})
		}
	}
}

func benchLoop(b *testing.B, call func(ctx context.Context, i int) error) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := call(b.Context(), i); err != nil {
			b.Fatal(err)
		}
	}
}

func oursSendGet(ctx context.Context, c *Client, i int) error {
	task, err := c.SendMessage(ctx, Message{MessageID: fmt.Sprint("ours-", i), ContextID: "bench", Text: benchText, Metadata: benchMeta})
	if err != nil {
		return err
	}
	_, err = c.GetTask(ctx, task.ID)
	return err
}

func sdkSendGet(ctx context.Context, c *a2aclient.Client, i int) error {
	msg := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(benchText))
	msg.ID, msg.ContextID, msg.Metadata = fmt.Sprint("sdk-", i), "bench", benchMeta
	res, err := c.SendMessage(ctx, &sdk.SendMessageRequest{Message: msg, Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		return err
	}
	task, ok := res.(*sdk.Task)
	if !ok {
		return fmt.Errorf("the send answered %T, not a task", res)
	}
	_, err = c.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID})
	return err
}

// recordAnswers is what the agent at url answers a send, and a get of the
// task once it completed.
func recordAnswers(b *testing.B, url string, w benchWire) (send, get []byte) {
	rec := &answerRecorder{}
	c := &Client{URL: url, Version: w.version, Binding: w.binding, HTTP: &http.Client{Transport: rec}}
	task, err := c.SendMessage(b.Context(), Message{MessageID: "record", ContextID: "bench", Text: benchText, Metadata: benchMeta})
	if err != nil {
		b.Fatal(err)
	}
	for task.State != StateCompleted {
		if task, err = c.GetTask(b.Context(), task.ID); err != nil {
			b.Fatal(err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.bodies[0], rec.bodies[len(rec.bodies)-1]
}

// answerRecorder is an HTTP transport that keeps every answer's body.
type answerRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *answerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// replayHandler answers sends with send and everything else with get,
// JSON-RPC answers with the id of the request, as the agent would.
func replayHandler(send, get []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		answer := get
		if strings.HasSuffix(r.URL.Path, "/message:send") ||
			bytes.Contains(body, []byte(`"SendMessage"`)) || bytes.Contains(body, []byte(`"message/send"`)) {
			answer = send
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &req) == nil && len(req.ID) > 0 {
			answer = withID(answer, req.ID)
		}
		_, _ = w.Write(answer)
	})
}

// withID is a JSON-RPC answer with its id replaced.
func withID(answer []byte, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(answer, &m); err != nil {
		return answer
	}
	m["id"] = id
	out, err := json.Marshal(m)
	if err != nil {
		return answer
	}
	return out
}
