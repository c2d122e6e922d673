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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	long := strings.Repeat("a", MaxTextBytes+1)
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"only space", " \n\t\r\n ", ""},
		{"short line kept", "task failed: quota", "task failed: quota"},
		{"newlines and runs of space become one space", "line one\r\n\n  line two\tend\n", "line one line two end"},
		{"terminal escapes lose their ESC", "\x1b[31mred\x1b[0m", "[31mred [0m"},
		{"C1 controls and DEL", "a\u0085b\x7fc", "a b c"},
		{"bidirectional override and zero width", "evil\u202egnp.exe\u200b!", "evil gnp.exe !"},
		{"line and paragraph separators", "a\u2028b\u2029c", "a b c"},
		{"invalid UTF-8 becomes U+FFFD", "ok\xffok", "ok\ufffdok"},
		{"non-ASCII kept", "Fehler: Größe überschritten", "Fehler: Größe überschritten"},
		{"exactly the limit is not cut", long[:MaxTextBytes], long[:MaxTextBytes]},
		{"one byte over is cut and marked", long, long[:MaxTextBytes-len(TruncatedMark)] + TruncatedMark},
		{"space before the cut goes", strings.Repeat("a", MaxTextBytes-len(TruncatedMark)-1) + " " + long, strings.Repeat("a", MaxTextBytes-len(TruncatedMark)-1) + TruncatedMark},
		{"a cut never splits a character", strings.Repeat("é", MaxTextBytes), strings.Repeat("é", (MaxTextBytes-len(TruncatedMark))/2) + TruncatedMark},
		{"100 KiB of lines", strings.Repeat("secret line\n", 100<<10/12), strings.TrimRight(strings.Repeat("secret line ", 30)[:MaxTextBytes-len(TruncatedMark)], " ") + TruncatedMark},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Sanitize(tc.in)
			if got != tc.want {
				t.Errorf("Sanitize(%.40q…) =\n%q, want\n%q", tc.in, got, tc.want)
			}
			if len(got) > MaxTextBytes || !utf8.ValidString(got) || strings.ContainsAny(got, "\r\n\t\x00\x1b") {
				t.Errorf("Sanitize(%.40q…) = %q: longer than %d bytes, invalid UTF-8 or a control character", tc.in, got, MaxTextBytes)
			}
			if again := Sanitize(got); again != got {
				t.Errorf("Sanitize is not idempotent: %q then %q", got, again)
			}
		})
	}
}

// An agent's words in an HTTP body or a JSON-RPC error reach the error's
// text (and from there a run's status.message) only as one short line.
func TestAgentTextInErrorsIsOneShortLine(t *testing.T) {
	body := strings.Repeat("<p>internal detail\r\n", 100<<10/20) // 100 KiB
	cases := map[string]http.HandlerFunc{
		"HTTP body": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(body))
		},
		"JSON-RPC error message": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":%q}}`, body)
		},
		"number too long for the error code": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":1%s}}`, strings.Repeat("0", 100<<10))
		},
		"redirect location": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", "http://elsewhere.example/"+strings.Repeat("x", 4000))
			w.WriteHeader(http.StatusFound)
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, err := (&Client{URL: srv.URL, Version: V03}).GetTask(t.Context(), "t")
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if len(msg) > 320 || strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) || !strings.HasSuffix(msg, TruncatedMark) {
				t.Errorf("error text of %d bytes is not one short marked line: %.400q", len(msg), msg)
			}
		})
	}
}
