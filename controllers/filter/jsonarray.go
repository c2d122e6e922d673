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
)

// jsonArray is a JSON array as a CEL list(dyn). Its elements stay the
// body's bytes: an iteration reads them in turn, and each is a value only
// while the expression holds it; an index finds its element by its offset
// (the offsets are found at the first index, 4 bytes an element) and keeps
// it, so that an element selected into in every step of a comprehension is
// read once.
type jsonArray struct {
	raw []byte
	// s is the scope its reads are charged to: the step that made it.
	s *scope
	// n is the number of elements, -1 until counted; offsets their
	// starts, nil until an index needs them.
	n       int
	offsets []int32
	indexed map[int]ref.Val
	decoded ref.Val
}

// next returns the end of the element that starts at i and the start of
// the one after it (at the closing bracket after the last).
func (a *jsonArray) next(i int) (end, after int) {
	end, _ = scanValue(a.raw, i, 0)
	if after = skipWS(a.raw, end); a.raw[after] == ',' {
		after = skipWS(a.raw, after+1)
	}
	return end, after
}

func (a *jsonArray) first() int { return skipWS(a.raw, 1) }

func (a *jsonArray) count() int {
	if a.n < 0 {
		a.n = 0
		for i := a.first(); a.raw[i] != ']'; _, i = a.next(i) {
			a.n++
		}
	}
	return a.n
}

func (a *jsonArray) value() ref.Val {
	if a.decoded == nil {
		a.decoded = materialize(a.raw, a.s.b)
	}
	return a.decoded
}

func (a *jsonArray) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.NewErr("%v", err)
	}
	if i < 0 || i >= a.count() {
		return types.NewErr("index out of bounds: %d", i)
	}
	if v, ok := a.indexed[i]; ok {
		return v
	}
	if a.offsets == nil {
		if !a.s.take(4 * a.n) {
			return errTooLarge
		}
		a.offsets = make([]int32, 0, a.n)
		for j := a.first(); a.raw[j] != ']'; _, j = a.next(j) {
			a.offsets = append(a.offsets, int32(j)) //nolint:gosec // a body is at most 1 MiB
		}
		a.indexed = map[int]ref.Val{}
	}
	start := int(a.offsets[i])
	end, _ := a.next(start)
	v := element(a.raw[start:end], a.s)
	if !types.IsError(v) && a.s.take(indexedBytes) {
		a.indexed[i] = v
	}
	return v
}

func (a *jsonArray) Contains(v ref.Val) ref.Val {
	it := a.iterator()
	defer it.finish()
	for it.HasNext() == types.True {
		e := it.Next()
		if types.IsError(e) {
			return e
		}
		if e.Equal(v) == types.True {
			return types.True
		}
	}
	return types.False
}

func (a *jsonArray) Size() ref.Val { return types.Int(a.count()) }

func (a *jsonArray) Iterator() traits.Iterator { return a.iterator() }

func (a *jsonArray) iterator() *arrayIterator {
	return &arrayIterator{a: a, i: a.first(), stepper: newStepper(a.s.b)}
}

func (a *jsonArray) Add(other ref.Val) ref.Val {
	if adder, ok := a.value().(traits.Adder); ok {
		return adder.Add(other)
	}
	return types.MaybeNoSuchOverloadErr(other)
}

func (a *jsonArray) ConvertToNative(t reflect.Type) (any, error) {
	return a.value().ConvertToNative(t)
}

func (a *jsonArray) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.ListType:
		return a
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from list to '%s'", t)
}

// Equal compares element by element: an array is never equal to what is
// not a list.
func (a *jsonArray) Equal(other ref.Val) ref.Val {
	l, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if eq := a.Size().Equal(l.Size()); eq != types.True {
		return eq
	}
	it := a.iterator()
	defer it.finish()
	// Another array of the body is read in turn too: an index would keep
	// each of its elements.
	var next func(i int) ref.Val
	if b, ok := other.(*jsonArray); ok {
		bit := b.iterator()
		defer bit.finish()
		next = func(int) ref.Val { return bit.Next() }
	} else {
		next = func(i int) ref.Val { return l.Get(types.Int(i)) }
	}
	for i := 0; it.HasNext() == types.True; i++ {
		if eq := it.Next().Equal(next(i)); eq != types.True {
			return eq
		}
	}
	if a.s.b.over {
		return errTooLarge
	}
	return types.True
}

func (a *jsonArray) Type() ref.Type { return types.ListType }
func (a *jsonArray) Value() any     { return a.value().Value() }

// arrayIterator yields the elements of a, read in turn from its bytes,
// each in a step of its own.
type arrayIterator struct {
	iteratorVal
	stepper
	a *jsonArray
	i int
}

// HasNext ends an iteration early once the budget is spent (the
// evaluation is an error then).
func (it *arrayIterator) HasNext() ref.Val {
	if it.a.raw[it.i] == ']' || it.a.s.b.over {
		it.finish()
		return types.False
	}
	return types.True
}

func (it *arrayIterator) Next() ref.Val {
	if it.a.raw[it.i] == ']' {
		return nil
	}
	start := it.i
	end, after := it.a.next(start)
	it.i = after
	step := it.next()
	if !step.take(stepBytes) {
		return errTooLarge
	}
	return element(it.a.raw[start:end], step.within())
}

// sliceIterator yields vals, each in a step charged as a step over an
// array is.
type sliceIterator struct {
	iteratorVal
	stepper
	vals []ref.Val
}

func (it *sliceIterator) HasNext() ref.Val {
	if len(it.vals) == 0 || it.b.over {
		it.finish()
		return types.False
	}
	return types.True
}

func (it *sliceIterator) Next() ref.Val {
	if len(it.vals) == 0 {
		return nil
	}
	if !it.next().take(stepBytes) {
		return errTooLarge
	}
	v := it.vals[0]
	it.vals = it.vals[1:]
	return v
}

// stepper gives each step of an iteration a scope, and ends it when the
// iteration moves on: what the step made of its element is given back. An
// iteration that stops early (exists() found its element) leaves its last
// step open: the step it ran within ends it with its own.
type stepper struct {
	b *allocBudget
	// outer is the step the iteration runs within; last the scope of its
	// latest step, nil before the first and after the last.
	outer, last *scope
}

func newStepper(b *allocBudget) stepper { return stepper{b: b, outer: b.current} }

// next ends the latest step and opens the next.
func (st *stepper) next() *scope {
	if st.last != nil {
		st.last.end()
	}
	st.last = st.b.step(st.outer)
	return st.last
}

// finish ends the latest step: the iteration is over.
func (st *stepper) finish() {
	if st.last != nil {
		st.last.end()
		st.last = nil
	}
	st.b.current = st.outer
}

// iteratorVal is the ref.Val side of an iterator, which no expression sees.
type iteratorVal struct{}

func (iteratorVal) ConvertToNative(reflect.Type) (any, error) {
	return nil, errIterator
}
func (iteratorVal) ConvertToType(ref.Type) ref.Val {
	return types.NewErr("type conversion on an iterator")
}
func (iteratorVal) Equal(other ref.Val) ref.Val { return types.MaybeNoSuchOverloadErr(other) }
func (iteratorVal) Type() ref.Type              { return types.IteratorType }
func (iteratorVal) Value() any                  { return nil }

var errIterator = errorString("type conversion on an iterator")

type errorString string

func (e errorString) Error() string { return string(e) }
