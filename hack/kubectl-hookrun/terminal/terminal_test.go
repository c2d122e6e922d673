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

package terminal_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal/terminaltest"
)

func TestEscaped(t *testing.T) {
	for _, c := range []struct{ in, text, line string }{
		{"plain, ünïcode, 日本語 and emoji 🚀", "plain, ünïcode, 日本語 and emoji 🚀", "plain, ünïcode, 日本語 and emoji 🚀"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab", `two\u000alines\u0009and a tab`},
		{terminaltest.OSC52, `\u001b]52;c;cm0gLXJmIH4=\u0007`, `\u001b]52;c;cm0gLXJmIH4=\u0007`},
		{terminaltest.CSIClear, `\u001b[2J\u001b[H`, `\u001b[2J\u001b[H`},
		{terminaltest.C1CSI, `\u009b31m`, `\u009b31m`},
		{"a\u0085b", `a\u0085b`, `a\u0085b`}, // NEL, a C1 line break
		{"del\x7f", `del\u007f`, `del\u007f`},
		{"cr\rlf", `cr\u000dlf`, `cr\u000dlf`},
		{"abc" + terminaltest.RTLOverride + "fed", `abc\u202efed`, `abc\u202efed`},
		{"iso\u2066x\u2069 lrm\u200e alm\u061c", `iso\u2066x\u2069 lrm\u200e alm\u061c`, `iso\u2066x\u2069 lrm\u200e alm\u061c`},
		{"zero" + terminaltest.ZeroWidth + "width\ufeff", `zero\u200bwidth\ufeff`, `zero\u200bwidth\ufeff`},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		{"tag \U000e0041\U000e0042", `tag \U000e0041\U000e0042`, `tag \U000e0041\U000e0042`},
		{"bad \xff byte", `bad \ufffd byte`, `bad \ufffd byte`},
	} {
		if got := terminal.Printable(c.in); got != c.text {
			t.Errorf("printable(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := terminal.PrintableLine(c.in); got != c.line {
			t.Errorf("printableLine(%q) = %q, want %q", c.in, got, c.line)
		}
	}
}

// The writer under the plugin's output escapes what a command did not, also
// when a rune arrives in two writes.
func TestTerminalWriter(t *testing.T) {
	var out bytes.Buffer
	w := terminal.NewWriter(&out)
	in := "ok ü " + terminaltest.OSC52 + " 🚀\n" + terminaltest.RTLOverride
	for i := range len(in) { // one byte at a time
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := `ok ü \u001b]52;c;cm0gLXJmIH4=\u0007 🚀` + "\n" + `\u202e`; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
	out.Reset()
	_, _ = w.Write([]byte("cut \xf0\x9f"))
	_ = w.Flush()
	if out.String() != `cut \ufffd\ufffd` {
		t.Errorf("a cut rune at the end came out as %q", out.String())
	}
}

// -o json and -o yaml stay data: every control is escaped, and decoding
// gives the value back.
func TestPrintDataEscapes(t *testing.T) {
	hostile := terminaltest.OSC52 + terminaltest.CSIClear + terminaltest.C1CSI + terminaltest.RTLOverride + terminaltest.ZeroWidth + "\u2028 \U000e0041 ünïcode\nline"
	run := &agentsv1alpha1.AgentRun{}
	run.Name = "r"
	run.Status.Message, run.Status.Output = hostile, "plain"
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		if err := terminal.PrintData(&out, format, run); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		if c := terminaltest.RawControl(out.String()); c != "" {
			t.Errorf("-o %s printed a control or bidi character raw: %q", format, c)
		}
		back := &agentsv1alpha1.AgentRun{}
		decode := func(b []byte, v any) error { return yaml.Unmarshal(b, v) }
		if format == "json" {
			decode = json.Unmarshal
		}
		if err := decode(out.Bytes(), back); err != nil {
			t.Fatalf("-o %s does not decode: %v\n%s", format, err, out.String())
		}
		if back.Status.Message != hostile {
			t.Errorf("-o %s: the message came back as %q", format, back.Status.Message)
		}
	}
	// Without such runes, YAML stays YAML.
	run.Status.Message = "plain ünïcode"
	var out bytes.Buffer
	if err := terminal.PrintData(&out, "yaml", run); err != nil || !strings.Contains(out.String(), "message: plain ünïcode\n") {
		t.Errorf("-o yaml of a plain run: %v\n%s", err, out.String())
	}
}

// The sample curl passes a hostile prefix or body byte for byte, and prints
// none of its controls.
func TestShellQuoteEscapesControls(t *testing.T) {
	sh, err := exec.LookPath("/bin/sh")
	if err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	for _, s := range []string{
		"X-Signature: " + terminaltest.OSC52 + "sha256=abc",
		terminaltest.CSIClear + "'it's'" + terminaltest.C1CSI,
		terminaltest.RTLOverride + terminaltest.ZeroWidth + "\r\n\x01\x7f",
		"bad \xff\xfe bytes \U000e0041",
	} {
		quoted := terminal.ShellQuote(s)
		if c := terminaltest.RawControl(quoted); c != "" {
			t.Errorf("shellQuote(%q) = %q holds %q raw", s, quoted, c)
		}
		out, err := exec.Command(sh, "-c", "printf %s "+quoted).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh -c 'printf %%s %s' printed %q (%v), want %q", quoted, out, err, s)
		}
	}
}

// TestShellQuote runs sh -c 'printf %s <quoted>': the shell must hand back
// the string byte for byte.
func TestShellQuote(t *testing.T) {
	sh, err := exec.LookPath("/bin/sh")
	if err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	inputs := []string{
		"",
		"plain",
		"'",
		"''",
		"'''",
		"it's",
		"'leading and trailing'",
		`back\slash \\ \' \" \n`,
		`"double" 'single' "mixed 'nested'"`,
		"$HOME ${PATH} $(id) `id` $1 $@ $$",
		"line one\nline two\n\n",
		"tab\there\r\ncarriage return",
		"héllo — ünïcode 日本語 🙂 ' é",
		"!bang !! ^history",
		"* ? [a-z] ~ ~root {a,b}",
		"; & | < > ( ) # comment",
		"-n",
		"%s %d %% \\0101",
		"Authorization: Bearer a'b\"c$d`e\\f",
		`{"text":"<@U0BOT> is checkout down?","it's":"fine"}`,
		strings.Repeat("'\\$\n", 300),
	}
	// And random strings of every byte but NUL (which no argument holds).
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		b := make([]byte, r.IntN(64))
		for i := range b {
			b[i] = byte(1 + r.IntN(255))
		}
		inputs = append(inputs, string(b))
	}
	for i, s := range inputs {
		quoted := terminal.ShellQuote(s)
		out, err := exec.Command(sh, "-c", "printf %s "+quoted).Output()
		if err != nil {
			t.Errorf("input %d %q: sh -c %q: %v", i, s, "printf %s "+quoted, err)
			continue
		}
		if string(out) != s {
			t.Errorf("input %d: sh -c %q printed %q, want %q", i, "printf %s "+quoted, out, s)
		}
	}
}
