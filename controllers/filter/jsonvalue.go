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

// keyIs tells whether the JSON string raw decodes to key.
func keyIs(raw []byte, key string) bool {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner) == key
	}
	return jsonString(raw) == key
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

// jsonObject is a JSON object as a CEL map(string, dyn).
type jsonObject struct {
	raw []byte
	// index holds the members of an object of indexFrom bytes or more by
	// key, made at its first lookup: an expression that reads several
	// fields of a large body scans it once.
	index map[string][]byte
}

// indexFrom is the size from which an object's members are indexed.
const indexFrom = 4 << 10

var (
	_ traits.Mapper = (*jsonObject)(nil)
	_ traits.Lister = (*jsonArray)(nil)
)

func (o *jsonObject) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		if types.IsUnknownOrError(key) {
			return key, false
		}
		return nil, false
	}
	var found []byte
	switch {
	case o.index != nil:
		found = o.index[string(k)]
	case len(o.raw) >= indexFrom:
		o.index = map[string][]byte{}
		members(o.raw, func(raw, value []byte) bool {
			o.index[jsonString(raw)] = value
			return true
		})
		found = o.index[string(k)]
	default:
		members(o.raw, func(raw, value []byte) bool {
			if keyIs(raw, string(k)) {
				found = value
			}
			return true
		})
	}
	if found == nil {
		return nil, false
	}
	return jsonValue(found), true
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
func (o *jsonObject) Size() ref.Val { return types.Int(len(o.keys())) }

// Iterator yields the keys, each once.
func (o *jsonObject) Iterator() traits.Iterator { return &sliceIterator{vals: o.keys()} }

// keys are the object's keys in order, each once (a key written twice is
// one member, the last).
func (o *jsonObject) keys() []ref.Val {
	var keys []ref.Val
	seen := map[string]bool{}
	members(o.raw, func(raw, _ []byte) bool {
		if k := jsonString(raw); !seen[k] {
			seen[k] = true
			keys = append(keys, types.String(k))
		}
		return true
	})
	return keys
}

func (o *jsonObject) ConvertToNative(t reflect.Type) (any, error) {
	return materialize(o.raw).ConvertToNative(t)
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

func (o *jsonObject) Equal(other ref.Val) ref.Val { return materialize(o.raw).Equal(other) }
func (o *jsonObject) Type() ref.Type              { return types.MapType }
func (o *jsonObject) Value() any                  { return materialize(o.raw).Value() }

// jsonArray is a JSON array as a CEL list(dyn).
type jsonArray struct{ raw []byte }

func (a *jsonArray) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.NewErr("%v", err)
	}
	it := a.iter()
	for n := 0; it.more(); n++ {
		v := it.next()
		if n == i {
			return jsonValue(v)
		}
	}
	return types.NewErr("index out of bounds: %d", i)
}

func (a *jsonArray) Contains(v ref.Val) ref.Val {
	for it := a.iter(); it.more(); {
		if jsonValue(it.next()).Equal(v) == types.True {
			return types.True
		}
	}
	return types.False
}

func (a *jsonArray) Size() ref.Val {
	n := 0
	for it := a.iter(); it.more(); it.next() {
		n++
	}
	return types.Int(n)
}

func (a *jsonArray) Iterator() traits.Iterator {
	it := a.iter()
	return &it
}

func (a *jsonArray) Add(other ref.Val) ref.Val {
	if adder, ok := materialize(a.raw).(traits.Adder); ok {
		return adder.Add(other)
	}
	return types.MaybeNoSuchOverloadErr(other)
}

func (a *jsonArray) ConvertToNative(t reflect.Type) (any, error) {
	return materialize(a.raw).ConvertToNative(t)
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

func (a *jsonArray) Equal(other ref.Val) ref.Val { return materialize(a.raw).Equal(other) }
func (a *jsonArray) Type() ref.Type              { return types.ListType }
func (a *jsonArray) Value() any                  { return materialize(a.raw).Value() }

func (a *jsonArray) iter() arrayIterator {
	return arrayIterator{raw: a.raw, pos: skipWS(a.raw, 1)}
}

// arrayIterator reads the elements of a valid JSON array one by one.
type arrayIterator struct {
	iteratorVal
	raw []byte
	pos int
}

func (it *arrayIterator) more() bool { return it.raw[it.pos] != ']' }

func (it *arrayIterator) next() []byte {
	end, _ := scanValue(it.raw, it.pos, 0)
	v := it.raw[it.pos:end]
	if it.pos = skipWS(it.raw, end); it.raw[it.pos] == ',' {
		it.pos = skipWS(it.raw, it.pos+1)
	}
	return v
}

func (it *arrayIterator) HasNext() ref.Val { return types.Bool(it.more()) }
func (it *arrayIterator) Next() ref.Val {
	if !it.more() {
		return nil
	}
	return jsonValue(it.next())
}

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
