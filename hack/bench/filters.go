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

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookrun/hookrun/controllers/filter"
)

// What one evaluation of spec.filter costs the receiver at its worst: the
// documented filters (docs/user-guide.md) on 1 MiB bodies built to make
// them work hardest, and expressions built to run long or allocate much
// that still compile. Measured in this process, as the receiver evaluates:
// one call at a time, its time and the heap bytes it allocated.

// filterDocumented are the filters of docs/user-guide.md.
var filterDocumented = []struct{ name, expr string }{
	{"GitHub issues opened", `event == "issues" && body.action == "opened"`},
	{"GitHub pushes to main", `event == "push" && body.ref == "refs/heads/main"`},
	{"Alertmanager firing and critical", `body.status == "firing" && body.alerts.exists(a, a.labels.severity == "critical")`},
}

// filterBodies are 1 MiB bodies of the smallest JSON values (each a Go
// value many times its size) and of many keys.
func filterBodies() []struct {
	name string
	body []byte
} {
	const head = `{"status":"firing","action":"opened","ref":"refs/heads/main","alerts":[`
	fill := func(prefix, elem, suffix string) []byte {
		n := (filter.MaxInputBytes - len(prefix) - len(suffix)) / (len(elem) + 1)
		return []byte(prefix + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + suffix)
	}
	var keys strings.Builder
	keys.WriteString(`{"status":"firing","action":"opened","ref":"refs/heads/main"`)
	for i := 0; keys.Len() < filter.MaxInputBytes-16; i++ {
		fmt.Fprintf(&keys, `,"k%d":0`, i%1000)
	}
	keys.WriteString("}")
	return []struct {
		name string
		body []byte
	}{
		{"alerts of {}", fill(head, `{}`, `]}`)},
		{"alerts of []", fill(head, `[]`, `]}`)},
		{"alerts of 0", fill(head, `0`, `]}`)},
		{`alerts of ""`, fill(head, `""`, `]}`)},
		{"alerts of nested objects", fill(head, `{"labels":{"severity":[{}]}}`, `]}`)},
		{"an object of many keys", []byte(keys.String())},
	}
}

// filterHostile are expressions within the cost limit built to run long or
// allocate much.
func filterHostile() []struct{ name, expr string } {
	list := "[" + strings.TrimSuffix(strings.Repeat("0,", 40), ",") + "]"
	return []struct{ name, expr string }{
		{"4 comprehensions of 40 within each other (2.5M steps)",
			list + `.all(i, ` + list + `.all(j, ` + list + `.all(k, ` + list + `.all(l, l >= 0 && rawBody.startsWith("{")))))`},
		{"a regular expression of 16 alternatives over rawBody", `rawBody.matches("(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p)*q")`},
		{"every element copied into a list", `body.alerts.map(a, a).size() > 0`},
		{"the body compared with itself", `size(body) > 0 && body == body`},
	}
}

// measureFilters gives a row per documented filter (its worst hostile
// body) and per hostile expression (its worst body).
func measureFilters(repeat int, logf func(string, ...any)) ([]row, error) {
	bodies := filterBodies()
	var rows []row
	measureOne := func(kind, name, expr string) error {
		p, err := filter.Compile(expr)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var worst filterFigure
		for _, b := range bodies {
			f := evaluateFilter(p, b.body, repeat)
			f.body = b.name
			if f.worse(worst) {
				worst = f
			}
		}
		logf("%-60s %s", name, worst)
		rows = append(rows, row{
			what: fmt.Sprintf("filter, %s: %s, on its worst 1 MiB body", kind, name), goal: "<= 100 ms, <= 4x the body",
			figure: worst.String(), ok: worst.took <= 100*time.Millisecond+10*time.Millisecond && worst.ratio <= 4,
		})
		return nil
	}
	for _, d := range filterDocumented {
		if err := measureOne("documented", d.name, d.expr); err != nil {
			return nil, err
		}
	}
	for _, h := range filterHostile() {
		if err := measureOne("hostile", h.name, h.expr); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

type filterFigure struct {
	body    string
	took    time.Duration
	ratio   float64
	outcome string
}

func (f filterFigure) worse(than filterFigure) bool {
	return f.took > than.took || f.ratio > than.ratio
}

func (f filterFigure) String() string {
	return fmt.Sprintf("%.1f ms, %.2fx the body (%s: %s)", float64(f.took.Microseconds())/1000, f.ratio, f.body, f.outcome)
}

// evaluateFilter evaluates p on body repeat times: the median time, the
// most bytes one call held at once as a multiple of the body (measured in
// a run of its own: the measure makes it slow), and the outcome.
func evaluateFilter(p *filter.Program, body []byte, repeat int) filterFigure {
	var times []time.Duration
	var f filterFigure
	for range max(repeat, 1) {
		start := time.Now()
		ok, err := p.Matches(context.Background(), filter.Call{Body: body})
		times = append(times, time.Since(start))
		switch {
		case err != nil:
			f.outcome = "ignored, " + err.Error()
		case ok:
			f.outcome = "matched"
		default:
			f.outcome = "ignored"
		}
	}
	held := filter.HeldBy(func() { _, _ = p.Matches(context.Background(), filter.Call{Body: body}) })
	f.ratio = float64(held) / float64(len(body))
	slices.Sort(times)
	f.took = times[len(times)/2]
	return f
}
