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

package a2a

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTextBytes bounds what Sanitize returns, truncation mark included.
const MaxTextBytes = 256

// TruncatedMark ends a text Sanitize cut short.
const TruncatedMark = "…[truncated]"

// Sanitize makes text an agent chose (an HTTP answer, a JSON-RPC error
// message, a task's status message) fit for one line of a status message:
// at most MaxTextBytes bytes of valid UTF-8 on a single line. Invalid bytes
// become U+FFFD; control and format characters (newlines, tabs, escape
// sequences, bidirectional overrides, zero-width characters) and runs of
// white space become one space; leading and trailing space goes; a text
// that was cut ends in TruncatedMark. Sanitize of its own result changes
// nothing.
func Sanitize(s string) string {
	var b strings.Builder
	b.Grow(min(len(s), MaxTextBytes+utf8.UTFMax))
	pendingSpace := false
	for _, r := range s { // an invalid byte comes as utf8.RuneError, U+FFFD
		if blanked(r) {
			pendingSpace = b.Len() > 0
			continue
		}
		if b.Len() > MaxTextBytes {
			break // more text follows what is already too long
		}
		if pendingSpace {
			b.WriteByte(' ')
			pendingSpace = false
		}
		b.WriteRune(r)
	}
	return truncate(b.String(), MaxTextBytes)
}

// blanked tells whether Sanitize turns r into a space: white space,
// control and format characters, line and paragraph separators.
func blanked(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// plain tells whether s holds only characters Sanitize passes through:
// valid UTF-8 (and no U+FFFD, which may stand for a byte that was not) and
// nothing Sanitize blanks, white space included. Its length is not looked
// at.
func plain(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || blanked(r) {
			return false
		}
	}
	return true
}

// truncate is s when it has at most limit bytes, else its start cut at a
// character boundary, without trailing space, and TruncatedMark: limit
// bytes at most in all.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	keep := limit - len(TruncatedMark)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return strings.TrimRight(s[:keep], " ") + TruncatedMark
}

// maxClipBytes bounds what clip returns.
const maxClipBytes = 100

// clip is Sanitize(s) cut to at most maxClipBytes: one piece of text an
// agent chose among others on one line (a URL of its card).
func clip(s string) string { return truncate(Sanitize(s), maxClipBytes) }
