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
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// testAgent is a real A2A 0.3 peer (a2a-go's server). It answers with the
// text it received; a payload starting with "hang" keeps the task working
// until canceled, "fail" fails it.
type testAgent struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
	// inflight counts unfinished "slow" tasks per context; maxInflight is its peak.
	inflight    map[string]int
	maxInflight int
	// allInflight counts unfinished "slow" tasks of the agent; maxAllInflight is its peak.
	allInflight, maxAllInflight int
	// unavailable makes the next N calls answer 503, tooMany 429; both
	// with the Retry-After header retryAfter, if it is set.
	unavailable, tooMany atomic.Int32
	retryAfter           atomic.Value // string
	// refuse makes every call answer 400 (a final error).
	refuse atomic.Bool
	// stall makes the next N calls answer 503 only after the operator's
	// per-call deadline has passed.
	stall atomic.Int32
	calls atomic.Int32
	// users maps each sent message's ID to the X-User-Id header it came with.
	users sync.Map
}

type received struct {
	messageID, contextID, text string
	file                       []byte
	metadata                   map[string]any
}

func (a *testAgent) Execute(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	var text string
	var file []byte
	for _, p := range reqCtx.Message.Parts {
		switch p := p.(type) {
		case sdk.TextPart:
			text += p.Text
		case sdk.FilePart:
			if fb, ok := p.File.(sdk.FileBytes); ok {
				file, _ = base64.StdEncoding.DecodeString(fb.Bytes)
			}
		}
	}
	a.mu.Lock()
	a.got = append(a.got, received{
		messageID: reqCtx.Message.ID, contextID: reqCtx.Message.ContextID, text: text, file: file, metadata: reqCtx.Message.Metadata,
	})
	a.mu.Unlock()
	if reqCtx.StoredTask == nil {
		if err := q.Write(ctx, sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateSubmitted, nil)); err != nil {
			return err
		}
	}
	if strings.Contains(text, "<webhook-payload>\nslow") {
		// Work a little, and note how many tasks of this context overlap.
		a.mu.Lock()
		a.inflight[reqCtx.Message.ContextID]++
		a.maxInflight = max(a.maxInflight, a.inflight[reqCtx.Message.ContextID])
		a.allInflight++
		a.maxAllInflight = max(a.maxAllInflight, a.allInflight)
		a.mu.Unlock()
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
		}
		a.mu.Lock()
		a.inflight[reqCtx.Message.ContextID]--
		a.allInflight--
		a.mu.Unlock()
	}
	switch {
	case strings.Contains(text, "<webhook-payload>\nhang"):
		if err := q.Write(ctx, sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateWorking, nil)); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	case strings.Contains(text, "<webhook-payload>\nfail"):
		ev := sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateFailed, sdk.NewMessage(sdk.MessageRoleAgent, sdk.TextPart{Text: "could not triage"}))
		ev.Final = true
		return q.Write(ctx, ev)
	}
	if err := q.Write(ctx, sdk.NewArtifactEvent(reqCtx, sdk.TextPart{Text: "triaged: " + text})); err != nil {
		return err
	}
	ev := sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateCompleted, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

func (a *testAgent) Cancel(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := sdk.NewStatusUpdateEvent(reqCtx, sdk.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

func (a *testAgent) received() []received {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]received(nil), a.got...)
}

// serveTestAgent starts a testAgent and creates Agent triage in ns for it
// (A2A 0.3, a run timeout of a minute), changed by mutate if not nil.
func serveTestAgent(ctx SpecContext, ns string, mutate func(*agentsv1alpha1.Agent)) *testAgent {
	GinkgoHelper()
	agent := newTestAgent()
	a := newAgent(ns, "triage")
	a.Spec.A2A.URL = agent.srv.URL
	a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
	a.Spec.RunTimeout = &metav1.Duration{Duration: time.Minute}
	if mutate != nil {
		mutate(a)
	}
	Expect(k8sClient.Create(ctx, a)).To(Succeed())
	return agent
}

func newTestAgent() *testAgent {
	a := &testAgent{inflight: map[string]int{}}
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(a))
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.calls.Add(1)
		if a.stall.Load() > 0 {
			a.stall.Add(-1)
			select {
			case <-time.After(testCallTimeout + time.Second):
			case <-r.Context().Done():
			}
			http.Error(w, "too slow", http.StatusServiceUnavailable)
			return
		}
		switch {
		case takeOne(&a.unavailable):
			a.turnAway(w, http.StatusServiceUnavailable)
			return
		case takeOne(&a.tooMany):
			a.turnAway(w, http.StatusTooManyRequests)
			return
		}
		if a.refuse.Load() {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		var call struct {
			Method string `json:"method"`
			Params struct {
				Message struct {
					MessageID string `json:"messageId"`
				} `json:"message"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &call) == nil && call.Method == "message/send" {
			a.users.Store(call.Params.Message.MessageID, r.Header.Get("X-User-Id"))
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rpc.ServeHTTP(w, r)
	}))
	DeferCleanup(a.srv.Close)
	return a
}

// turnAway answers status, with the Retry-After header a.retryAfter when
// it is set.
func (a *testAgent) turnAway(w http.ResponseWriter, status int) {
	if v, ok := a.retryAfter.Load().(string); ok && v != "" {
		w.Header().Set("Retry-After", v)
	}
	http.Error(w, "busy", status)
}

// takeOne takes one from n if it is above zero, and tells whether it did.
func takeOne(n *atomic.Int32) bool {
	for {
		v := n.Load()
		if v <= 0 {
			return false
		}
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}
