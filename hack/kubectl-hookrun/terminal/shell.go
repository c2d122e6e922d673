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
	"fmt"
	"strings"
	"unicode/utf8"
)

// ShellQuote quotes s for a POSIX shell: in single quotes, except the
// runes printable escapes (control characters, bidirectional controls...),
// which are written as "$(printf '\ooo')" with their bytes in octal: the
// command still passes s byte for byte, and no such rune reaches the
// terminal.
func ShellQuote(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		n := 0
		for n < len(s) && !unsafeAt(s, n) {
			_, size := utf8.DecodeRuneInString(s[n:])
			n += size
		}
		if n > 0 {
			b.WriteString("'" + strings.ReplaceAll(s[:n], "'", `'\''`) + "'")
		}
		s = s[n:]
		n = 0
		for n < len(s) && unsafeAt(s, n) {
			_, size := utf8.DecodeRuneInString(s[n:])
			n += size
		}
		if n > 0 {
			b.WriteString(`"$(printf '`)
			for _, c := range []byte(s[:n]) {
				fmt.Fprintf(&b, `\%03o`, c)
			}
			b.WriteString(`')"`)
		}
		s = s[n:]
	}
	if b.Len() == 0 {
		return "''"
	}
	return b.String()
}

// unsafeAt tells whether printable escapes the rune at s[i].
func unsafeAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return Printable(s[i:i+size]) != s[i:i+size] || r == utf8.RuneError
}
