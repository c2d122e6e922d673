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

package filter

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// literalList is a CEL list of n zeros.
func literalList(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
}

// stepsOf evaluates expr on body with the clock out of the way and returns
// the steps it took and its result.
func stepsOf(t *testing.T, expr string, body []byte) (int, bool, error) {
	t.Helper()
	p, err := Compile(expr)
	if err != nil {
		t.Fatalf("Compile(%q): %v", expr, err)
	}
	ev := startEvaluation(context.Background(), &Call{Body: body})
	defer ev.end()
	out, err := ev.eval(p.prg)
	if err != nil {
		return MaxSteps - ev.act.steps.left, false, err
	}
	return MaxSteps - ev.act.steps.left, out.Value() == true, nil
}

// hogCores keeps every core busy until the test ends.
func hogCores(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				_ = n * n
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestStepsDecideTheVerdict: what ends an evaluation that works too long
// is its count of steps, the same on an idle machine and on one whose cores
// another tenant keeps busy; a comprehension within comprehensions over
// literal lists (the shape that kept a replica's cores busy until the
// clock stopped it) ends with ErrTooManySteps, not with the clock.
func TestStepsDecideTheVerdict(t *testing.T) {
	evalTimeout = time.Minute
	t.Cleanup(func() { evalTimeout = EvalTimeout })

	heavy := NestedAll(50, 3) + " && " + NestedAll(50, 3) + " && " + NestedAll(50, 3)
	idleSteps, _, idleErr := stepsOf(t, heavy, nil)
	if !errors.Is(idleErr, ErrTooManySteps) || idleSteps <= MaxSteps {
		t.Fatalf("idle: %d steps, %v; want more than %d and %v", idleSteps, idleErr, MaxSteps, ErrTooManySteps)
	}
	light := NestedAll(36, 3)
	lightSteps, lightOut, lightErr := stepsOf(t, light, nil)
	if lightErr != nil || !lightOut {
		t.Fatalf("%d steps: %v, %v; want true", lightSteps, lightOut, lightErr)
	}

	hogCores(t)
	busySteps, _, busyErr := stepsOf(t, heavy, nil)
	if !errors.Is(busyErr, ErrTooManySteps) || busySteps != idleSteps {
		t.Fatalf("busy: %d steps, %v; want %d and %v, as idle", busySteps, busyErr, idleSteps, ErrTooManySteps)
	}
	if s, out, err := stepsOf(t, light, nil); err != nil || !out || s != lightSteps {
		t.Fatalf("busy: %d steps, %v, %v; want %d, true, as idle", s, out, err, lightSteps)
	}
}

// TestStepsGrowWithTheWork: a comprehension's steps grow linearly with the
// elements it visits (cel-go's own cost tracking grows faster: see
// steps.go), and a filter over the 40,000 items of a 1 MiB body is far
// within MaxSteps.
func TestStepsGrowWithTheWork(t *testing.T) {
	items := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"items":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"kind":"item","n":%d}`, i)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	const expr = `body.items.exists(i, i.kind == "match")`
	s1, _, err := stepsOf(t, expr, items(50))
	if err != nil {
		t.Fatal(err)
	}
	s4, _, err := stepsOf(t, expr, items(200))
	if err != nil {
		t.Fatal(err)
	}
	if s4 < 4*s1-8 || s4 > 4*s1+8 {
		t.Fatalf("%d steps over 50 items, %d over 200; want 4 times", s1, s4)
	}
	if per := (s1 + 49) / 50; 40_000*per > MaxSteps/4 {
		t.Fatalf("%d steps an item: 40,000 items would take more than a quarter of MaxSteps", per)
	}
}

// TestTheClockStopsABusyMachine: an evaluation the clock stops (a machine
// so busy that its steps take longer than EvalTimeout) ends with
// ErrTimeout, which the receiver answers 503: undecided, not ignored.
func TestTheClockStopsABusyMachine(t *testing.T) {
	evalTimeout = time.Millisecond
	t.Cleanup(func() { evalTimeout = EvalTimeout })
	p, err := Compile(NestedAll(36, 3))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Matches(t.Context(), Call{}); ok || !errors.Is(err, ErrTimeout) {
		t.Fatalf("Matches = %v, %v; want false, %v", ok, err, ErrTimeout)
	}
	f, err := CompileFields(map[string]string{"a": NestedAll(36, 3), "b": `event`})
	if err != nil {
		t.Fatal(err)
	}
	if v := f.Eval(t.Context(), Call{Event: "push"}); !v.TimedOut {
		t.Fatalf("fields = %s, errors %v; want TimedOut", v.Object, v.Errors)
	}
}

// BenchmarkStepRate is the time of a step of the shapes that take the
// most steps: a comparison within comprehensions over literal lists, and
// a comprehension over a body's items (its reads of the body included).
// MaxSteps is chosen from it.
func BenchmarkStepRate(b *testing.B) {
	var body strings.Builder
	body.WriteString(`{"items":[`)
	for i := range 100 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"kind":"item","n":%d}`, i)
	}
	body.WriteString(`]}`)
	for name, tc := range map[string]struct {
		expr string
		body []byte
	}{
		"literal lists, 3 deep": {NestedAll(40, 3), nil},
		"items of a body":       {`body.items.exists(i, i.kind == "match" || i.n < 0)`, []byte(body.String())},
	} {
		b.Run(name, func(b *testing.B) {
			p, err := Compile(tc.expr)
			if err != nil {
				b.Fatal(err)
			}
			total := 0
			for b.Loop() {
				ev := startEvaluation(context.Background(), &Call{Body: tc.body, Event: "push"})
				if _, err := ev.eval(p.prg); err != nil {
					b.Fatal(err)
				}
				total += MaxSteps - ev.act.steps.left
				ev.end()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/step")
		})
	}
}
