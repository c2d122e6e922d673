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
	"strconv"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
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
	b := newBudget(0, nil)
	b.left = math.MaxInt
	return parseJSON(body, b)
}

func parseJSON(body []byte, b *allocBudget) ref.Val {
	if !validJSON(body) {
		return types.NullValue
	}
	i := skipWS(body, 0)
	end, _ := scanValue(body, i, 0)
	return jsonValue(body[i:end], b.root)
}

// jsonValue is the CEL value of raw, one valid JSON value, whose reads
// are charged to s.
func jsonValue(raw []byte, s *scope) ref.Val {
	switch raw[0] {
	case '{':
		return &jsonObject{raw: raw, s: s}
	case '[':
		return &jsonArray{raw: raw, s: s, n: -1}
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
// expression, charged to s; errTooLarge when it does not fit.
func element(raw []byte, s *scope) ref.Val {
	if !s.take(valueBytes + stringBytes(raw)) {
		return errTooLarge
	}
	return jsonValue(raw, s)
}

// heldBy is what the value of raw holds once it is made (jsonValue): an
// object's or array's struct, a string's header and bytes, a number's box.
func heldBy(raw []byte) int {
	switch raw[0] {
	case '{':
		return 48
	case '[':
		return 96
	case '"':
		return 16 + len(raw)
	case 't', 'f', 'n':
		return 0
	}
	return 8
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
// (concatenation, conversion), charged for the rest of the evaluation: the
// Go values may outlive the step that made them (a concatenation kept by
// map()).
func materialize(raw []byte, b *allocBudget) ref.Val {
	if !b.root.take(decodedBytes(raw)) {
		return errTooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v)
	return types.DefaultTypeAdapter.NativeToValue(numbers(v))
}

// What decoding a value whole allocates, by what it holds (decodedBytes):
// encoding/json's copy of the input, a map per object (a group of 8 slots
// at least), a slice per array, a slot per member and per element (in a
// map or slice that grows by doubling), a string's header and bytes, a
// number's text and then its box (measured: TestDecodedBytes).
const (
	decodedObject  = 384
	decodedArray   = 64
	decodedMember  = 128
	decodedElement = 64
	decodedString  = 32
	decodedNumber  = 64
)

// decodedBytes is what materialize allocates decoding the valid JSON
// value raw.
func decodedBytes(raw []byte) int {
	n := len(raw)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '"':
			end, _ := scanString(raw, i)
			n += decodedString + end - i
			i = end
			continue
		case c == '-' || isDigit(c):
			end, _ := scanNumber(raw, i)
			n += decodedNumber + end - i
			i = end
			continue
		case c == '{':
			n += decodedObject
		case c == '[':
			n += decodedArray
		case c == ':':
			n += decodedMember
		case c == ',':
			n += decodedElement
		}
		i++
	}
	return n
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
