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

// An evaluation's budget: the memory its values hold at any one time,
// which must stay within 4 times the body. Objects and arrays are read from
// the body's bytes, but each value an expression is given is a Go value (an
// element of 2 bytes, "0,", or 3, "{},", becomes hundreds of bytes once it
// is a CEL value and a step of the interpreter), so what it takes is
// charged as it is made.
//
// What a step of a comprehension makes of its element is given back when
// the step ends: a filter over 10,000 small items holds one item at a time
// and matches as it would over ten. Each step has a scope, and what is
// made of its element is charged to it; the scope is ended, and its
// charges refunded, when the iteration moves on. What outlives a step is
// charged to the evaluation for good: what the body's own values keep
// (members read, elements found by index), the lists and maps an
// expression builds (a step's element put in one keeps its scope: it is
// never refunded), what a map() or filter() keeps of each step, and whole
// values decoded into Go values.
const (
	// budgetPerBodyByte is what an evaluation may hold per byte of its
	// body.
	budgetPerBodyByte = 4
	// minBudget is what any evaluation may hold, whatever its body: the
	// interpreter's own fixed costs, and a small body's values.
	minBudget = 128 << 10
	// valueBytes is the charge for each value of an object or array the
	// expression is given (the value, its place in the interpreter, and
	// the scopes it keeps), and stepBytes that for each step of a
	// comprehension over one (the interpreter's allocations for the step;
	// measured: TestEvaluationHolds).
	valueBytes = 192
	stepBytes  = 128
	// indexedBytes is the charge for keeping an element found by its
	// index.
	indexedBytes = 64
	// objectBytes is the charge for reading an object's members into its
	// index (a Go map has a group of 8 slots at least), and memberBytes
	// that for each member (its slot in a map that grows by doubling, its
	// key in the list of keys), beside its key's bytes and what its value
	// holds (heldBy).
	objectBytes = 384
	memberBytes = 128
	// listBytes is the charge for a list an expression builds, and
	// slotBytes that for each of its elements; mapBytes and entryBytes
	// those for a map (a Go map has a group of 8 slots at least) and each
	// of its entries: beside the bytes of their strings.
	listBytes  = 96
	slotBytes  = 48
	mapBytes   = 384
	entryBytes = 96
	// keptBytes is what a map() or filter() keeps of each step: its
	// result's slot in a list that grows by doubling (16 bytes, and while
	// it grows the old array of half as many beside the new one).
	keptBytes = 48
	// stringHeaderBytes is what a string value holds beside its bytes.
	stringHeaderBytes = 16
	// viewBytes is the charge for the concatenation of two lists, which
	// keeps both.
	viewBytes = 64
)

// allocBudget is one evaluation's budget; its values share it, on the one
// goroutine of their evaluation.
type allocBudget struct {
	left int
	// over is set when a charge did not fit; the evaluation is then an
	// error whatever it returns, and stop ends it at the next look.
	over bool
	stop func()
	// root takes the charges of what lasts the whole evaluation; current
	// is the innermost step running, root when none is.
	root, current *scope
}

func newBudget(bodyBytes int, stop func()) *allocBudget {
	b := &allocBudget{left: max(budgetPerBodyByte*bodyBytes, minBudget), stop: stop}
	b.root = &scope{b: b, state: scopeKept}
	b.current = b.root
	return b
}

// spend takes n bytes from the budget, and tells whether they fit.
func (b *allocBudget) spend(n int) bool {
	if onSpend != nil {
		onSpend(b)
	}
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

// A scope's state: open while its step runs, ended (refunded) after it,
// or kept (its charges are for good).
type scopeState uint8

const (
	scopeOpen scopeState = iota
	scopeEnded
	scopeKept
)

// scope is what the values of one comprehension step were charged, and
// the scope of the step it runs within (parent).
type scope struct {
	b       *allocBudget
	parent  *scope
	charged int
	state   scopeState
}

// step opens the scope of a step that runs within parent.
func (b *allocBudget) step(parent *scope) *scope {
	s := &scope{b: b, parent: parent}
	b.current = s
	return s
}

// within opens a scope within s for what one value of s's step holds: a
// list that keeps the value keeps its scope, not all its step made.
func (s *scope) within() *scope { return &scope{b: s.b, parent: s} }

// take charges n bytes to s, and tells whether they fit. The scopes of
// the steps s runs within are charged too: ending one refunds what its
// inner steps did not.
func (s *scope) take(n int) bool {
	if !s.b.spend(n) {
		return false
	}
	for t := s; t != nil && t.state == scopeOpen; t = t.parent {
		t.charged += n
	}
	return true
}

// end ends s's step: its charges are refunded, unless s is kept, or a
// step it runs within has ended (which refunded them).
func (s *scope) end() {
	if s.state != scopeOpen {
		return
	}
	s.state = scopeEnded
	if s.outerEnded() {
		return
	}
	s.b.left += s.charged
	for t := s.parent; t != nil && t.state == scopeOpen; t = t.parent {
		t.charged -= s.charged
	}
}

// keep makes s's charges last the evaluation: one of its values outlives
// its step. Charges already refunded (its step, or one it ran within,
// ended) are charged again.
func (s *scope) keep() {
	switch {
	case s.state == scopeKept:
		return
	case s.state == scopeEnded || s.outerEnded():
		s.b.spend(s.charged)
	default:
		for t := s.parent; t != nil && t.state == scopeOpen; t = t.parent {
			t.charged -= s.charged
		}
	}
	s.state = scopeKept
}

// outerEnded tells whether a step s runs within has ended: a step left
// open by an iteration that stopped early (exists() found its element).
func (s *scope) outerEnded() bool {
	t := s.parent
	for t != nil && t.state == scopeOpen {
		t = t.parent
	}
	return t != nil && t.state == scopeEnded
}

// errTooLarge is the value an operation gives when the budget is spent; the
// evaluation is an error (ErrTooLarge) whatever it makes of it.
var errTooLarge = types.NewErr("%s", ErrTooLarge.Error())
