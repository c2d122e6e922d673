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
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// FuzzJSONBody: the body an expression reads, field by field from the
// bytes, is what encoding/json decodes (the oracle), and a body is JSON
// exactly when encoding/json says so (below the nesting bound).
func FuzzJSONBody(f *testing.F) {
	for _, seed := range []string{
		`{"action":"opened","n":12,"x":0.5,"ok":true,"none":null,"l":[1,"two",{"three":3},[4]]}`,
		`{"a":1,"a":2}`, `{"esc\u0061ped":"\u00e9\n"}`, `[1e400,-0,18446744073709551616]`, "\"\xff\xfe\"", `{}`, `[]`, `7`,
		`{"a":{"b":{"c":[[],{}]}}}`, `{"a" : [ 1 , 2 ] }`, `nul`, `{"a":1,}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		valid := validJSON(body)
		if bytes.Count(body, []byte("["))+bytes.Count(body, []byte("{")) <= maxJSONDepth && valid != json.Valid(body) {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", body, valid, !valid)
		}
		if !valid {
			if ParseJSON(body) != types.NullValue {
				t.Fatalf("%q is not JSON but is not null", body)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got := lazyNative(t, ParseJSON(body))
		if want = numbers(want); !reflect.DeepEqual(got, want) {
			t.Fatalf("read from %q: %#v, encoding/json decodes %#v", body, got, want)
		}
	})
}

// lazyNative reads v as an expression would: objects by their keys and
// Get, arrays by Size and Get.
func lazyNative(t *testing.T, v ref.Val) any {
	switch v := v.(type) {
	case *jsonObject:
		out := map[string]any{}
		it := v.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			name, ok := k.Value().(string)
			if !ok {
				t.Fatalf("key %v is not a string", k)
			}
			out[name] = lazyNative(t, v.Get(k))
		}
		if v.Size() != types.Int(len(out)) {
			t.Fatalf("size %v, %d keys", v.Size(), len(out))
		}
		return out
	case *jsonArray:
		n, ok := v.Size().Value().(int64)
		if !ok {
			t.Fatalf("size %v", v.Size())
		}
		out := make([]any, n)
		for i := range int(n) {
			out[i] = lazyNative(t, v.Get(types.Int(i)))
		}
		return out
	case traits.Mapper, traits.Lister:
		t.Fatalf("unexpected container %T", v)
	}
	if v == types.NullValue {
		return nil
	}
	return v.Value()
}
