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
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escaped is s with every rune that is not printable text written as a Go
// escape (\u001b, \u202e, \U000e0041); an invalid byte becomes \ufffd.
// Printable text is unicode.IsPrint's, as strconv.Quote's: letters, marks,
// numbers, punctuation, symbols and the ASCII space, in any script. So the
// C0 and C1 controls (ESC, BEL, CSI...), DEL, the bidirectional controls
// that reorder what a reader sees, zero-width characters and line
// separators are escaped, and ordinary UTF-8 text is left readable. keep
// names runes left as they are.
func Escaped(s string, keep func(rune) bool) string {
	unsafe := func(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) && (keep == nil || !keep(r)) }
	if !strings.ContainsFunc(s, unsafe) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unsafe(r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, "\\U%08x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// Printable is multi-line text (a run's message or output, an answer, an
// error) escaped for a terminal: newlines and tabs stay.
func Printable(s string) string {
	return Escaped(s, func(r rune) bool { return r == '\n' || r == '\t' })
}

// PrintableLine is a value printed on one line or in a table cell (a name,
// an owner, a URL, a reason) escaped for a terminal: newlines and tabs are
// escaped too, so a value cannot fake lines or columns.
func PrintableLine(s string) string {
	return Escaped(s, nil)
}

// Writer writes what passes through it as printable: the plugin's
// last line of defence for its standard output and error. A UTF-8 sequence
// cut between two writes is held until it is whole (or Flush).
type Writer struct {
	w       io.Writer
	pending []byte
}

// NewWriter is a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (t *Writer) Write(p []byte) (int, error) {
	buf := append(t.pending, p...)
	whole := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				whole = i
			}
			break
		}
	}
	t.pending = append([]byte(nil), buf[whole:]...)
	if _, err := io.WriteString(t.w, Printable(string(buf[:whole]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back.
func (t *Writer) Flush() error {
	rest := t.pending
	t.pending = nil
	_, err := io.WriteString(t.w, Printable(string(rest)))
	return err
}
