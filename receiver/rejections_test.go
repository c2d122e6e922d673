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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

// The rejections a replica counts and logs; the report reaching endpoint
// status through the operator is in controllers/rejections_test.go.

// logLines is a logger at verbosity v that keeps what it logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger(v int) logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{Verbosity: v})
}

func refusedCall(id string, header ...string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/api/webhooks/"+id+"/receive", strings.NewReader("{}"))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

func TestRejectionLogLine(t *testing.T) {
	h, _ := newMemoryHandler(t)
	stale := strconv.FormatInt(h.clock.Now().Add(-time.Hour).Unix(), 10)
	for _, c := range []struct {
		call func() *http.Request
		want string
	}{
		{func() *http.Request { return refusedCall(memID, agentsv1alpha1.SecretHeader, "wrong-secret-value") },
			`"status"=403 "code"="forbidden" "reason"="wrong secret" "endpoint"="ns/auth" "sender"="Header"`},
		{func() *http.Request { return refusedCall(memID) },
			`"status"=401 "code"="unauthorized" "reason"="missing credential header" "endpoint"="ns/auth"`},
		{func() *http.Request { return refusedCall(memGitHubID, "X-Hub-Signature-256", "sha256=00") },
			`"status"=403 "code"="forbidden" "reason"="signature header malformed" "endpoint"="ns/github" "sender"="GitHub"`},
		{func() *http.Request {
			return refusedCall(memGitHubID, "X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
		},
			`"status"=403 "code"="forbidden" "reason"="signature mismatch" "endpoint"="ns/github" "sender"="GitHub"`},
		{func() *http.Request {
			return refusedCall(memSlackID, "X-Slack-Signature", "v0=00", "X-Slack-Request-Timestamp", stale)
		}, `"status"=403 "code"="forbidden" "reason"="timestamp outside tolerance" "endpoint"="ns/slack"`},
		{func() *http.Request { return refusedCall("ZZZZZZZZunknown", agentsv1alpha1.SecretHeader, "s") },
			`"status"=404 "code"="not_found" "reason"="no endpoint has this ID" "endpointIDPrefix"="ZZZZZZ"`},
	} {
		var debug, info logLines
		h.log = debug.logger(1)
		h.ServeHTTP(httptest.NewRecorder(), c.call())
		h.log = info.logger(0)
		h.ServeHTTP(httptest.NewRecorder(), c.call())
		if len(info.lines) != 0 {
			t.Errorf("at the default level a refusal logged %q", info.lines)
		}
		if len(debug.lines) != 1 || !strings.Contains(debug.lines[0], c.want) {
			t.Errorf("at level 1 logged %q, want one line with %s", debug.lines, c.want)
			continue
		}
		for _, secret := range []string{"wrong-secret-value", "sha256=00", "v0=00", memID, "ZZZZZZZZ", "{}"} {
			if strings.Contains(debug.lines[0], secret) {
				t.Errorf("the line %q shows %q", debug.lines[0], secret)
			}
		}
	}
}

// rejectionAllocs is what one refused call allocates, served repeatedly.
func rejectionAllocs(h *Handler, req *http.Request) float64 {
	w := &discardWriter{h: http.Header{}}
	return testing.AllocsPerRun(2000, func() {
		clear(w.h)
		h.ServeHTTP(w, req)
	})
}

type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// With the level off, a flood of refusals allocates no log fields: no more
// than the refusal itself did before it was logged and counted (the secret
// check's list of digests: one allocation; the missing header and the unknown
// ID none).
func TestRejectionAllocations(t *testing.T) {
	h, _ := newMemoryHandler(t)
	var off logLines
	h.log = off.logger(0)
	for _, c := range []struct {
		req  *http.Request
		want float64
	}{
		{refusedCall(memID, agentsv1alpha1.SecretHeader, "wrong"), 1},
		{refusedCall(memID), 0},
		{refusedCall("unknown"), 0},
	} {
		if got := rejectionAllocs(h, c.req); got > c.want {
			t.Errorf("%s with the level off: %v allocations, want at most %v", c.req.URL.Path, got, c.want)
		}
	}
	if len(off.lines) != 0 {
		t.Errorf("logged %d lines with the level off", len(off.lines))
	}
	n := h.rejections.Counted("u1", answer.SlotOf(answer.CodeForbidden))
	if n < 2000 {
		t.Errorf("counted %d refusals of ns/auth, want every one", n)
	}
	var on logLines
	h.log = on.logger(1)
	if got := rejectionAllocs(h, refusedCall(memID)); got == 0 {
		t.Error("with the level on the line allocates nothing: the measurement cannot tell")
	}
}

// BenchmarkRejection: a wrong secret, with the refusal log off and on.
func BenchmarkRejection(b *testing.B) {
	for _, level := range []int{0, 1} {
		b.Run(fmt.Sprintf("verbosity=%d", level), func(b *testing.B) {
			h, _ := newMemoryHandler(b)
			h.log = funcr.New(func(string, string) {}, funcr.Options{Verbosity: level})
			req := refusedCall(memID, agentsv1alpha1.SecretHeader, "wrong")
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}
