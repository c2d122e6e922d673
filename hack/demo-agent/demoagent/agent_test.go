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
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	a2aclientv03 "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	hookrun "github.com/hookrun/hookrun/controllers/a2a"
)

// client is how a test reaches a fresh agent, and the path its calls must take.
type client struct {
	name string
	path string // the request path every call of this client uses
	dial func(t *testing.T, url string) peer
}

var clients = []client{
	{"hookrun 0.3", "/", func(_ *testing.T, url string) peer {
		return hookrunPeer{&hookrun.Client{URL: url, Version: hookrun.V03}}
	}},
	{"hookrun 1.0", "/", func(_ *testing.T, url string) peer {
		return hookrunPeer{&hookrun.Client{URL: url, Version: hookrun.V10}}
	}},
	{"a2a-go v2 JSON-RPC", "/", sdkFromCard(a2a.TransportProtocolJSONRPC)},
	{"a2a-go v2 HTTP+JSON", "/rest/", sdkFromCard(a2a.TransportProtocolHTTPJSON)},
	{"a2a-go v0.3 JSON-RPC", "/", func(t *testing.T, url string) peer {
		c, err := a2aclientv03.NewFromEndpoints(t.Context(), []a2av03.AgentInterface{{URL: url, Transport: a2av03.TransportProtocolJSONRPC}})
		if err != nil {
			t.Fatal(err)
		}
		return v03Peer{c}
	}},
}

// sdkFromCard reads the agent's card with the SDK's resolver and makes the
// SDK's client for the binding from it.
func sdkFromCard(binding a2a.TransportProtocol) func(*testing.T, string) peer {
	return func(t *testing.T, url string) peer {
		card, err := agentcard.NewResolver(http.DefaultClient).Resolve(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a2aclient.NewFromCard(t.Context(), card,
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
		if err != nil {
			t.Fatal(err)
		}
		return sdkPeer{c}
	}
}

// eachClient runs test once per client, each against an agent of its own,
// and checks that every call took the client's path.
func eachClient(t *testing.T, test func(t *testing.T, ag *Agent, p peer)) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			ag := New()
			var mu sync.Mutex
			var paths []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths = append(paths, r.URL.Path)
				mu.Unlock()
				ag.ServeHTTP(w, r)
			}))
			defer srv.Close()
			test(t, ag, c.dial(t, srv.URL))
			mu.Lock()
			defer mu.Unlock()
			for _, p := range paths {
				if p != a2aCardPath && !strings.HasPrefix(p, c.path) {
					t.Errorf("%s called %s, want calls under %s", c.name, p, c.path)
				}
			}
		})
	}
}

const a2aCardPath = "/.well-known/agent-card.json"

func wrapped(payload string) string {
	return "Triage this.\n\n<webhook-payload>\n" + payload + "\n</webhook-payload>"
}

func send(t *testing.T, p peer, m outgoing) view {
	t.Helper()
	v, err := p.send(t.Context(), m)
	if err != nil {
		t.Fatalf("send %s: %v", m.id, err)
	}
	return v
}

// poll gets the task until done says so, for at most 5 s.
func poll(t *testing.T, p peer, id string, done func(view) bool) view {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := p.get(t.Context(), id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		if done(v) || time.Now().After(deadline) {
			return v
		}
	}
}

func ended(v view) bool { return v.state.Terminal() }

func TestAnswersThePayload(t *testing.T) {
	eachClient(t, func(t *testing.T, _ *Agent, p peer) {
		sent := send(t, p, outgoing{id: "m-1", contextID: "thread-1", text: wrapped("{\"a\":1}\nsecond line")})
		got := poll(t, p, sent.id, ended)
		want := view{id: sent.id, contextID: "thread-1", state: hookrun.StateCompleted,
			text: `Demo agent received 19 bytes (text). First line: {"a":1}`}
		if got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
}

func TestAnswersAFilePart(t *testing.T) {
	eachClient(t, func(t *testing.T, _ *Agent, p peer) {
		sent := send(t, p, outgoing{id: "m-file", text: "A file.", file: []byte("PNG\nrest"), mediaType: "image/png"})
		got := poll(t, p, sent.id, ended)
		if want := "Demo agent received 8 bytes (image/png file). First line: PNG"; got.state != hookrun.StateCompleted || got.text != want {
			t.Errorf("got %+v, want completed with %q", got, want)
		}
		if got.contextID == "" {
			t.Error("a message without contextId gets a task without one; want the SDK's new one")
		}
	})
}

func TestFailsOnDemoFail(t *testing.T) {
	eachClient(t, func(t *testing.T, _ *Agent, p peer) {
		sent := send(t, p, outgoing{id: "m-fail", text: wrapped("demo:fail")})
		got := poll(t, p, sent.id, ended)
		if want := "Demo agent received 9 bytes (text). First line: demo:fail"; got.state != hookrun.StateFailed || got.text != want {
			t.Errorf("got %+v, want failed with status message %q", got, want)
		}
	})
}

func TestAsksForInputOnDemoInput(t *testing.T) {
	eachClient(t, func(t *testing.T, _ *Agent, p peer) {
		sent := send(t, p, outgoing{id: "m-input", text: wrapped("demo:input")})
		got := poll(t, p, sent.id, ended)
		if got.state != hookrun.StateInputRequired || got.text != askForInput {
			t.Errorf("got %+v, want input-required with status message %q", got, askForInput)
		}
	})
}

func TestHangsUntilCanceledOnDemoHang(t *testing.T) {
	eachClient(t, func(t *testing.T, _ *Agent, p peer) {
		sent := send(t, p, outgoing{id: "m-hang", text: wrapped("demo:hang")})
		if got := poll(t, p, sent.id, func(v view) bool { return v.state != hookrun.StateSubmitted }); got.state != hookrun.StateWorking {
			t.Fatalf("got %+v, want working", got)
		}
		canceled, err := p.cancel(t.Context(), sent.id)
		if err != nil || canceled.state != hookrun.StateCanceled {
			t.Fatalf("cancel: %+v, %v; want canceled", canceled, err)
		}
		if got := poll(t, p, sent.id, ended); got.state != hookrun.StateCanceled {
			t.Errorf("after cancel: %+v, want canceled", got)
		}
	})
}

func TestASendAgainGetsTheFirstTask(t *testing.T) {
	eachClient(t, func(t *testing.T, ag *Agent, p peer) {
		m := outgoing{id: "run-uid", contextID: "thread-1", text: wrapped("{}")}
		first, again := send(t, p, m), send(t, p, m)
		if again.id != first.id || ag.Tasks() != 1 || ag.Seen("run-uid") != 2 {
			t.Errorf("sent twice: tasks %q and %q, %d tasks made, seen %d times; want one task seen twice",
				first.id, again.id, ag.Tasks(), ag.Seen("run-uid"))
		}
	})
}
