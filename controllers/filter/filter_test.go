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
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The examples of docs/user-guide.md.
const (
	issuesOpened   = `event == "issues" && body.action == "opened"`
	pushToMain     = `event == "push" && body.ref == "refs/heads/main"`
	criticalFiring = `body.status == "firing" && body.alerts.exists(a, a.labels.severity == "critical")`
)

func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, expr, want string
	}{
		{"syntax", `event ==`, "Syntax error"},
		{"not bool", `event`, "not bool"},
		{"unknown variable", `request.method == "POST"`, "undeclared reference"},
		{"too long", `event == "` + strings.Repeat("x", MaxLength) + `"`, "more than 4096"},
		{"comprehension over rawBody", `body.items.exists(a, rawBody.contains("x"))`, "more than the limit"},
		{"nested comprehension over body", `body.items.exists(a, body.items.exists(b, a == b))`, "more than the limit"},
		{"comprehension over headers values", `headers.exists(k, rawBody.contains(headers[k]))`, "more than the limit"},
		// cel-go builds a map of constants when it plans the program, and
		// panics on a bytes key.
		{"a map literal with a bytes key", `{dyn(b"a"): 1}.size() > 0`, "building the program"},
		{"a bytes key compared with the body", `body.o == {dyn(b"x"): 1}`, "building the program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.expr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile(%q) = %v, want an error with %q", tc.expr, err, tc.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	github := func(event, body string) Call {
		return Call{Header: http.Header{"X-Github-Event": {event}, "Content-Type": {"application/json"}}, Event: event, Body: []byte(body)}
	}
	for _, tc := range []struct {
		name    string
		expr    string
		call    Call
		want    bool
		wantErr bool
	}{
		{"issue opened", issuesOpened, github("issues", `{"action":"opened","issue":{"number":1}}`), true, false},
		{"issue closed", issuesOpened, github("issues", `{"action":"closed"}`), false, false},
		{"push, not an issue: body not read", issuesOpened, github("push", `not json`), false, false},
		{"push to main", pushToMain, github("push", `{"ref":"refs/heads/main"}`), true, false},
		{"push to a branch", pushToMain, github("push", `{"ref":"refs/heads/feature"}`), false, false},
		{"critical firing", criticalFiring, Call{Body: []byte(`{"status":"firing","alerts":[{"labels":{"severity":"warning"}},{"labels":{"severity":"critical"}}]}`)}, true, false},
		{"warning firing", criticalFiring, Call{Body: []byte(`{"status":"firing","alerts":[{"labels":{"severity":"warning"}}]}`)}, false, false},
		{"resolved", criticalFiring, Call{Body: []byte(`{"status":"resolved","alerts":[{"labels":{"severity":"critical"}}]}`)}, false, false},
		{"missing key is an error", `body.action == "opened"`, Call{Body: []byte(`{}`)}, false, true},
		{"not JSON is null", `body == null`, Call{Body: []byte(`action=opened`)}, true, false},
		{"two JSON values are null", `body == null`, Call{Body: []byte(`{} {}`)}, true, false},
		{"empty body is null", `body == null`, Call{}, true, false},
		{"has() on a missing key", `has(body.action)`, Call{Body: []byte(`{"ref":"x"}`)}, false, false},
		{"ints", `body.number == 12 && body.number > 3.5 && body.id == 9007199254740993`, Call{Body: []byte(`{"number":12,"id":9007199254740993}`)}, true, false},
		{"doubles", `body.value == 0.25`, Call{Body: []byte(`{"value":2.5e-1}`)}, true, false},
		{"headers are lower-case", `headers["x-github-event"] == "push" && !("X-GitHub-Event" in headers)`, github("push", `{}`), true, false},
		{"rawBody", `rawBody.contains("opened")`, Call{Body: []byte(`action=opened`)}, true, false},
		{"rawBody of invalid UTF-8 is empty", `rawBody == ""`, Call{Body: []byte{0xff, 0xfe}}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile(tc.expr)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tc.expr, err)
			}
			got, err := p.Matches(t.Context(), tc.call)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("Matches = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestCompileErrorsAreBounded: an expression with an error at every turn
// gets an error naming the first, not a report of hundreds of KiB (the
// Ready condition's message holds 32 KiB), and deep nesting is refused
// quickly rather than compiled (cel-go's default allows 250 levels).
func TestCompileErrorsAreBounded(t *testing.T) {
	_, err := Compile(strings.Repeat("event == ) ", 372))
	if err == nil || len(err.Error()) > MaxIssueBytes+8 || strings.Count(err.Error(), "ERROR:") != 1 {
		t.Errorf("error of %d bytes with %d issues, want one issue within %d bytes", len(fmt.Sprint(err)), strings.Count(fmt.Sprint(err), "ERROR:"), MaxIssueBytes)
	}
	deep := strings.Repeat("[", 240) + strings.Repeat("]", 240) + " == []"
	if _, err := Compile(deep); err == nil || !strings.Contains(err.Error(), "recursion") {
		t.Errorf("nesting of 240: %v, want refused for its depth", err)
	}
	if _, err := Compile(strings.Repeat("(", 20) + "true" + strings.Repeat(")", 20)); err != nil {
		t.Errorf("nesting of 20: %v", err)
	}
}
