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

package rejections

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

var hour0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func testEndpoint(name string) *agentsv1alpha1.WebhookEndpoint {
	return &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
}

func TestRejectionCounterPeriods(t *testing.T) {
	rc := NewCounter()
	a, b := testEndpoint("a"), testEndpoint("b")
	forbidden, unauthorized := answer.SlotOf(answer.CodeForbidden), answer.SlotOf(answer.CodeUnauthorized)
	rc.Add(a, forbidden, hour0.Add(10*time.Minute))
	rc.Add(a, forbidden, hour0.Add(20*time.Minute))
	rc.Add(b, unauthorized, hour0.Add(30*time.Minute))
	rc.Add(b, unauthorized, hour0.Add(40*time.Minute))
	rc.Add(b, unauthorized, hour0.Add(50*time.Minute))

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
	rc.Add(a, unauthorized, hour0.Add(70*time.Minute))
	lines, _ = rc.take(hour0.Add(71*time.Minute), 10)
	got := lines[0].entry.reportEntry()
	if len(lines) != 2 || lines[0].uid != a.UID || got.Window != hour0.Add(time.Hour) ||
		got.Counts[answer.CodeUnauthorized] != 1 || got.Previous[answer.CodeForbidden] != 2 {
		t.Fatalf("take in the next hour = %+v, want a (3 over two hours) first: %+v", lines, got)
	}

	// Two hours on nothing counts; the entries are dropped.
	rc.Add(b, forbidden, hour0.Add(3*time.Hour))
	lines, _ = rc.take(hour0.Add(3*time.Hour), 10)
	if len(lines) != 1 || lines[0].uid != b.UID || lines[0].entry.previous != (counts{}) {
		t.Fatalf("three hours on = %+v, want b alone with nothing previous", lines)
	}
	if _, kept := rc.entries[a.UID]; kept {
		t.Error("a's expired entry is still in memory")
	}
	rc.Forget(b.UID)
	if lines, ok := rc.take(hour0.Add(3*time.Hour), 10); !ok || len(lines) != 0 {
		t.Errorf("after forget = %+v, %v; want an empty report", lines, ok)
	}
}

// fakeReportWriter writes through a fake client (a sub-step test; the
// report's RBAC and the real API server are in the envtest specs).
func fakeReportWriter(t *testing.T, funcs interceptor.Funcs) (*Writer, client.Client, *clocktesting.FakeClock) {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(funcs).Build()
	clk := clocktesting.NewFakeClock(hour0)
	return &Writer{
		Counter: NewCounter(), Client: c, Reader: c, Clock: clk, Log: logr.Discard(),
		Key: types.NamespacedName{Namespace: "hookrun-system", Name: agentsv1alpha1.RejectionReportPrefix + "rcv-0"},
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
		w.Counter.Add(ep, answer.SlotOf(answer.CodeForbidden), clk.Now())
	}
	if err := w.flush(ctx); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, w.Key, cm); err != nil {
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
	w.Counter.Add(ep, answer.SlotOf(answer.CodeUnauthorized), clk.Now())
	fail = errors.New("the API server is away")
	if err := w.flush(ctx); err == nil {
		t.Fatal("a failed write was not reported")
	}
	fail = nil
	if err := w.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, w.Key, cm); err != nil {
		t.Fatal(err)
	}
	if entry, _ := agentsv1alpha1.DecodeRejectionReportEntry(cm.Data[string(ep.UID)]); entry.Counts[answer.CodeUnauthorized] != 1 {
		t.Fatalf("after the retry the report holds %+v, want the unauthorized call", entry)
	}

	// A restarted replica starts from its report.
	again, _, _ := fakeReportWriter(t, interceptor.Funcs{})
	again.Reader = c
	again.restore(ctx)
	if _, changed := again.Counter.take(clk.Now(), MaxEntries); changed {
		t.Error("a restored report counts as changed: it would be written again as it is")
	}
	again.Counter.markChanged()
	lines, _ := again.Counter.take(clk.Now(), MaxEntries)
	if len(lines) != 1 {
		t.Fatalf("restored %+v, want the one endpoint", lines)
	}
	if got := lines[0].entry.reportEntry(); got.Counts[answer.CodeForbidden] != 3 || got.Counts[answer.CodeUnauthorized] != 1 {
		t.Errorf("restored %+v, want 3 forbidden and 1 unauthorized", got)
	}
}

func TestReportIsBounded(t *testing.T) {
	w, _, clk := fakeReportWriter(t, interceptor.Funcs{})
	for i := range MaxEntries + 50 {
		ep := testEndpoint(fmt.Sprintf("%0253d", i)) // the longest names
		for range i%3 + 1 {
			w.Counter.Add(ep, answer.SlotOf(answer.CodeForbidden), clk.Now())
			w.Counter.Add(ep, answer.SlotOf(answer.CodeRateLimited), clk.Now())
		}
	}
	lines, _ := w.Counter.take(clk.Now(), MaxEntries)
	cm, err := w.report(lines, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for k, v := range cm.Data {
		size += len(k) + len(v)
	}
	if len(cm.Data) != MaxEntries || size > 512<<10 {
		t.Fatalf("report of %d entries, %d bytes; want %d entries well within 1 MiB", len(cm.Data), size, MaxEntries)
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

// The rejection report goes on until the receive route has drained: a call
// refused during the shutdown delay is in the last report.
func TestReportWriterReportsTheDrain(t *testing.T) {
	w, c, clk := fakeReportWriter(t, interceptor.Funcs{})
	w.Interval = time.Hour
	drained := make(chan struct{})
	w.Until = drained
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- w.Start(ctx) }()
	cancel() // SIGTERM: the route still serves
	select {
	case err := <-stopped:
		t.Fatalf("the report writer stopped (%v) before the receive route drained", err)
	case <-time.After(200 * time.Millisecond):
	}
	ep := testEndpoint("github")
	w.Counter.Add(ep, answer.SlotOf(answer.CodeForbidden), clk.Now())
	close(drained)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), w.Key, cm); err != nil {
		t.Fatalf("no report was written: %v", err)
	}
	if entry, err := agentsv1alpha1.DecodeRejectionReportEntry(cm.Data[string(ep.UID)]); err != nil || entry.Counts[answer.CodeForbidden] != 1 {
		t.Errorf("the last report holds %+v (%v), want the call refused while the route drained", entry, err)
	}
}
