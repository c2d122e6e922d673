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

package terminal

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// PrintData prints v as JSON or YAML. Objects are printed without their
// managedFields, as kubectl does.
func PrintData(out io.Writer, format string, v any) error {
	hideManagedFields(v)
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		y, err := yaml.JSONToYAML(b)
		if err == nil && Printable(string(y)) == string(y) {
			_, err = out.Write(y)
			return err
		}
		// YAML's plain scalars cannot escape, and its emitter writes some
		// of these runes as they are (or fails on C1 controls): the same
		// data in JSON's form, which YAML reads, with them escaped.
		_, err = fmt.Fprintf(out, "%s\n", escapedJSON(b, true))
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", escapedJSON(b, false))
	return err
}

// escapedJSON is the JSON text b with every rune that is not printable
// text (escaped's) written as a \u escape, so it reaches a terminal inert
// and still decodes to the same value (encoding/json escapes the C0
// controls itself, not C1 or bidirectional controls). Outside strings JSON
// text holds only ASCII punctuation, spaces and newlines, which stay. A rune
// beyond U+FFFF becomes a UTF-16 surrogate pair, or for YAML \U........
func escapedJSON(b []byte, forYAML bool) []byte {
	s := string(b)
	keep := func(r rune) bool { return r == '\n' }
	if Escaped(s, keep) == s {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		switch {
		case r != utf8.RuneError && (unicode.IsPrint(r) || keep(r)):
			out.WriteRune(r)
		case r > 0xffff && forYAML:
			fmt.Fprintf(&out, "\\U%08x", r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&out, "\\u%04x", r)
		}
	}
	return []byte(out.String())
}

func hideManagedFields(v any) {
	if list, ok := v.(client.ObjectList); ok {
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			hideManagedFields(o)
			return nil
		})
	}
	if o, ok := v.(client.Object); ok {
		o.SetManagedFields(nil)
	}
}
