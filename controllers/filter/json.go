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
	"io"
	"strconv"
)

// ParseJSON returns body as the value body has in an expression: the JSON
// value (objects as maps, arrays as lists, strings, bools), or nil (null)
// when body is not one JSON value. A number is an int when it is written
// without a fraction or exponent and fits in 64 bits, else a double (CEL
// compares ints and doubles with each other: body.n == 1 and body.n > 0.5
// both work). Its size is bounded by the body's (at most 1 MiB).
func ParseJSON(body []byte) any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil // more than one value, or trailing garbage
	}
	return numbers(v)
}

// numbers replaces every json.Number in v by an int64 or a float64.
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(t), 64) // valid JSON: out of range gives ±Inf
		return f
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
