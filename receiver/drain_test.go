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
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
)

// After SIGTERM the server is unready at once, answers new connections for
// the shutdown delay (closing each after its answer), then refuses them
// while the call in flight finishes. test/e2e's drain spec does the same
// to the receiver's process.
func TestServerServesThroughTheShutdownDelay(t *testing.T) {
	const delay = time.Second
	release := make(chan struct{})
	entered := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-release
		}
		w.WriteHeader(http.StatusAccepted)
	})
	listening := make(chan string, 1)
	s := &server{addr: "127.0.0.1:0", handler: h, ready: func() bool { return true }, log: logr.Discard(),
		delay: delay, drained: make(chan struct{}), listening: listening}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- s.Start(ctx) }()
	addr := <-listening
	if err := s.readyz(nil); err != nil {
		t.Fatalf("readiness before SIGTERM: %v", err)
	}

	inFlight := make(chan int, 1)
	go func() { inFlight <- statusOfPost(t, "http://"+addr+"/slow") }()
	<-entered
	cancel() // SIGTERM
	sigterm := time.Now()
	waitUntil(t, time.Second, "the readiness check to fail", func() bool { return errors.Is(s.readyz(nil), errDraining) })

	// New connections are served during the delay, each closed after its answer.
	resp, err := http.Post("http://"+addr+"/new", "text/plain", nil)
	if err != nil {
		t.Fatalf("a new call right after SIGTERM: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || !resp.Close {
		t.Errorf("a new call right after SIGTERM got %d (Connection: close %v), want 202 on a connection that closes", resp.StatusCode, resp.Close)
	}

	// Then the port refuses, while the call in flight still runs.
	waitUntil(t, delay+5*time.Second, "the port to refuse connections", func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err != nil
	})
	if served := time.Since(sigterm); served < delay {
		t.Errorf("the port refused connections %s after SIGTERM, before the shutdown delay of %s", served, delay)
	}
	select {
	case <-s.drained:
		t.Fatal("the server stopped before its call in flight finished")
	default:
	}
	close(release)
	if code := <-inFlight; code != http.StatusAccepted {
		t.Errorf("the call in flight got %d, want 202", code)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Start returned %v", err)
	}
	<-s.drained
}

// statusOfPost is the status of a POST to url, 0 when it failed.
func statusOfPost(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Post(url, "text/plain", nil)
	if err != nil {
		t.Logf("POST %s: %v", url, err)
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// waitUntil waits until cond holds, checking every 10 ms, and fails the
// test after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	gomega.NewWithT(t).Eventually(cond).WithTimeout(timeout).WithPolling(10*time.Millisecond).Should(gomega.BeTrue(), "waited %s for %s", timeout, what)
}
