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

package terminaltest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hostile values a user or a sender can put where the plugin prints them.
const (
	OSC52       = "\x1b]52;c;cm0gLXJmIH4=\x07" // sets the clipboard
	CSIClear    = "\x1b[2J\x1b[H"              // clears the screen
	C1CSI       = "\u009b31m"                  // CSI as a C1 control
	RTLOverride = "\u202e"                     // right-to-left override
	ZeroWidth   = "\u200b"
)

// RawControl returns the first rune in s that a terminal could act on
// (anything but printable text, newline and tab), or "".
func RawControl(s string) string {
	for i, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strings.TrimSpace(s[max(0, i-20):min(len(s), i+20)])
		}
	}
	return ""
}
