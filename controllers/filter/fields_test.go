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
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// githubFields are four fields a triage agent needs of each GitHub
// delivery in testdata/github (octokit/webhooks' examples).
var githubFields = map[string]map[string]string{
	"issues-opened.json": {
		"title":  `body.issue.title`,
		"number": `body.issue.number`,
		"labels": `body.issue.labels.map(l, l.name)`,
		"text":   `body.issue.body`,
	},
	"pull_request-opened.json": {
		"title":  `body.pull_request.title`,
		"number": `body.number`,
		"branch": `body.pull_request.head.ref`,
		"text":   `body.pull_request.body`,
	},
	"push.json": {
		"ref":        `body.ref`,
		"repository": `body.repository.full_name`,
		"commits":    `body.commits.map(c, c.message)`,
		"pusher":     `body.pusher.name`,
	},
}

func githubDelivery(t testing.TB, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "github", name))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestCompileFieldsRefuses(t *testing.T) {
	many := map[string]string{}
	for i := range MaxFields + 1 {
		many[fmt.Sprintf("f%d", i)] = "event"
	}
	// One scan of rawBody by a pattern of this size costs about 11.5
	// million units: one fits the limit, two do not.
	scan := `rawBody.matches("[a-z]+x[0-9]+y[a-z]+z")`
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"too many", many, "33 fields, more than 32"},
		{"name with a dash", map[string]string{"pr-title": "event"}, `field name "pr-title" is not an identifier`},
		{"name starting with a digit", map[string]string{"1st": "event"}, `field name "1st"`},
		{"name of 64 characters", map[string]string{strings.Repeat("a", 64): "event"}, "at most 63 characters"},
		{"syntax", map[string]string{"ok": "event", "title": "body.issue."}, "field title: "},
		{"unknown variable", map[string]string{"method": "request.method"}, "field method: ERROR"},
		{"pattern not a literal", map[string]string{"m": `rawBody.matches(event)`}, "field m: "},
		{"too long", map[string]string{"long": `"` + strings.Repeat("x", MaxFieldLength) + `"`}, "more than 1024"},
		{"too costly alone", map[string]string{"nested": `body.items.map(a, body.items.filter(b, a == b))`}, "more than the limit"},
		{"too costly together", map[string]string{"a": scan, "b": scan}, "the fields up to b may cost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileFields(tc.fields)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CompileFields(%v) = %v, want an error with %q", tc.fields, err, tc.want)
			}
		})
	}
	if _, err := CompileFields(map[string]string{"a": scan}); err != nil {
		t.Fatalf("one scan is within the limit: %v", err)
	}
	if _, err := CompileFields(map[string]string{strings.Repeat("_", 63): "1", "Title_2": "body.x"}); err != nil {
		t.Fatalf("63-character names and any type: %v", err)
	}
}

// TestFieldsOfGitHubDeliveries: four fields of each real delivery, as
// encoding/json writes the same values decoded from the body (keys sorted,
// no HTML escaping), and as RFC 8785 canonicalizes them
// (go-json-experiment's jsontext: for these ASCII keys, byte order and
// UTF-16 order agree).
func TestFieldsOfGitHubDeliveries(t *testing.T) {
	for file, spec := range githubFields {
		t.Run(file, func(t *testing.T) {
			body := githubDelivery(t, file)
			f, err := CompileFields(spec)
			if err != nil {
				t.Fatal(err)
			}
			got := f.Eval(context.Background(), Call{Body: body})
			if len(got.Errors) != 0 {
				t.Fatalf("errors: %v", got.Errors)
			}
			var decoded map[string]any
			if err := json.Unmarshal(body, &decoded); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{}
			for name := range spec {
				want[name] = oracleField(t, decoded, name, file)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(want); err != nil {
				t.Fatal(err)
			}
			if w := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got.Object, w) {
				t.Fatalf("fields\n got %s\nwant %s", got.Object, w)
			}
			canonical := jsontext.Value(bytes.Clone(got.Object))
			if err := canonical.Canonicalize(); err != nil || !bytes.Equal(canonical, got.Object) {
				t.Fatalf("not canonical (%v):\n got %s\nJCS %s", err, got.Object, canonical)
			}
			if len(got.Object)*20 > len(body) {
				t.Errorf("the fields are %d bytes of the %d of the body, more than 5%%", len(got.Object), len(body))
			}
		})
	}
}

// oracleField reads the field name of githubFields[file] from the body as
// encoding/json decoded it.
func oracleField(t *testing.T, d map[string]any, name, file string) any {
	t.Helper()
	obj := func(v any, keys ...string) any {
		for _, k := range keys {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: %v is not an object", file, v)
			}
			v = m[k]
		}
		return v
	}
	names := func(list any, key string) []any {
		elems, ok := list.([]any)
		if !ok {
			t.Fatalf("%s: %v is not a list", file, list)
		}
		out := []any{}
		for _, e := range elems {
			out = append(out, obj(e, key))
		}
		return out
	}
	switch file + "/" + name {
	case "issues-opened.json/title":
		return obj(d, "issue", "title")
	case "issues-opened.json/number":
		return obj(d, "issue", "number")
	case "issues-opened.json/labels":
		return names(obj(d, "issue", "labels"), "name")
	case "issues-opened.json/text":
		return obj(d, "issue", "body")
	case "pull_request-opened.json/title":
		return obj(d, "pull_request", "title")
	case "pull_request-opened.json/number":
		return obj(d, "number")
	case "pull_request-opened.json/branch":
		return obj(d, "pull_request", "head", "ref")
	case "pull_request-opened.json/text":
		return obj(d, "pull_request", "body")
	case "push.json/ref":
		return obj(d, "ref")
	case "push.json/repository":
		return obj(d, "repository", "full_name")
	case "push.json/commits":
		return names(obj(d, "commits"), "message")
	case "push.json/pusher":
		return obj(d, "pusher", "name")
	}
	t.Fatalf("no oracle for %s/%s", file, name)
	return nil
}

func TestFieldsThatFailAreNull(t *testing.T) {
	f, err := CompileFields(map[string]string{
		"action":  `body.action`,
		"missing": `body.nope`,
		"whole":   `rawBody`, // 13 KiB: more than a field may take
		"nan":     `double("NaN")`,
		"kind":    `type(body)`,
		"map":     `{1: "one"}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := f.Eval(context.Background(), Call{Body: githubDelivery(t, "issues-opened.json")})
	want := `{"action":"opened","kind":null,"map":null,"missing":null,"nan":null,"whole":null}`
	if string(got.Object) != want {
		t.Fatalf("got %s, want %s", got.Object, want)
	}
	if wantErrs := []string{"kind", "map", "missing", "nan", "whole"}; !slices.Equal(got.Errors, wantErrs) {
		t.Fatalf("errors %v, want %v", got.Errors, wantErrs)
	}
}

// TestFieldsShareOneEvaluation: the fields of a call together read at most
// 4 times the body, as one filter may: once a field spends the budget, it
// and every field after it are null.
func TestFieldsShareOneEvaluation(t *testing.T) {
	body := []byte("[" + strings.Repeat("0,", 200_000) + "0]")
	f, err := CompileFields(map[string]string{
		"a_size":  `body.size()`,
		"b_all":   `body.map(x, x + 1)`,
		"c_after": `1`,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := f.Eval(context.Background(), Call{Body: body})
	if want := `{"a_size":200001,"b_all":null,"c_after":null}`; string(got.Object) != want {
		t.Fatalf("got %s, want %s", got.Object, want)
	}
}

func TestEncodeJSON(t *testing.T) {
	for _, tc := range []struct {
		expr, want string
	}{
		{`1.0`, `1`},
		{`-0.0`, `0`},
		{`0.1`, `0.1`},
		{`1e21`, `1e+21`},
		{`1e20`, `100000000000000000000`},
		{`0.0000001`, `1e-7`},
		{`123456789u`, `123456789`},
		{`-42`, `-42`},
		{`"<a & b>"`, `"<a & b>"`},
		{`"tab\tline\nquote\"back\\bell\x01\u2028"`, `"tab\tline\nquote\"back\\bell\u0001` + "\u2028" + `"`},
		{`b"\xff\x00hi"`, `"/wBoaQ=="`},
		{`{"b": 1, "a": [true, null], "B": {"é": 2.5, "e": []}}`, `{"B":{"e":[],"é":2.5},"a":[true,null],"b":1}`},
		{`timestamp("2026-11-28T10:00:00.5+01:00")`, `"2026-11-28T09:00:00.5Z"`},
		{`duration("1m30.5s")`, `"90.5s"`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			f, err := CompileFields(map[string]string{"v": tc.expr})
			if err != nil {
				t.Fatal(err)
			}
			got := f.Eval(context.Background(), Call{})
			if want := `{"v":` + tc.want + `}`; string(got.Object) != want {
				t.Fatalf("got %s, want %s", got.Object, want)
			}
		})
	}
	// Body bytes that are not UTF-8 inside a JSON string come out as U+FFFD.
	f, err := CompileFields(map[string]string{"s": `body.s`})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Eval(context.Background(), Call{Body: []byte("{\"s\":\"a\xffb\"}")}); string(got.Object) != "{\"s\":\"a\ufffdb\"}" {
		t.Fatalf("got %s", got.Object)
	}
}

// TestFieldsStopAtTheirLimit: a value far larger than a field may take is
// refused as it is written (a string) or before it is read (a map or list
// of more members than 4 KiB can hold), not written whole first.
func TestFieldsStopAtTheirLimit(t *testing.T) {
	f, err := CompileFields(map[string]string{"raw": `rawBody`})
	if err != nil {
		t.Fatal(err)
	}
	// 1 MiB of control characters: 6 MiB as a JSON string.
	body := bytes.Repeat([]byte{1}, MaxInputBytes)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := f.Eval(context.Background(), Call{Body: body})
	runtime.ReadMemStats(&after)
	if string(got.Object) != `{"raw":null}` {
		t.Fatalf("got %.100s", got.Object)
	}
	// rawBody is one copy of the body; writing it whole would be 6 more.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*uint64(len(body)) {
		t.Errorf("the evaluation allocated %d bytes for a %d-byte body", alloc, len(body))
	}

	var keys strings.Builder
	// 2,000 members of 70 bytes: 820 at most fit 4 KiB.
	keys.WriteString(`{"k0":0`)
	for i := 1; i < 2000; i++ {
		fmt.Fprintf(&keys, `,"k%d":"%s"`, i, strings.Repeat("v", 60))
	}
	keys.WriteString("}")
	f, err = CompileFields(map[string]string{"all": `body`, "list": `body.map(k, k)`, "few": `body.k1`})
	if err != nil {
		t.Fatal(err)
	}
	got = f.Eval(context.Background(), Call{Body: []byte(keys.String())})
	if want := `{"all":null,"few":"` + strings.Repeat("v", 60) + `","list":null}`; string(got.Object) != want {
		t.Fatalf("got %s, want %s", got.Object, want)
	}
}
