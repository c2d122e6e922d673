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
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

// What request bodies hold of a replica, over real HTTP: the replica's
// budget, one endpoint's share of it, and how long a body may take.

// bodyServer serves h as the receiver does.
func bodyServer(t *testing.T, h *Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config = newHTTPServer(h)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// slowUpload opens a call to endpoint id that sends its headers (head ends
// them, with the start of the body) and then stalls.
func slowUpload(t *testing.T, srv *httptest.Server, id, header, head string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte("POST /api/webhooks/" + id + "/receive HTTP/1.1\r\nHost: x\r\n" + header + head)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// answerOf reads the answer on conn, waiting at most a few seconds.
func answerOf(g *gomega.WithT, conn net.Conn) *http.Response {
	answers := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			answers <- resp
		}
	}()
	var resp *http.Response
	g.Eventually(answers).WithTimeout(5 * time.Second).Should(gomega.Receive(&resp))
	return resp
}

// sendTo POSTs a small body to id with the header pairs.
func sendTo(t *testing.T, srv *httptest.Server, id, body string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/webhooks/"+id+"/receive", strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp
}

var (
	secretLine = agentsv1alpha1.SecretHeader + ": " + memSecret + "\r\n"
	oneMiBHead = "Content-Length: " + strconv.Itoa(MaxBodyBytes) + "\r\n\r\n{"
	// githubLine is a GitHub signature header of the right shape: only
	// the body can refute it.
	githubLine = "X-Hub-Signature-256: sha256=" + strings.Repeat("0", 64) + "\r\n"
)

// heldUpload opens a call to endpoint id that announces 1 MiB, sends all
// of it but its last byte, and stalls: it holds 1 MiB of the budget.
func heldUpload(t *testing.T, srv *httptest.Server, id, header string) net.Conn {
	t.Helper()
	return slowUpload(t, srv, id, header, oneMiBHead+strings.Repeat("a", MaxBodyBytes-2))
}

// addEndpoint serves a Header endpoint with memSecret under id, of an
// Agent of namespace ns.
func addEndpoint(h *Handler, ns, id string) {
	h.table.UpsertEndpoint(&agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "auth", UID: types.UID(ns + "-auth")},
		Spec:       agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "a"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun},
		Status:     agentsv1alpha1.WebhookEndpointStatus{EndpointID: id, SecretHash: agentsv1alpha1.SecretHash([]byte(memSecret))},
	})
	h.table.UpsertAgent(&agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}})
}

const (
	otherNamespaceID = "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE"
	thirdNamespaceID = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"
)

func inUse(h *Handler) func() []int64 {
	return func() []int64 {
		n, endpoints := h.bodies.InUse()
		return []int64{n, int64(endpoints)}
	}
}

// Bodies in flight are bounded per replica: while slow uploads hold the
// budget, other calls are answered 503 with Retry-After, and get through
// again once the uploads end.
func TestBodyBudget(t *testing.T) {
	g := gomega.NewWithT(t)
	h, _ := newMemoryHandler(t)
	h.bodies = limits.NewBodyBudget(2 * MaxBodyBytes) // each namespace's and endpoint's share: one body
	addEndpoint(h, "other", otherNamespaceID)
	addEndpoint(h, "third", thirdNamespaceID)
	srv := bodyServer(t, h)

	// Two uploads, of two namespaces, that sent all but the end of their
	// bodies: one of 1 MiB by Content-Length, one chunked.
	heldUpload(t, srv, memID, secretLine)
	chunked := slowUpload(t, srv, otherNamespaceID, secretLine,
		"Transfer-Encoding: chunked\r\n\r\n"+strconv.FormatInt(MaxBodyBytes-1, 16)+"\r\n"+strings.Repeat("a", MaxBodyBytes-1)+"\r\n")
	g.Eventually(inUse(h)).WithTimeout(10*time.Second).WithPolling(10*time.Millisecond).
		Should(gomega.Equal([]int64{2 * MaxBodyBytes, 2}), "both uploads hold what arrived of their bodies")

	probe := func() *http.Response {
		return sendTo(t, srv, thirdNamespaceID, `{"small":true}`, agentsv1alpha1.SecretHeader, memSecret)
	}
	if resp := probe(); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("a call of a third namespace while the budget is held: %d Retry-After %q, want 503 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := testutil.ToFloat64(h.metrics.bodyBudgetFull.WithLabelValues(budgetReplica)); got != 1 {
		t.Errorf("hookrun_receiver_body_budget_exhausted_total{budget=replica} = %v, want 1", got)
	}

	// The chunked upload ends; what it held goes back.
	if _, err := chunked.Write([]byte("0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if resp := answerOf(g, chunked); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the chunked upload: %d, want 202", resp.StatusCode)
	}
	if resp := probe(); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a call after an upload ended: %d, want 202", resp.StatusCode)
	}
	g.Expect(inUse(h)()).To(gomega.Equal([]int64{MaxBodyBytes, 1}), "the one upload still open")
}

// One endpoint's slow uploads hold at most its quarter of the budget: its
// further calls get 503 while another endpoint's calls are served, and the
// accounting keeps nothing of an endpoint once its calls are answered.
func TestBodyBudgetPerEndpoint(t *testing.T) {
	g := gomega.NewWithT(t)
	h, _ := newMemoryHandler(t)
	h.bodies = limits.NewBodyBudget(8 * MaxBodyBytes) // each endpoint's share: 2 MiB
	srv := bodyServer(t, h)

	// The public URL's uploads: two fill its share.
	var held []net.Conn
	for i := range 2 {
		held = append(held, heldUpload(t, srv, memOpenID, ""))
		g.Eventually(inUse(h)).WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).
			Should(gomega.Equal([]int64{int64(i+1) * MaxBodyBytes, 1}))
	}
	for range 2 {
		resp := answerOf(g, slowUpload(t, srv, memOpenID, "", oneMiBHead))
		g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusServiceUnavailable), "an upload beyond the endpoint's share, once its first byte arrives")
		g.Expect(resp.Header.Get("Retry-After")).To(gomega.Equal("1"))
	}
	small := sendTo(t, srv, memOpenID, "{}")
	g.Expect(small.StatusCode).To(gomega.Equal(http.StatusServiceUnavailable), "even a small call of that endpoint, while its share is held")
	g.Expect(testutil.ToFloat64(h.metrics.bodyBudgetFull.WithLabelValues(budgetEndpoint))).To(gomega.Equal(3.0))

	// The other endpoints are served: a small call and a 1 MiB one.
	g.Expect(sendTo(t, srv, memID, "{}", agentsv1alpha1.SecretHeader, memSecret).StatusCode).To(gomega.Equal(http.StatusAccepted))
	big := `"` + strings.Repeat("a", MaxBodyBytes-2) + `"`
	g.Expect(sendTo(t, srv, memGitHubID, big, "X-Hub-Signature-256", githubSignature([]byte(big))).StatusCode).To(gomega.Equal(http.StatusAccepted))

	// The uploads end: nothing is kept of the endpoint.
	for _, c := range held {
		_ = c.Close()
	}
	g.Eventually(inUse(h)).WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).Should(gomega.Equal([]int64{0, 0}))
	g.Expect(sendTo(t, srv, memOpenID, "{}").StatusCode).To(gomega.Equal(http.StatusAccepted))
}

// All endpoints of one namespace hold at most half of the budget (each
// within its quarter): a further endpoint of that namespace gets 503, and
// another namespace's call is served.
func TestBodyBudgetPerNamespace(t *testing.T) {
	g := gomega.NewWithT(t)
	h, _ := newMemoryHandler(t)
	h.bodies = limits.NewBodyBudget(8 * MaxBodyBytes) // a namespace's share: 4 MiB; an endpoint's: 2 MiB
	addEndpoint(h, "other", otherNamespaceID)
	srv := bodyServer(t, h)

	// Two endpoints of namespace ns fill their shares, and with them the
	// namespace's.
	for i, id := range []string{memID, memID, memOpenID, memOpenID} {
		header := ""
		if id == memID {
			header = secretLine
		}
		heldUpload(t, srv, id, header)
		g.Eventually(inUse(h)).WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).
			Should(gomega.Equal([]int64{int64(i+1) * MaxBodyBytes, int64(i/2 + 1)}))
	}
	body := `{"small":true}`
	resp := sendTo(t, srv, memGitHubID, body, "X-Hub-Signature-256", githubSignature([]byte(body)))
	g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusServiceUnavailable), "a third endpoint of the namespace, while its half is held")
	g.Expect(resp.Header.Get("Retry-After")).To(gomega.Equal("1"))
	g.Expect(testutil.ToFloat64(h.metrics.bodyBudgetFull.WithLabelValues(budgetNamespace))).To(gomega.Equal(1.0))

	// Another namespace is served, a 1 MiB body too.
	big := `"` + strings.Repeat("a", MaxBodyBytes-2) + `"`
	g.Expect(sendTo(t, srv, otherNamespaceID, big, agentsv1alpha1.SecretHeader, memSecret).StatusCode).To(gomega.Equal(http.StatusAccepted))
}

// Connections that announce a 1 MiB body and send nothing hold nothing of
// the budget: more of them than the endpoint's share would hold by their
// Content-Length do not keep a GitHub endpoint from its real deliveries
// (GitHub does not retry a 503).
func TestIdleUploadsHoldNothing(t *testing.T) {
	g := gomega.NewWithT(t)
	h, _ := newMemoryHandler(t)
	srv := bodyServer(t, h)
	// waiting counts the calls that have started to read their bodies, or
	// were answered before.
	var waiting atomic.Int32
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := &firstRead{ReadCloser: r.Body, reached: &waiting}
		r.Body = body
		h.ServeHTTP(w, r)
		if !body.done {
			waiting.Add(1)
		}
	})

	idle := int(h.bodies.EndpointShare()/MaxBodyBytes) + 4
	for range idle {
		slowUpload(t, srv, memGitHubID, githubLine, "Content-Length: "+strconv.Itoa(MaxBodyBytes)+"\r\n\r\n")
	}
	g.Eventually(waiting.Load).WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).Should(gomega.BeEquivalentTo(idle))
	g.Expect(inUse(h)()).To(gomega.Equal([]int64{0, 0}), "the idle uploads hold nothing")

	body := `{"action":"opened"}`
	resp := sendTo(t, srv, memGitHubID, body, "X-Hub-Signature-256", githubSignature([]byte(body)), "X-GitHub-Event", "issues")
	g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusAccepted), "a real delivery while %d connections announce 1 MiB and send nothing", idle)
	g.Expect(testutil.ToFloat64(h.metrics.bodyBudgetFull.WithLabelValues(budgetEndpoint))).To(gomega.BeZero())
}

// firstRead counts, in reached, a body whose first read has started.
type firstRead struct {
	io.ReadCloser
	reached *atomic.Int32
	done    bool
}

func (b *firstRead) Read(p []byte) (int, error) {
	if !b.done {
		b.done = true
		b.reached.Add(1)
	}
	return b.ReadCloser.Read(p)
}

// A body that does not arrive within bodyReadTimeout of the call being let
// in is answered 400, and what it took of the budget goes back: the server's
// ReadTimeout alone would let it hold that for 30 s.
func TestBodyReadTimeout(t *testing.T) {
	g := gomega.NewWithT(t)
	h, _ := newMemoryHandler(t)
	h.bodyReadTimeout = 200 * time.Millisecond
	srv := bodyServer(t, h)

	conn := slowUpload(t, srv, memID, secretLine, oneMiBHead)
	resp := answerOf(g, conn)
	g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusBadRequest))
	g.Eventually(inUse(h)).Should(gomega.Equal([]int64{0, 0}))

	// The server serves on.
	g.Expect(sendTo(t, srv, memID, "{}", agentsv1alpha1.SecretHeader, memSecret).StatusCode).To(gomega.Equal(http.StatusAccepted))
}

// countingBody records whether the handler read the body.
type countingBody struct {
	r     io.Reader
	reads int
}

func (b *countingBody) Read(p []byte) (int, error) {
	b.reads++
	return b.r.Read(p)
}

// A signed call whose headers alone refute it (a malformed signature, a
// timestamp outside the tolerance) is refused before its body is read: it
// takes nothing of the body budget and waits for no upload.
func TestSignedRefusedBeforeRead(t *testing.T) {
	h, _ := newMemoryHandler(t)
	fresh := strconv.FormatInt(h.clock.Now().Unix(), 10)
	stale := strconv.FormatInt(h.clock.Now().Add(-time.Hour).Unix(), 10)
	hex64 := strings.Repeat("0", 64)
	for _, c := range []struct {
		name     string
		id       string
		header   []string
		wantRead bool
	}{
		{"GitHub: not hex", memGitHubID, []string{"X-Hub-Signature-256", "sha256=" + strings.Repeat("z", 64)}, false},
		{"GitHub: too short", memGitHubID, []string{"X-Hub-Signature-256", "sha256=00"}, false},
		{"GitHub: no prefix", memGitHubID, []string{"X-Hub-Signature-256", hex64}, false},
		{"Slack: stale timestamp", memSlackID, []string{"X-Slack-Signature", "v0=" + hex64, "X-Slack-Request-Timestamp", stale}, false},
		{"Slack: no timestamp", memSlackID, []string{"X-Slack-Signature", "v0=" + hex64}, false},
		{"Slack: malformed", memSlackID, []string{"X-Slack-Signature", "v0=zz", "X-Slack-Request-Timestamp", fresh}, false},
		{"GitHub: well formed, only the body can tell", memGitHubID, []string{"X-Hub-Signature-256", "sha256=" + hex64}, true},
		{"Slack: well formed and in time, only the body can tell", memSlackID, []string{"X-Slack-Signature", "v0=" + hex64, "X-Slack-Request-Timestamp", fresh}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := refusedCall(c.id, c.header...)
			body := &countingBody{r: strings.NewReader(`{"action":"opened"}`)}
			req.Body, req.ContentLength = io.NopCloser(body), -1
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusForbidden {
				t.Fatalf("answered %d, want 403", rec.Code)
			}
			if read := body.reads > 0; read != c.wantRead {
				t.Errorf("body read: %v, want %v", read, c.wantRead)
			}
		})
	}
}
