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
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// What an expression builds: lists and maps (literals with a value only
// known as it runs, and what map() and filter() keep of each step) and
// concatenations. Each is charged to the budget for the rest of the
// evaluation, and each element of a list or map built is a step: nested
// map()s over literal lists ([0..35].map(a, [0..35].map(b, …))) keep every
// result, and are stopped by the budget as a filter over a large body is.
// A step's element put in a list or map keeps the step's scope: what was
// made of it is never refunded (budget.go). A string built by a
// concatenation lasts its step, unless a list keeps it: each list charges
// the bytes of the strings it holds.

// builds tells whether c builds a value each time it runs: a list or map
// of constants is built once, when the program is (cel.OptOptimize).
func builds(c interpreter.InterpretableConstructor) bool {
	if c.Type() != types.ListType && c.Type() != types.MapType {
		return false
	}
	for _, v := range c.InitVals() {
		if _, constant := v.(interpreter.InterpretableConst); !constant {
			return true
		}
	}
	return false
}

// builtValue is a list or map literal, charged as it is built.
type builtValue struct {
	interpreter.InterpretableConstructor
}

func (c *builtValue) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	return meterOf(frame).built(c.InterpretableConstructor.Exec(frame))
}

func (c *builtValue) Eval(vars interpreter.Activation) ref.Val {
	return meterOf(vars).built(c.InterpretableConstructor.Eval(vars))
}

// built counts a step per element of the list or map v and charges it,
// keeping the scopes of the elements a step made.
func (s *steps) built(v ref.Val) ref.Val {
	if s == nil || types.IsError(v) {
		return v
	}
	n, held, own := 0, 0, 0
	switch c := v.(type) {
	case traits.Mapper:
		it := c.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			n++
			held += kept(k) + kept(c.Get(k))
		}
		own = mapBytes + n*entryBytes
	case traits.Lister:
		n = sizeOf(c)
		for i := range n {
			held += kept(c.Get(types.Int(i)))
		}
		own = listBytes + n*slotBytes
	}
	s.takeN(n)
	if !s.budget.root.take(own + held) {
		return errTooLarge
	}
	if _, list := v.(traits.Lister); list && reflect.TypeOf(v).Comparable() {
		s.lastList, s.lastListBytes = v, own
	}
	return v
}

// sizeOf is the size of l; 0 when it has none (an error).
func sizeOf(l traits.Lister) int {
	n, _ := l.Size().(types.Int)
	return int(n)
}

// kept is what v holds beyond its place in a list: the bytes of a string;
// a value of the body keeps the scope of the step that read it.
func kept(v ref.Val) int {
	switch t := v.(type) {
	case types.String:
		return stringHeaderBytes + len(t)
	case types.Bytes:
		return stringHeaderBytes + len(t)
	case *jsonObject:
		t.s.keep()
	case *jsonArray:
		t.s.keep()
	}
	return 0
}

// countedAdd is _+_, a step, charged for what it builds: a string's bytes
// (for its step), a concatenation of lists, and what a map() or filter()
// keeps of each step. It calls Add as cel-go's _+_ does (its one overload
// of every type is lhs.(traits.Adder).Add(rhs)).
type countedAdd struct {
	interpreter.InterpretableCall
}

func (c *countedAdd) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	s := stepOf(frame)
	args := c.Args()
	l := args[0].Exec(frame)
	if types.IsError(l) {
		return l
	}
	return c.add(s, l, args[1].Exec(frame))
}

func (c *countedAdd) Eval(vars interpreter.Activation) ref.Val {
	s := stepOf(vars)
	args := c.Args()
	l := args[0].Eval(vars)
	if types.IsError(l) {
		return l
	}
	return c.add(s, l, args[1].Eval(vars))
}

func (c *countedAdd) add(s *steps, l, r ref.Val) ref.Val {
	if types.IsError(r) {
		return r
	}
	var unk *types.Unknown
	unk, _ = types.MaybeMergeUnknowns(l, unk)
	unk, _ = types.MaybeMergeUnknowns(r, unk)
	if unk != nil {
		return unk
	}
	adder, ok := l.(traits.Adder)
	if !ok || !l.Type().HasTrait(traits.AdderType) {
		return types.NewErrWithNodeID(c.ID(), "no such overload: %s", c.Function())
	}
	// A map() or filter()'s list: Add appends to it in place.
	_, accumulates := l.(traits.MutableLister)
	v := types.LabelErrNode(c.ID(), adder.Add(r))
	if s == nil || types.IsError(v) {
		return v
	}
	b := s.budget
	switch t := v.(type) {
	case types.String:
		b.current.take(len(t))
	case types.Bytes:
		b.current.take(len(t))
	case traits.Lister:
		if !accumulates {
			// The concatenation keeps both lists: a list of the body read
			// in a step keeps that step's scope.
			kept(l)
			kept(r)
			b.root.take(viewBytes)
			break
		}
		n := 0
		if rl, ok := r.(traits.Lister); ok {
			n = sizeOf(rl)
		}
		if s.lastList != nil && r == s.lastList {
			// The step's one-element list is dropped once its element is
			// copied: only what that holds stays.
			b.left += s.lastListBytes
			s.lastList = nil
		}
		b.root.take(n * keptBytes)
	}
	if b.over {
		return errTooLarge
	}
	return v
}
