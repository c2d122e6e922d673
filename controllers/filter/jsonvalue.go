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
	if !validJSON(body) {
		return types.NullValue
	}
	i := skipWS(body, 0)
	end, _ := scanValue(body, i, 0)
	return jsonValue(body[i:end])
}

// jsonValue is the CEL value of raw, one valid JSON value.
func jsonValue(raw []byte) ref.Val {
	switch raw[0] {
	case '{':
		return &jsonObject{raw: raw}
	case '[':
		return &jsonArray{raw: raw}
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
// (equality, conversion).
func materialize(raw []byte) ref.Val {
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
		return jsonValue([]byte(t)).Value()
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
	raw []byte
	// keys are the keys in order, each once (a key written twice is one
	// member, the last); vals the members by key. Both nil until loaded.
	keys []ref.Val
	vals map[string]ref.Val
	// decoded is the whole value, once needed (equality, conversion).
	decoded ref.Val
}

var (
	_ traits.Mapper = (*jsonObject)(nil)
	_ traits.Lister = (*jsonArray)(nil)
)

func (o *jsonObject) load() {
	if o.vals != nil {
		return
	}
	o.vals = map[string]ref.Val{}
	members(o.raw, func(raw, value []byte) bool {
		k := jsonString(raw)
		if _, seen := o.vals[k]; !seen {
			o.keys = append(o.keys, types.String(k))
		}
		o.vals[k] = jsonValue(value)
		return true
	})
}

func (o *jsonObject) value() ref.Val {
	if o.decoded == nil {
		o.decoded = materialize(o.raw)
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
	if len(o.raw) < smallJSON && o.vals == nil {
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
		return jsonValue(found), true
	}
	o.load()
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
	o.load()
	return types.Int(len(o.keys))
}

// Iterator yields the keys, each once.
func (o *jsonObject) Iterator() traits.Iterator {
	o.load()
	return &sliceIterator{vals: o.keys}
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

func (o *jsonObject) Equal(other ref.Val) ref.Val { return o.value().Equal(other) }
func (o *jsonObject) Type() ref.Type              { return types.MapType }
func (o *jsonObject) Value() any                  { return o.value().Value() }

// jsonArray is a JSON array as a CEL list(dyn), read as jsonObject is: its
// elements at the first look, its Go value at most once.
type jsonArray struct {
	raw []byte
	// elems are the elements, once loaded (loaded tells an empty array
	// from one not read yet).
	elems   []ref.Val
	loaded  bool
	decoded ref.Val
}

func (a *jsonArray) load() {
	if a.loaded {
		return
	}
	a.loaded = true
	i := skipWS(a.raw, 1)
	for a.raw[i] != ']' {
		end, _ := scanValue(a.raw, i, 0)
		a.elems = append(a.elems, jsonValue(a.raw[i:end]))
		if i = skipWS(a.raw, end); a.raw[i] == ',' {
			i = skipWS(a.raw, i+1)
		}
	}
}

func (a *jsonArray) value() ref.Val {
	if a.decoded == nil {
		a.decoded = materialize(a.raw)
	}
	return a.decoded
}

func (a *jsonArray) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.NewErr("%v", err)
	}
	a.load()
	if i < 0 || i >= len(a.elems) {
		return types.NewErr("index out of bounds: %d", i)
	}
	return a.elems[i]
}

func (a *jsonArray) Contains(v ref.Val) ref.Val {
	a.load()
	for _, e := range a.elems {
		if e.Equal(v) == types.True {
			return types.True
		}
	}
	return types.False
}

func (a *jsonArray) Size() ref.Val {
	a.load()
	return types.Int(len(a.elems))
}

func (a *jsonArray) Iterator() traits.Iterator {
	a.load()
	return &sliceIterator{vals: a.elems}
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

func (a *jsonArray) Equal(other ref.Val) ref.Val { return a.value().Equal(other) }
func (a *jsonArray) Type() ref.Type              { return types.ListType }
func (a *jsonArray) Value() any                  { return a.value().Value() }

// sliceIterator yields vals.
type sliceIterator struct {
	iteratorVal
	vals []ref.Val
}

func (it *sliceIterator) HasNext() ref.Val { return types.Bool(len(it.vals) > 0) }
func (it *sliceIterator) Next() ref.Val {
	if len(it.vals) == 0 {
		return nil
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
