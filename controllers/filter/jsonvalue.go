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
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// ParseJSON returns body as the value body has in an expression: null when
// body is not exactly one JSON value; otherwise strings, bools and null as
// such, a number as an int when it is written without a fraction or
// exponent and fits in 64 bits, else as a double (CEL compares ints and
// doubles with each other: body.n == 1 and body.n > 0.5 both work), and
// objects and arrays as a CEL map and list read from the body's bytes when
// the expression asks (of an object with a key twice, the last counts, as
// in encoding/json).
func ParseJSON(body []byte) ref.Val {
	return parseJSON(body, &allocBudget{left: math.MaxInt})
}

func parseJSON(body []byte, b *allocBudget) ref.Val {
	if !validJSON(body) {
		return types.NullValue
	}
	i := skipWS(body, 0)
	end, _ := scanValue(body, i, 0)
	return jsonValue(body[i:end], b)
}

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

// jsonValue is the CEL value of raw, one valid JSON value.
func jsonValue(raw []byte, b *allocBudget) ref.Val {
	switch raw[0] {
	case '{':
		return &jsonObject{raw: raw, budget: b}
	case '[':
		return &jsonArray{raw: raw, budget: b, n: -1}
	case '"':
		return types.String(jsonString(raw))
	case 't':
		return types.True
	case 'f':
		return types.False
	case 'n':
		return types.NullValue
	}
	if !bytes.ContainsAny(raw, ".eE") {
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return types.Int(i)
		}
	}
	f, _ := strconv.ParseFloat(string(raw), 64) // out of range: ±Inf
	return types.Double(f)
}

// element is the value raw of a member or element handed to the
// expression, charged to b; errTooLarge when it does not fit.
func element(raw []byte, b *allocBudget) ref.Val {
	if !b.take(valueBytes + stringBytes(raw)) {
		return errTooLarge
	}
	return jsonValue(raw, b)
}

// stringBytes is what decoding raw allocates when it is a string.
func stringBytes(raw []byte) int {
	if raw[0] == '"' {
		return len(raw)
	}
	return 0
}

// jsonString decodes the valid JSON string raw (quotes included); each
// byte of invalid UTF-8 becomes U+FFFD, as in encoding/json.
func jsonString(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// members calls fn with each key (a JSON string) and value of the valid
// object raw, in order, until fn returns false.
func members(raw []byte, fn func(key, value []byte) bool) {
	i := skipWS(raw, 1)
	if raw[i] == '}' {
		return
	}
	for {
		keyEnd, _ := scanString(raw, i)
		start := skipWS(raw, skipWS(raw, keyEnd)+1)
		end, _ := scanValue(raw, start, 0)
		if !fn(raw[i:keyEnd], raw[start:end]) {
			return
		}
		if i = skipWS(raw, end); raw[i] == '}' {
			return
		}
		i = skipWS(raw, i+1)
	}
}

// materialize decodes raw into Go values, for what needs the whole value
// (concatenation, conversion), charged to b.
func materialize(raw []byte, b *allocBudget) ref.Val {
	if !b.take(decodeBytesPerByte * len(raw)) {
		return errTooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v)
	return types.DefaultTypeAdapter.NativeToValue(numbers(v))
}

// numbers replaces every json.Number in v by an int64 or a float64, as
// jsonValue reads them.
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		return jsonValue([]byte(t), nil).Value()
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	}
	return v
}

// jsonObject is a JSON object as a CEL map(string, dyn). Its members are
// read from the bytes at the first look and kept (nested objects and
// arrays stay unread until looked at), and its Go value is decoded at most
// once: every operation after the first is as cheap as CEL's cost model
// assumes (a select, size() and an iteration step one unit), which is what
// makes the compile-time cost estimate bound an evaluation. A value is used
// by one evaluation, on one goroutine.
type jsonObject struct {
	raw    []byte
	budget *allocBudget
	// read is what was read of the object, nil until it is: an object
	// that is only looked at through a few keys (most of a body's) stays
	// small.
	*read
}

type read struct {
	// keys are the keys in order, each once (a key written twice is one
	// member, the last); vals the members by key. Both nil until loaded.
	keys []ref.Val
	vals map[string]ref.Val
	// decoded is the whole value, once needed (conversion).
	decoded ref.Val
}

var (
	_ traits.Mapper = (*jsonObject)(nil)
	_ traits.Lister = (*jsonArray)(nil)
)

// load reads the members, and tells whether they fit the budget.
func (o *jsonObject) load() bool {
	if o.read == nil {
		o.read = &read{}
	}
	if o.vals != nil {
		return true
	}
	if !o.budget.take(objectBytes) {
		return false
	}
	vals := map[string]ref.Val{}
	fits := true
	members(o.raw, func(raw, value []byte) bool {
		if fits = o.budget.take(memberBytes + len(raw)); !fits {
			return false
		}
		k := jsonString(raw)
		if _, seen := vals[k]; !seen {
			o.keys = append(o.keys, types.String(k))
		}
		vals[k] = jsonValue(value, o.budget)
		return true
	})
	if !fits {
		o.keys = nil
		return false
	}
	o.vals = vals
	return true
}

func (o *jsonObject) value() ref.Val {
	if o.read == nil {
		o.read = &read{}
	}
	if o.decoded == nil {
		o.decoded = materialize(o.raw, o.budget)
	}
	return o.decoded
}

func (o *jsonObject) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		if types.IsUnknownOrError(key) {
			return key, false
		}
		return nil, false
	}
	if len(o.raw) < smallJSON && (o.read == nil || o.vals == nil) {
		// Scanning a small object costs less than keeping it, and at most
		// smallJSON bytes: still a constant, as the estimate assumes.
		var found []byte
		members(o.raw, func(raw, value []byte) bool {
			if jsonStringIs(raw, string(k)) {
				found = value
			}
			return true
		})
		if found == nil {
			return nil, false
		}
		return element(found, o.budget), true
	}
	if !o.load() {
		return errTooLarge, false
	}
	v, found := o.vals[string(k)]
	return v, found
}

// smallJSON is the size below which an object is scanned at each lookup
// rather than read once and kept.
const smallJSON = 512

// jsonStringIs tells whether the JSON string raw decodes to key.
func jsonStringIs(raw []byte, key string) bool {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner) == key
	}
	return jsonString(raw) == key
}

func (o *jsonObject) Get(key ref.Val) ref.Val {
	v, found := o.Find(key)
	switch {
	case found:
		return v
	case v != nil:
		return v
	}
	return types.NewErr("no such key: %v", key)
}

func (o *jsonObject) Contains(key ref.Val) ref.Val {
	v, found := o.Find(key)
	if !found && v != nil {
		return v
	}
	return types.Bool(found)
}

// Size counts the keys, each once.
func (o *jsonObject) Size() ref.Val {
	if !o.load() {
		return errTooLarge
	}
	return types.Int(len(o.keys))
}

// Iterator yields the keys, each once.
func (o *jsonObject) Iterator() traits.Iterator {
	o.load()
	return &sliceIterator{vals: o.keys, budget: o.budget}
}

func (o *jsonObject) ConvertToNative(t reflect.Type) (any, error) {
	return o.value().ConvertToNative(t)
}

func (o *jsonObject) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return o
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to '%s'", t)
}

// Equal compares member by member, reading no more of o than it must: an
// object is never equal to what is not a map (body == null).
func (o *jsonObject) Equal(other ref.Val) ref.Val {
	m, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if size := o.Size(); types.IsError(size) || size.Equal(m.Size()) != types.True {
		return size.Equal(m.Size())
	}
	for _, k := range o.keys {
		w, found := m.Find(k)
		if !found {
			return types.False
		}
		name, _ := k.(types.String) // every key of an object is a string
		if eq := o.vals[string(name)].Equal(w); eq != types.True {
			return eq
		}
	}
	return types.True
}

func (o *jsonObject) Type() ref.Type { return types.MapType }
func (o *jsonObject) Value() any     { return o.value().Value() }

// jsonArray is a JSON array as a CEL list(dyn). Its elements stay the
// body's bytes: an iteration reads them in turn, and each is a value only
// while the expression holds it; an index finds its element by its offset
// (the offsets are found at the first index, 4 bytes an element) and keeps
// it, so that an element selected into in every step of a comprehension is
// read once.
type jsonArray struct {
	raw    []byte
	budget *allocBudget
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
		a.decoded = materialize(a.raw, a.budget)
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
		if !a.budget.take(4 * a.n) {
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
	v := element(a.raw[start:end], a.budget)
	if !types.IsError(v) && a.budget.take(indexedBytes) {
		a.indexed[i] = v
	}
	return v
}

func (a *jsonArray) Contains(v ref.Val) ref.Val {
	it := a.Iterator()
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

func (a *jsonArray) Iterator() traits.Iterator {
	return &arrayIterator{a: a, i: a.first()}
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
	it := a.Iterator()
	for i := 0; it.HasNext() == types.True; i++ {
		if eq := it.Next().Equal(l.Get(types.Int(i))); eq != types.True {
			return eq
		}
	}
	if a.budget.over {
		return errTooLarge
	}
	return types.True
}

func (a *jsonArray) Type() ref.Type { return types.ListType }
func (a *jsonArray) Value() any     { return a.value().Value() }

// arrayIterator yields the elements of a, read in turn from its bytes.
type arrayIterator struct {
	iteratorVal
	a *jsonArray
	i int
}

// HasNext ends an iteration early once the budget is spent (the
// evaluation is an error then).
func (it *arrayIterator) HasNext() ref.Val {
	return types.Bool(it.a.raw[it.i] != ']' && !it.a.budget.over)
}

func (it *arrayIterator) Next() ref.Val {
	if it.a.raw[it.i] == ']' {
		return nil
	}
	start := it.i
	end, after := it.a.next(start)
	it.i = after
	return element(it.a.raw[start:end], it.a.budget)
}

// sliceIterator yields vals, each step charged to budget as a step over
// an array is.
type sliceIterator struct {
	iteratorVal
	vals   []ref.Val
	budget *allocBudget
}

func (it *sliceIterator) HasNext() ref.Val { return types.Bool(len(it.vals) > 0 && !it.budget.over) }
func (it *sliceIterator) Next() ref.Val {
	if len(it.vals) == 0 {
		return nil
	}
	if !it.budget.take(valueBytes) {
		return errTooLarge
	}
	v := it.vals[0]
	it.vals = it.vals[1:]
	return v
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
