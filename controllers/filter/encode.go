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
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// A field's value as JSON, in one form whatever the body's: compact, the
// keys of an object in byte order, no HTML escaping, numbers in their
// shortest form (an int as such, a double as ECMAScript writes it, which
// is also what encoding/json and RFC 8785 write), strings with only the
// escapes JSON requires. CEL's own values convert as CEL's JSON mapping
// says: bytes base64, a timestamp RFC 3339, a duration in seconds ("1.5s").

// errTooLong stops an encoding that passed its limit.
var errTooLong = fmt.Errorf("the value takes more than %d bytes as JSON", MaxFieldBytes)

// EncodeJSON is v as JSON, in the form of the fields; an error when v has
// no JSON form (a type, a NaN) or it would exceed limit bytes.
func EncodeJSON(v ref.Val, limit int) ([]byte, error) {
	return appendJSON(nil, v, limit)
}

// appendJSON appends v to buf, and fails once buf is longer than limit.
func appendJSON(buf []byte, v ref.Val, limit int) ([]byte, error) {
	if len(buf) > limit {
		return buf, errTooLong
	}
	buf, err := appendValue(buf, v, limit)
	if err == nil && len(buf) > limit {
		err = errTooLong
	}
	return buf, err
}

func appendValue(buf []byte, v ref.Val, limit int) ([]byte, error) {
	switch v := v.(type) {
	case types.Null:
		return append(buf, "null"...), nil
	case types.Bool:
		return strconv.AppendBool(buf, bool(v)), nil
	case types.Int:
		return strconv.AppendInt(buf, int64(v), 10), nil
	case types.Uint:
		return strconv.AppendUint(buf, uint64(v), 10), nil
	case types.Double:
		return appendDouble(buf, float64(v))
	case types.String:
		return appendString(buf, string(v), limit)
	case types.Bytes:
		if len(buf)+base64.StdEncoding.EncodedLen(len(v))+2 > limit {
			return buf, errTooLong
		}
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, []byte(v))
		return append(buf, '"'), nil
	case types.Timestamp:
		return appendString(buf, v.UTC().Format(time.RFC3339Nano), limit)
	case types.Duration:
		return appendString(buf, durationString(v.Duration), limit)
	case *types.Err:
		return buf, v
	case traits.Mapper:
		return appendObject(buf, v, limit)
	case traits.Lister:
		return appendArray(buf, v, limit)
	}
	return buf, fmt.Errorf("a value of type %s has no JSON form", v.Type().TypeName())
}

func appendArray(buf []byte, l traits.Lister, limit int) ([]byte, error) {
	// Each element takes a byte and a comma at least: a list longer than
	// that is refused before it is read.
	if n, ok := l.Size().(types.Int); !ok || int(n) > (limit-len(buf))/2+1 {
		return buf, errTooLong
	}
	buf = append(buf, '[')
	it := l.Iterator()
	for first := true; it.HasNext() == types.True; first = false {
		if !first {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendJSON(buf, it.Next(), limit); err != nil {
			return buf, err
		}
	}
	return append(buf, ']'), nil
}

func appendObject(buf []byte, m traits.Mapper, limit int) ([]byte, error) {
	// Each member takes four bytes and a comma at least ("":0,): a map
	// with more members is refused before its keys are collected and
	// sorted.
	n, ok := m.Size().(types.Int)
	if !ok || int(n) > (limit-len(buf))/5+1 {
		return buf, errTooLong
	}
	keys := make([]string, 0, int(n))
	it := m.Iterator()
	for it.HasNext() == types.True {
		k, ok := it.Next().(types.String)
		if !ok {
			return buf, errors.New("a map with a key that is not a string has no JSON form")
		}
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendString(buf, k, limit); err != nil {
			return buf, err
		}
		buf = append(buf, ':')
		if buf, err = appendJSON(buf, m.Get(types.String(k)), limit); err != nil {
			return buf, err
		}
	}
	return append(buf, '}'), nil
}

// appendDouble writes f as ECMAScript's Number.prototype.toString does
// (encoding/json's float64 form): no exponent from 1e-6 up to 1e21.
func appendDouble(buf []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return buf, fmt.Errorf("%v has no JSON form", f)
	}
	if f == 0 {
		return append(buf, '0'), nil // -0 too, as ECMAScript writes it
	}
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		start := len(buf)
		buf = strconv.AppendFloat(buf, f, 'e', -1, 64)
		// e-07 → e-7, e+07 → e+7
		if n := len(buf); n-start >= 4 && buf[n-4] == 'e' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
		return buf, nil
	}
	return strconv.AppendFloat(buf, f, 'f', -1, 64), nil
}

// durationString is d in seconds as CEL's JSON mapping writes a duration:
// "90.5s", whole nanoseconds without rounding.
func durationString(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	secs, nanos := int64(d/time.Second), int64(d%time.Second)
	if nanos == 0 {
		return sign + strconv.FormatInt(secs, 10) + "s"
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", nanos), "0")
	return sign + strconv.FormatInt(secs, 10) + "." + frac + "s"
}

// appendString writes s as a JSON string: '"' and '\' escaped, control
// characters as \b \t \n \f \r or \u00xx, bytes that are not UTF-8 as
// U+FFFD, everything else as it is. It stops once buf is longer than
// limit: a string of 1 MiB of control characters would be 6 MiB.
func appendString(buf []byte, s string, limit int) ([]byte, error) {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		if len(buf) > limit {
			return buf, errTooLong
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				buf = append(buf, "\ufffd"...)
			} else {
				buf = append(buf, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c >= 0x20:
			buf = append(buf, c)
		default:
			if j := strings.IndexByte("\b\t\n\f\r", c); j >= 0 {
				buf = append(buf, '\\', "btnfr"[j])
			} else {
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
		}
		i++
	}
	return append(buf, '"'), nil
}
