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

// Command demo-agent is a small, deterministic A2A agent for `make dev` and
// the end-to-end suite, built on the official SDK (a2a-go v2). It serves
// A2A 1.0 over JSON-RPC at / and HTTP+JSON under /rest/, A2A 0.3 over
// JSON-RPC at / too, and its agent card at /.well-known/agent-card.json.
// It answers every message with the payload's size, content type and first
// line; a payload whose first line is "demo:fail" fails, "demo:hang" never
// finishes until canceled, "demo:input" asks for input.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:18090", "address to serve A2A (JSON-RPC, HTTP+JSON and the agent card) on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: demoagent.New(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("demo agent serving A2A 1.0 (JSON-RPC at http://%[1]s/, HTTP+JSON at http://%[1]s/rest) and 0.3 (JSON-RPC at http://%[1]s/); card at http://%[1]s/.well-known/agent-card.json", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
