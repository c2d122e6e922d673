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
	"reflect"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// jsonObject is a JSON object as a CEL map(string, dyn). Its members are
// read from the bytes at the first look and kept (nested objects and
// arrays stay unread until looked at), and its Go value is decoded at most
// once: every operation after the first is as cheap as CEL's cost model
// assumes (a select, size() and an iteration step one unit), which is what
// makes the compile-time cost estimate bound an evaluation. A value is used
// by one evaluation, on one goroutine.
type jsonObject struct {
	raw []byte
	// s is the scope its reads are charged to: the step that made it.
	s *scope
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
	if !o.s.take(objectBytes) {
		return false
	}
	vals := map[string]ref.Val{}
	fits := true
	members(o.raw, func(raw, value []byte) bool {
		if fits = o.s.take(memberBytes + len(raw) + heldBy(value)); !fits {
			return false
		}
		k := jsonString(raw)
		if _, seen := vals[k]; !seen {
			o.keys = append(o.keys, types.String(k))
		}
		vals[k] = jsonValue(value, o.s)
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
		o.decoded = materialize(o.raw, o.s.b)
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
		// Not kept: it lasts the step that reads it.
		return element(found, o.s.b.current), true
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
	return &sliceIterator{vals: o.keys, stepper: newStepper(o.s.b)}
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
