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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/answer"
)

// The rejections a replica counts and logs; the report reaching endpoint
// status through the operator is in controllers/rejections_test.go.

var hour0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func testEndpoint(name string) *agentsv1alpha1.WebhookEndpoint {
	return &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
}

func TestRejectionCounterPeriods(t *testing.T) {
	rc := newRejectionCounter()
	a, b := testEndpoint("a"), testEndpoint("b")
	forbidden, unauthorized := answer.SlotOf(answer.CodeForbidden), answer.SlotOf(answer.CodeUnauthorized)
	rc.add(a, forbidden, hour0.Add(10*time.Minute))
	rc.add(a, forbidden, hour0.Add(20*time.Minute))
	rc.add(b, unauthorized, hour0.Add(30*time.Minute))
	rc.add(b, unauthorized, hour0.Add(40*time.Minute))
	rc.add(b, unauthorized, hour0.Add(50*time.Minute))

	lines, ok := rc.take(hour0.Add(55*time.Minute), 10)
	if !ok || len(lines) != 2 || lines[0].uid != b.UID || lines[1].uid != a.UID {
		t.Fatalf("take = %+v, %v; want b (3) before a (2)", lines, ok)
	}
	if got := lines[1].entry.reportEntry(); got.Counts[answer.CodeForbidden] != 2 || got.Window != hour0 || !got.Last.Equal(hour0.Add(20*time.Minute)) || got.Previous != nil {
		t.Errorf("entry of a = %+v", got)
	}
	if _, ok := rc.take(hour0.Add(56*time.Minute), 10); ok {
		t.Error("take reported again with nothing changed")
	}

	// The next hour: a's counts become previous ones.
	rc.add(a, unauthorized, hour0.Add(70*time.Minute))
	lines, _ = rc.take(hour0.Add(71*time.Minute), 10)
	got := lines[0].entry.reportEntry()
	if len(lines) != 2 || lines[0].uid != a.UID || got.Window != hour0.Add(time.Hour) ||
		got.Counts[answer.CodeUnauthorized] != 1 || got.Previous[answer.CodeForbidden] != 2 {
		t.Fatalf("take in the next hour = %+v, want a (3 over two hours) first: %+v", lines, got)
	}

	// Two hours on nothing counts; the entries are dropped.
	rc.add(b, forbidden, hour0.Add(3*time.Hour))
	lines, _ = rc.take(hour0.Add(3*time.Hour), 10)
	if len(lines) != 1 || lines[0].uid != b.UID || lines[0].entry.previous != (counts{}) {
		t.Fatalf("three hours on = %+v, want b alone with nothing previous", lines)
	}
	if _, kept := rc.entries[a.UID]; kept {
		t.Error("a's expired entry is still in memory")
	}
	rc.forget(b.UID)
	if lines, ok := rc.take(hour0.Add(3*time.Hour), 10); !ok || len(lines) != 0 {
		t.Errorf("after forget = %+v, %v; want an empty report", lines, ok)
	}
}

// fakeReportWriter writes through a fake client (a sub-step test; the
// report's RBAC and the real API server are in the envtest specs).
func fakeReportWriter(t *testing.T, funcs interceptor.Funcs) (*reportWriter, client.Client, *clocktesting.FakeClock) {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(funcs).Build()
	clk := clocktesting.NewFakeClock(hour0)
	return &reportWriter{
		counter: newRejectionCounter(), client: c, reader: c, clock: clk, log: logr.Discard(),
		key: types.NamespacedName{Namespace: "hookrun-system", Name: agentsv1alpha1.RejectionReportPrefix + "rcv-0"},
	}, c, clk
}

func TestReportFlush(t *testing.T) {
	var writes int
	var fail error
	w, c, clk := fakeReportWriter(t, interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			writes++
			if fail != nil {
				return fail
			}
			return c.Update(ctx, o, opts...)
		},
	})
	ctx := context.Background()
	if err := w.flush(ctx); err != nil || writes != 0 {
		t.Fatalf("flush with no refusal: %v, %d writes; want none", err, writes)
	}
	ep := testEndpoint("github")
	for range 3 {
		w.counter.add(ep, answer.SlotOf(answer.CodeForbidden), clk.Now())
	}
	if err := w.flush(ctx); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, w.key, cm); err != nil {
		t.Fatalf("the report was not created: %v", err)
	}
	entry, err := agentsv1alpha1.DecodeRejectionReportEntry(cm.Data[string(ep.UID)])
	if err != nil || entry.Counts[answer.CodeForbidden] != 3 || entry.Namespace != "ns" || entry.Name != "github" ||
		cm.Labels[agentsv1alpha1.LabelRejectionReport] != "true" || cm.Annotations[agentsv1alpha1.AnnotationReportWrittenAt] != hour0.Format(time.RFC3339) {
		t.Fatalf("report = %+v, entry %+v (%v)", cm, entry, err)
	}

	// Nothing changed: no write.
	before := writes
	clk.Step(time.Minute)
	if err := w.flush(ctx); err != nil || writes != before {
		t.Fatalf("flush without a change wrote (%d → %d, %v)", before, writes, err)
	}
	// A failed write is tried again at the next flush.
	w.counter.add(ep, answer.SlotOf(answer.CodeUnauthorized), clk.Now())
	fail = errors.New("the API server is away")
	if err := w.flush(ctx); err == nil {
		t.Fatal("a failed write was not reported")
	}
	fail = nil
	if err := w.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, w.key, cm); err != nil {
		t.Fatal(err)
	}
	if entry, _ := agentsv1alpha1.DecodeRejectionReportEntry(cm.Data[string(ep.UID)]); entry.Counts[answer.CodeUnauthorized] != 1 {
		t.Fatalf("after the retry the report holds %+v, want the unauthorized call", entry)
	}

	// A restarted replica starts from its report.
	again, _, _ := fakeReportWriter(t, interceptor.Funcs{})
	again.reader = c
	again.restore(ctx)
	if _, changed := again.counter.take(clk.Now(), maxReportEntries); changed {
		t.Error("a restored report counts as changed: it would be written again as it is")
	}
	again.counter.markChanged()
	lines, _ := again.counter.take(clk.Now(), maxReportEntries)
	if len(lines) != 1 {
		t.Fatalf("restored %+v, want the one endpoint", lines)
	}
	if got := lines[0].entry.reportEntry(); got.Counts[answer.CodeForbidden] != 3 || got.Counts[answer.CodeUnauthorized] != 1 {
		t.Errorf("restored %+v, want 3 forbidden and 1 unauthorized", got)
	}
}

func TestReportIsBounded(t *testing.T) {
	w, _, clk := fakeReportWriter(t, interceptor.Funcs{})
	for i := range maxReportEntries + 50 {
		ep := testEndpoint(fmt.Sprintf("%0253d", i)) // the longest names
		for range i%3 + 1 {
			w.counter.add(ep, answer.SlotOf(answer.CodeForbidden), clk.Now())
			w.counter.add(ep, answer.SlotOf(answer.CodeRateLimited), clk.Now())
		}
	}
	lines, _ := w.counter.take(clk.Now(), maxReportEntries)
	cm, err := w.report(lines, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for k, v := range cm.Data {
		size += len(k) + len(v)
	}
	if len(cm.Data) != maxReportEntries || size > 512<<10 {
		t.Fatalf("report of %d entries, %d bytes; want %d entries well within 1 MiB", len(cm.Data), size, maxReportEntries)
	}
	// One namespace: the endpoints with the most refusals, and one line
	// summing the rest.
	var most, least, summed int64 = 0, 1 << 62, 0
	for _, l := range lines {
		if l.uid == othersKey("ns") {
			summed = l.entry.total()
			continue
		}
		most, least = max(most, l.entry.total()), min(least, l.entry.total())
	}
	if most != 6 || least < most/3 || summed == 0 {
		t.Errorf("the report does not keep the endpoints with the most refusals and sum the rest (most %d, least %d, summed %d)", most, least, summed)
	}
}

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
	h.rejections.mu.Lock()
	n := h.rejections.entries["u1"].counts[answer.SlotOf(answer.CodeForbidden)]
	h.rejections.mu.Unlock()
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
