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

package a2apeers

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Kagent is an agent as kagent's controller serves each kagent Agent since
// its move to A2A 1.0 (kagent-dev/kagent#2354): under
// /api/a2a/{namespace}/{name}/ only, its URL. A GET of any path there ending
// in /.well-known/agent-card.json is the card, a 1.0 card whose one
// interface is JSON-RPC 1.0 at the URL (kagent names its controller's
// advertised address and the agent's path); anything else there is
// JSON-RPC 1.0 of a2a-go/v2, refused with HTTP 400 without header
// A2A-Version: 1.0, as kagent does. The origin serves no card.
func Kagent(namespace, name string, opts ...Option) *Peer {
	cfg := newConfig(opts)
	p := newPeer(cfg)
	path := "/api/a2a/" + namespace + "/" + name
	p.URL = strings.TrimSuffix(p.URL, "/") + path + "/"
	card := p.v1Card(a2a.TransportProtocolJSONRPC, cfg)
	if card == nil {
		card = http.NotFoundHandler()
	}
	jsonrpc := a2asrv.NewJSONRPCHandler(&v1Handler{RequestHandler: a2asrv.NewHandler(v1Echo{p}), p: p, refuse: cfg.refuse})
	agent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, cardPath) {
			card.ServeHTTP(w, r)
			return
		}
		switch v := r.Header.Get(a2a.SvcParamVersion); v {
		case string(a2a.Version):
		case "":
			http.Error(w, fmt.Sprintf("missing required %s header; expected %q", a2a.SvcParamVersion, a2a.Version), http.StatusBadRequest)
			return
		default:
			http.Error(w, fmt.Sprintf("unsupported %s %q; expected %q", a2a.SvcParamVersion, v, a2a.Version), http.StatusBadRequest)
			return
		}
		jsonrpc.ServeHTTP(w, r)
	})
	mux := http.NewServeMux()
	// kagent routes the path with and without the slash, and redirects neither.
	mux.Handle(path, agent)
	mux.Handle(path+"/", agent)
	return p.start(mux)
}
