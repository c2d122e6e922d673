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
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/endpoints"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/rejections"
)

const (
	memID       = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	memOpenID   = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	memSecret   = "the-endpoint-secret-of-32-bytes-or-more"
	memRateCall = 1000
	memGitHubID = "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
	memSlackID  = "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"
)

// githubSignature is X-Hub-Signature-256 for body with memSecret.
func githubSignature(body []byte) string {
	return "sha256=" + hex.EncodeToString(hmacOf(sha256.New, []byte(memSecret), body))
}

// newMemoryHandler serves one authenticated and one unauthenticated endpoint from memory.
func newMemoryHandler(t testing.TB) (*Handler, *memoryStore) {
	t.Helper()
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	st := &memoryStore{}
	h := &Handler{
		table: endpoints.NewTable(), store: st, membership: allowAll{}, clock: clocktesting.NewFakeClock(time.Now()),
		rand: rand.Reader, log: logr.Discard(), metrics: m,
		invocationLimit: memRateCall, unauthenticatedLimit: memRateCall,
		invocation: limits.NewLocal(memRateCall), preParse: limits.NewLocal(memRateCall),
		backlog:         limits.NewBacklog(1<<30, 1<<30), // nothing in memory ever starts a run
		bodies:          limits.NewBodyBudget(DefaultMaxInflightBodyBytes),
		bodyReadTimeout: BodyReadTimeout,
		rejections:      rejections.NewCounter(),
		tracer:          tracing.NewLocalProvider(ServiceName).Tracer(tracing.ScopeName),
	}
	h.table.OnUpsert = h.backlog.Observe
	for _, ep := range []*agentsv1alpha1.WebhookEndpoint{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth", UID: "u1"},
			Spec:       agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "a"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun},
			Status:     agentsv1alpha1.WebhookEndpointStatus{EndpointID: memID, SecretHash: agentsv1alpha1.SecretHash([]byte(memSecret))},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "github", UID: "u3"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "a"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Sender: &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub}},
			Status: agentsv1alpha1.WebhookEndpointStatus{EndpointID: memGitHubID, SecretHash: agentsv1alpha1.SecretHash([]byte(memSecret))},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "slack", UID: "u4"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "a"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Sender: &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderSlack}},
			Status: agentsv1alpha1.WebhookEndpointStatus{EndpointID: memSlackID, SecretHash: agentsv1alpha1.SecretHash([]byte(memSecret))},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "open", UID: "u2"},
			Spec:       agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "a"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun, AllowUnauthenticated: true},
			Status:     agentsv1alpha1.WebhookEndpointStatus{EndpointID: memOpenID},
		},
	} {
		h.table.UpsertEndpoint(ep)
		if ep.Spec.SenderOf().Signed() {
			h.table.UpsertKey(&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: agentsv1alpha1.SigningKeySecretName(string(ep.UID)),
					Labels:      map[string]string{agentsv1alpha1.LabelEndpointUID: string(ep.UID)},
					Annotations: map[string]string{agentsv1alpha1.AnnotationKeyHash: ep.Status.SecretHash}},
				Data: map[string][]byte{agentsv1alpha1.SigningKeySecret: []byte(memSecret)},
			})
		}
	}
	h.table.UpsertAgent(&agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	return h, st
}

var documentedCodes = map[int]string{
	200: "", 202: "", 401: answer.CodeUnauthorized, 403: answer.CodeForbidden, 404: answer.CodeNotFound, 405: answer.CodeMethodNotAllowed,
	413: answer.CodePayloadTooLarge, 422: "", 429: answer.CodeRateLimited, 503: "",
}

func FuzzReceive(f *testing.F) {
	f.Add("POST", "/api/webhooks/"+memID+"/receive", memSecret, []byte(`{"a":1}`))
	f.Add("POST", "/api/webhooks/"+memOpenID+"/receive", "", []byte("</webhook-payload>\xff"))
	f.Add("GET", "/api/webhooks/"+memID+"/receive", "x", []byte(nil))
	f.Add("POST", "/api/webhooks//receive", memSecret, []byte{})
	f.Add("POST", "/api/webhooks/"+memID+"/receive/", memSecret, []byte{0})
	f.Add("POST", "/api/webhooks/"+memGitHubID+"/receive", githubSignature([]byte(`{"a":1}`)), []byte(`{"a":1}`))
	f.Add("POST", "/api/webhooks/"+memSlackID+"/receive", "v0=00", []byte(`{"type":"url_verification","challenge":"c"}`))
	h, st := newMemoryHandler(f)
	f.Fuzz(func(t *testing.T, method, path, secret string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Method = method
		req.URL.Path = path
		if secret != "" {
			// The fuzzed credential goes in every sender's header.
			req.Header.Set(agentsv1alpha1.SecretHeader, secret)
			req.Header.Set("X-Hub-Signature-256", secret)
			req.Header.Set("X-Slack-Signature", secret)
			req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(time.Now().Unix(), 10))
		}
		rec := httptest.NewRecorder()
		before := len(st.runs)
		h.ServeHTTP(rec, req)
		code, ok := documentedCodes[rec.Code]
		if !ok {
			t.Fatalf("undocumented status %d for %s %q", rec.Code, method, path)
		}
		var out struct {
			Error struct{ Code string }
			RunID string `json:"runId"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("answer %d is not JSON: %q", rec.Code, rec.Body.String())
		}
		if code != "" && out.Error.Code != code {
			t.Fatalf("status %d with code %q, want %q", rec.Code, out.Error.Code, code)
		}
		accepted := rec.Code == http.StatusAccepted
		if accepted != (len(st.runs) == before+1) {
			t.Fatalf("status %d but %d runs were stored", rec.Code, len(st.runs)-before)
		}
		if accepted && !bytes.Equal(st.bodies[out.RunID], body) {
			t.Fatalf("stored body differs from the one sent")
		}
	})
}

// TestBadInput is the table of hostile or odd requests and their answers
// (docs/receiver.md lists it for users).
func TestBadInput(t *testing.T) {
	h, st := newMemoryHandler(t)
	srv := httptest.NewUnstartedServer(h)
	srv.Config = newHTTPServer(h)
	srv.Start()
	defer srv.Close()
	route := "/api/webhooks/" + memID + "/receive"

	raw := func(request string) int {
		t.Helper()
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		if _, err := conn.Write([]byte(request)); err != nil {
			t.Fatal(err)
		}
		method, _, _ := strings.Cut(request, " ")
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
		if err != nil {
			t.Fatalf("reading the answer to %q: %v", request[:min(len(request), 60)], err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	post := func(path string, headers map[string][]string, body []byte) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		for k, v := range headers {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	secret := map[string][]string{"X-Service-Webhook-Secret": {memSecret}}
	ghRoute, slackRoute := "/api/webhooks/"+memGitHubID+"/receive", "/api/webhooks/"+memSlackID+"/receive"
	ghBody := []byte(`{"action":"opened"}`)
	cases := []struct {
		name string
		got  func() int
		want int
	}{
		{"HEAD", func() int { return raw("HEAD " + route + " HTTP/1.1\r\nHost: x\r\n\r\n") }, 405},
		{"OPTIONS", func() int { return raw("OPTIONS " + route + " HTTP/1.1\r\nHost: x\r\n\r\n") }, 405},
		{"unknown method", func() int { return raw("BREW " + route + " HTTP/1.1\r\nHost: x\r\n\r\n") }, 405},
		{"headers over 32 KiB", func() int {
			return raw("POST " + route + " HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n")
		}, 431},
		{"two secret headers", func() int {
			return post(route, map[string][]string{"X-Service-Webhook-Secret": {memSecret, memSecret}}, nil)
		}, 403},
		{"secret with inner whitespace", func() int {
			return post(route, map[string][]string{"X-Service-Webhook-Secret": {memSecret[:5] + " " + memSecret[5:]}}, nil)
		}, 403},
		{"secret with surrounding spaces (not part of an HTTP header value)", func() int {
			return raw("POST " + route + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nX-Service-Webhook-Secret:   " + memSecret + "  \r\n\r\n")
		}, 202},
		{"lower-case header name", func() int {
			return raw("POST " + route + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nx-service-webhook-secret: " + memSecret + "\r\n\r\n")
		}, 202},
		{"trailing slash", func() int { return post(route+"/", secret, nil) }, 404},
		{"dot segments", func() int { return raw("POST /api/webhooks/x/../" + memID + "/receive HTTP/1.1\r\nHost: x\r\n\r\n") }, 404},
		{"encoded slash", func() int { return raw("POST /api/webhooks/" + memID + "%2Freceive HTTP/1.1\r\nHost: x\r\n\r\n") }, 404},
		{"double slash", func() int { return raw("POST //api/webhooks/" + memID + "/receive HTTP/1.1\r\nHost: x\r\n\r\n") }, 404},
		{"query string is ignored", func() int { return post(route+"?x=1", secret, nil) }, 202},
		{"empty body", func() int { return post(route, secret, nil) }, 202},
		{"binary body", func() int { return post(route, secret, []byte{0, 0xff, 0xfe, '<', '/'}) }, 202},
		{"Content-Length larger than the body sent", func() int {
			return raw("POST " + route + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\nX-Service-Webhook-Secret: " + memSecret + "\r\n\r\nabc")
		}, 413},
		{"malformed chunked body", func() int {
			return raw("POST " + route + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nX-Service-Webhook-Secret: " + memSecret + "\r\n\r\nzz\r\nabc\r\n")
		}, 400},
		{"GitHub: the right signature", func() int {
			return post(ghRoute, map[string][]string{"X-Hub-Signature-256": {githubSignature(ghBody)}}, ghBody)
		}, 202},
		{"GitHub: two signature headers, both right", func() int {
			return post(ghRoute, map[string][]string{"X-Hub-Signature-256": {githubSignature(ghBody), githubSignature(ghBody)}}, ghBody)
		}, 403},
		{"GitHub: a signature header of 30 KiB", func() int {
			return post(ghRoute, map[string][]string{"X-Hub-Signature-256": {githubSignature(ghBody) + strings.Repeat("0", 30<<10)}}, ghBody)
		}, 403},
		{"GitHub: upper-case hex is still the signature", func() int {
			return post(ghRoute, map[string][]string{"X-Hub-Signature-256": {"sha256=" + strings.ToUpper(strings.TrimPrefix(githubSignature(ghBody), "sha256="))}}, ghBody)
		}, 202},
		{"GitHub: not hex", func() int {
			return post(ghRoute, map[string][]string{"X-Hub-Signature-256": {"sha256=" + strings.Repeat("zz", 32)}}, ghBody)
		}, 403},
		{"GitHub: the SHA-1 header only (X-Hub-Signature)", func() int {
			return post(ghRoute, map[string][]string{"X-Hub-Signature": {"sha1=" + strings.Repeat("0", 40)}}, ghBody)
		}, 401},
		{"GitHub: body over 1 MiB, signed", func() int {
			big := bytes.Repeat([]byte("a"), MaxBodyBytes+1)
			return post(ghRoute, map[string][]string{"X-Hub-Signature-256": {githubSignature(big)}}, big)
		}, 413},
		{"Slack: challenge with a bad signature", func() int {
			return post(slackRoute, map[string][]string{"X-Slack-Signature": {"v0=" + strings.Repeat("0", 64)},
				"X-Slack-Request-Timestamp": {strconv.FormatInt(time.Now().Unix(), 10)}}, []byte(`{"type":"url_verification","challenge":"c"}`))
		}, 403},
		{"Slack: a timestamp that overflows int64", func() int {
			return post(slackRoute, map[string][]string{"X-Slack-Signature": {"v0=" + strings.Repeat("0", 64)},
				"X-Slack-Request-Timestamp": {"99999999999999999999999"}}, []byte(`{}`))
		}, 403},
		{"invalid Content-Length", func() int {
			return raw("POST " + route + " HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n")
		}, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got(); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
	if len(st.runs) != 7 {
		t.Errorf("%d runs stored, want 7 (one per 202)", len(st.runs))
	}
	// Metrics count what was answered (the 400 and 431 never reach the handler).
	for code, want := range map[string]float64{"202": 7, "403": 7, "404": 4, "405": 3, "413": 2, "401": 1} {
		if got := testutil.ToFloat64(h.metrics.requests.WithLabelValues(code)); got != want {
			t.Errorf("hookrun_receiver_requests_total{code=%q} = %v, want %v", code, got, want)
		}
	}
	if got := testutil.ToFloat64(h.metrics.runsCreated); got != 7 {
		t.Errorf("hookrun_receiver_runs_created_total = %v, want 7", got)
	}
}

// A client that sends its headers too slowly is cut off after ReadHeaderTimeout.
func TestSlowClientIsCutOff(t *testing.T) {
	h, _ := newMemoryHandler(t)
	srv := httptest.NewUnstartedServer(h)
	srv.Config = newHTTPServer(h)
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.Write([]byte("POST /api/webhooks/" + memID + "/receive HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(ReadHeaderTimeout + 5*time.Second))
	_, err = conn.Read(make([]byte, 1))
	if elapsed := time.Since(start); err == nil || elapsed > ReadHeaderTimeout+3*time.Second {
		t.Errorf("slow client kept its connection %s (err %v), want it closed after about %s", elapsed, err, ReadHeaderTimeout)
	}
}

// Stopping the server without a shutdown delay lets an in-flight call
// finish and refuses new ones at once (drain_test.go: with a delay).
func TestServerDrainsOnStop(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		w.WriteHeader(http.StatusAccepted)
	})
	listening := make(chan string, 1)
	s := &server{addr: "127.0.0.1:0", handler: slow, ready: func() bool { return true }, log: logr.Discard(), listening: listening}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Start(ctx) }()
	addr := <-listening

	result := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/", "text/plain", nil)
		if err != nil {
			result <- 0
			return
		}
		_ = resp.Body.Close()
		result <- resp.StatusCode
	}()
	<-entered
	cancel() // SIGTERM
	select {
	case err := <-stopped:
		t.Fatalf("server stopped (%v) before its in-flight call finished", err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("a draining server still accepts connections")
	}
	close(release)
	if code := <-result; code != http.StatusAccepted {
		t.Errorf("in-flight call got %d, want 202", code)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Start returned %v", err)
	}
}
