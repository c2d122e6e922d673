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
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"
)

// NestedAll is an expression that is true after n^depth steps of its
// innermost comprehension: all() over a literal list of n zeros within
// depth-1 others. Tests and benchmarks use it for evaluations that work
// long (three of 50^3 together take more than MaxSteps).
func NestedAll(n, depth int) string {
	list := "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
	expr := fmt.Sprintf("v%d >= 0", depth-1)
	for d := depth - 1; d >= 0; d-- {
		expr = fmt.Sprintf("%s.all(v%d, %s)", list, d, expr)
	}
	return expr
}

// measureEvery is how many steps and charges HeldBy lets pass between two
// measures at the most: about 10 ms of an evaluation slowed by them.
const measureEvery = 50_000

// HeldBy runs fn, which evaluates filters, and returns the most heap it
// held at once beyond what was live before: the live heap is measured by a
// collection run by the evaluation itself at a step or a charge (so
// nothing allocates while it marks), each time its budget has a 16th (at
// least 64 KiB) less than at the last measure, when it runs out, and at
// every measureEvery-th step or charge besides (what the budget does not
// charge grows between those). The clock is out of the way meanwhile: the collections make evaluations slow. For tests and
// benchmarks only: one at a time, nothing else evaluating.
func HeldBy(fn func()) uint64 {
	evalTimeout = time.Hour
	defer func() { evalTimeout = EvalTimeout }()
	live := func() uint64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := live()
	peak, lowest, calls, overSeen, every := before, math.MaxInt, 0, false, 0
	measure := func(b *allocBudget) {
		if every == 0 {
			every = max(64<<10, b.left/16)
		}
		if calls++; b.left < lowest-every || (b.over && !overSeen) || calls%measureEvery == 0 {
			lowest, overSeen = min(lowest, b.left), b.over
			peak = max(peak, live())
		}
	}
	// Before a charge too: one call (an object's members read) may build
	// much between two steps.
	onStep, onSpend = measure, measure
	defer func() { onStep, onSpend = nil, nil }()
	fn()
	return peak - before
}
