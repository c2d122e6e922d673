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
	"github.com/google/cel-go/common/types"
)

// An evaluation's budget: what reading the body may allocate. Objects and
// arrays are read from the body's bytes, but each value an expression is
// given is a Go value (an element of 2 bytes, "0,", or 3, "{},", becomes
// tens of bytes once it is a CEL value, and the interpreter allocates for
// each step of a comprehension besides), so what an evaluation may take is
// counted as it reads, and it is stopped when that would exceed 4 times
// the body.
const (
	// budgetPerBodyByte is what an evaluation may allocate per byte of
	// its body.
	budgetPerBodyByte = 4
	// minBudget is what any evaluation may allocate, whatever its body:
	// the interpreter's own fixed costs, and a small body's values.
	minBudget = 128 << 10
	// valueBytes is the charge for each value of an object or array the
	// expression is given, and for each step of a comprehension over one:
	// the value, its place in the interpreter, and the step's own
	// allocations (measured: TestEvaluationAllocates).
	valueBytes = 320
	// indexedBytes is the charge for keeping an element found by its
	// index.
	indexedBytes = 64
	// objectBytes is the charge for reading an object's members into its
	// index (a Go map has a group of 8 slots at least), and memberBytes
	// that for each member, beside its key's bytes.
	objectBytes = 384
	memberBytes = 96
	// decodeBytesPerByte is the charge per byte of a value decoded whole
	// into Go values (equality with a literal, concatenation, conversion),
	// as encoding/json allocates at worst.
	decodeBytesPerByte = 48
)

// allocBudget is one evaluation's budget; values share it, on the one
// goroutine of their evaluation.
type allocBudget struct {
	left int
	// over is set when a charge did not fit; the evaluation is then an
	// error whatever it returns, and stop ends it at the next look.
	over bool
	stop func()
}

func newBudget(bodyBytes int, stop func()) *allocBudget {
	return &allocBudget{left: max(budgetPerBodyByte*bodyBytes, minBudget), stop: stop}
}

// take charges n bytes, and tells whether they fit.
func (b *allocBudget) take(n int) bool {
	if b.over {
		return false
	}
	if b.left -= n; b.left < 0 {
		b.over = true
		if b.stop != nil {
			b.stop()
		}
		return false
	}
	return true
}

// errTooLarge is the value an operation gives when the budget is spent; the
// evaluation is an error (ErrTooLarge) whatever it makes of it.
var errTooLarge = types.NewErr("%s", ErrTooLarge.Error())
