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
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

// Benchmarks of the paths a flood takes besides the plain refusals of
// BenchmarkRejection, against the in-memory store: a duplicate delivery
// answered with its runId, one refused at a full window, an accepted call,
// and a signed call whose signature header is malformed.

// benchCall is a POST to id with body and the header pairs, its body
// re-readable by reset.
type benchCall struct {
	req  *http.Request
	body []byte
}

func newBenchCall(id string, body []byte, header ...string) *benchCall {
	c := &benchCall{req: refusedCall(id, header...), body: body}
	c.reset()
	return c
}

func (c *benchCall) reset() {
	c.req.Body = io.NopCloser(bytes.NewReader(c.body))
	c.req.ContentLength = int64(len(c.body))
}

func runBench(b *testing.B, h *Handler, c *benchCall, want int) {
	b.Helper()
	w := &statusWriter{discardWriter: discardWriter{h: http.Header{}}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		c.reset()
		h.ServeHTTP(w, c.req)
	}
	if w.status != want {
		b.Fatalf("the last call was answered %d, want %d", w.status, want)
	}
}

type statusWriter struct {
	discardWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code }

func BenchmarkDuplicate(b *testing.B) {
	body := []byte(`{"action":"opened"}`)
	b.Run("answered", func(b *testing.B) {
		h, _ := newMemoryHandler(b)
		h.invocation, h.invocationLimit = limits.NewLocal(1<<30), 1<<30
		c := newBenchCall(memID, body, agentsv1alpha1.SecretHeader, memSecret, "Idempotency-Key", "d-1")
		runBench(b, h, c, http.StatusAccepted)
	})
	b.Run("window full", func(b *testing.B) {
		h, _ := newMemoryHandler(b)
		h.invocation, h.invocationLimit = limits.NewLocal(1), 1
		c := newBenchCall(memID, body, agentsv1alpha1.SecretHeader, memSecret, "Idempotency-Key", "d-1")
		runBench(b, h, c, http.StatusTooManyRequests)
	})
}

func BenchmarkAccepted(b *testing.B) {
	h, _ := newMemoryHandler(b)
	h.invocation, h.invocationLimit = limits.NewLocal(1<<30), 1<<30
	c := newBenchCall(memID, []byte(`{"action":"opened"}`), agentsv1alpha1.SecretHeader, memSecret)
	runBench(b, h, c, http.StatusAccepted)
}

// BenchmarkSignedRejection: a GitHub call of 64 KiB whose signature is not
// hex.
func BenchmarkSignedRejection(b *testing.B) {
	h, _ := newMemoryHandler(b)
	c := newBenchCall(memGitHubID, []byte(strings.Repeat("x", 64<<10)), "X-Hub-Signature-256", "sha256=not-hex")
	runBench(b, h, c, http.StatusForbidden)
}

// BenchmarkBadSignature: a GitHub call of 1 KiB whose signature is well
// formed and wrong: the body is read within its budgets and its HMAC
// compared (make bench's "wrong GitHub signature" row, without the
// network).
func BenchmarkBadSignature(b *testing.B) {
	h, _ := newMemoryHandler(b)
	c := newBenchCall(memGitHubID, bytes.Repeat([]byte("x"), 1<<10), "X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
	runBench(b, h, c, http.StatusForbidden)
}
