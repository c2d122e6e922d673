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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
)

// What an evaluation holds: a step's element is given back when the step
// ends (section 12), so the verdict over a list of 10,000 small items is
// the verdict over ten.

// longLists are bodies of n items, the one that matters last, in the
// shapes the documented filters read.
var longLists = []struct {
	name, event, expr string
	body              func(n int) string
}{
	{"small items, the match last", "", `body.items.exists(i, i.kind == "match")`, func(n int) string {
		return list(`{"items":[`, n, func(i int) string {
			return fmt.Sprintf(`{"kind":%q,"n":%d}`, map[bool]string{true: "match", false: "item"}[i == n-1], i)
		}, `]}`)
	}},
	{"Alertmanager, the critical alert last", "", criticalFiring, func(n int) string {
		return list(`{"status":"firing","alerts":[`, n, func(i int) string {
			return fmt.Sprintf(`{"status":"firing","labels":{"alertname":"Disk%d","severity":%q}}`, i,
				map[bool]string{true: "critical", false: "warning"}[i == n-1])
		}, `]}`)
	}},
	{"a push, the deploy commit last", "push", `event == "push" && body.commits.exists(c, c.message.startsWith("[deploy]"))`, func(n int) string {
		return list(`{"ref":"refs/heads/main","commits":[`, n, func(i int) string {
			return fmt.Sprintf(`{"id":"%040x","message":"%sfix %d"}`, i, map[bool]string{true: "[deploy] ", false: ""}[i == n-1], i)
		}, `]}`)
	}},
	{"the labels of an issue kept by map()", "issues", `body.issue.labels.map(l, l.name).exists(n, n == "bug")`, func(n int) string {
		return list(`{"action":"opened","issue":{"labels":[`, n, func(i int) string {
			return fmt.Sprintf(`{"name":%q,"color":"ededed"}`, map[bool]string{true: "bug", false: fmt.Sprint("area-", i)}[i == n-1])
		}, `]}}`)
	}},
}

func list(prefix string, n int, item func(i int) string, suffix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	b.WriteString(suffix)
	return b.String()
}

// TestFiltersOverLongLists: each filter matches its body of 10, 200, 300
// and 10,000 items, as cel-go does on the body decoded by encoding/json
// (before, 300 items of {"kind":"item","n":N} were "more than 4 times the
// body": each element was charged for good).
func TestFiltersOverLongLists(t *testing.T) {
	stepsDecide(t)
	for _, c := range longLists {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.expr, err)
		}
		for _, n := range []int{10, 200, 300, 10_000} {
			body := []byte(c.body(n))
			call := Call{Header: http.Header{}, Event: c.event, Body: body}
			got, err := p.Matches(context.Background(), call)
			if want := oracle(t, c.expr, call); err != nil || got != want || !want {
				t.Errorf("%s, %d items (%d bytes): Matches = %v, %v; cel-go on the decoded body: %v", c.name, n, len(body), got, err, want)
			}
		}
	}
}

// TestDocumentedFiltersOnRealPayloads: the documented filters decide the
// largest of octokit/webhooks' payloads as cel-go does on them decoded.
func TestDocumentedFiltersOnRealPayloads(t *testing.T) {
	stepsDecide(t)
	files, err := filepath.Glob(filepath.Join("testdata", "github", "*.json"))
	if err != nil || len(files) < 5 {
		t.Fatalf("the payloads of testdata/github: %v, %v", files, err)
	}
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		event, _, _ := strings.Cut(filepath.Base(file), "-")
		event = strings.TrimSuffix(event, ".json")
		for _, expr := range []string{issuesOpened, pushToMain, `body.action == "labeled" && body.pull_request.labels.exists(l, l.name == "bug")`,
			`has(body.issue) && body.issue.labels.map(l, l.name).size() >= 0`} {
			p, err := Compile(expr)
			if err != nil {
				t.Fatalf("Compile(%q): %v", expr, err)
			}
			call := Call{Header: http.Header{}, Event: event, Body: body}
			got, err := p.Matches(context.Background(), call)
			want, wantErr := oracleEval(call, expr)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Errorf("%s on %s: Matches = %v, %v; cel-go on the decoded body: %v, %v", expr, file, got, err, want, wantErr)
			}
		}
	}
}

// stepsDecide takes the clock out of the way for the rest of the test: the
// verdicts are the steps' on any machine (under -race a step is ten times
// slower, and make test keeps both cores busy).
func stepsDecide(t *testing.T) {
	evalTimeout = time.Minute
	t.Cleanup(func() { evalTimeout = EvalTimeout })
}

// oracle is what cel-go makes of expr on call's body decoded whole by
// encoding/json; it must not fail.
func oracle(t *testing.T, expr string, call Call) bool {
	t.Helper()
	out, err := oracleEval(call, expr)
	if err != nil {
		t.Fatalf("cel-go on the decoded body: %v", err)
	}
	return out
}

func oracleEval(call Call, expr string) (bool, error) {
	e, err := cel.NewEnv(
		cel.Variable(VarHeaders, cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable(VarEvent, cel.StringType),
		cel.Variable(VarBody, cel.DynType),
		cel.Variable(VarRawBody, cel.StringType),
	)
	if err != nil {
		return false, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return false, iss.Err()
	}
	prg, err := e.Program(ast)
	if err != nil {
		return false, err
	}
	var body any
	if err := json.Unmarshal(call.Body, &body); err != nil {
		return false, err
	}
	out, _, err := prg.Eval(map[string]any{VarHeaders: map[string]string{}, VarEvent: call.Event, VarBody: body, VarRawBody: string(call.Body)})
	if err != nil {
		return false, err
	}
	return out.Value() == true, nil
}

// TestWhatAnExpressionBuildsIsCharged: lists and maps an expression builds
// are charged as it builds them; before, only reads of the body were, and
// nested map()s over literal lists kept every result until the clock
// stopped them (cel-go's map() appends to one list in place). They are
// stopped by the budget, holding no more than it (a call without a body:
// minBudget).
func TestWhatAnExpressionBuildsIsCharged(t *testing.T) {
	boundsTheShippedBuild(t)
	l := literalList(20)
	for _, expr := range []string{
		l + `.map(a, ` + l + `.map(b, ` + l + `.map(c, ` + l + `.map(d, 0)))).size() > 0`,
		l + `.map(a, ` + l + `.map(b, ` + l + `.map(c, [a, b, c, "x"]))).size() > 0`,
		l + `.map(a, ` + l + `.map(b, ` + l + `.map(c, {"k": [a, b], "v": c}))).size() > 0`,
		l + `.map(a, ` + l + `.map(b, ` + l + `.filter(c, c == 0))).size() > 0`,
		l + `.map(a, ` + l + `.map(b, ` + l + `.map(c, {c: c}))).size() > 0`,
	} {
		p, err := Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		var matched bool
		held := HeldBy(func() { matched, err = p.Matches(context.Background(), Call{Event: "push"}) })
		if matched || !errors.Is(err, ErrTooLarge) {
			t.Errorf("%.60s…: Matches = %v, %v; want false, %v", expr, matched, err, ErrTooLarge)
		}
		if held > minBudget {
			t.Errorf("%.60s…: held %d bytes, more than the budget of %d", expr, held, minBudget)
		}
		t.Logf("%.60s…: held %d bytes", expr, held)
	}
}

// TestDecodedBytes: what decoding a value whole allocates (a concatenation
// of two arrays of the body, a conversion) is within what it is charged,
// on the hostile bodies, the real payloads and the long lists; and the
// charge of a real payload is a few times its size (it was 48 times every
// value: two arrays of 100 paths of a push were "too large").
func TestDecodedBytes(t *testing.T) {
	boundsTheShippedBuild(t)
	bodies := hostileBodies()
	files, _ := filepath.Glob(filepath.Join("testdata", "github", "*.json"))
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		bodies[filepath.Base(file)] = body
	}
	for _, c := range longLists {
		bodies[c.name] = []byte(c.body(1000))
	}
	for name, body := range bodies {
		unlimited := newBudget(0, nil)
		unlimited.left = math.MaxInt
		allocated := allocatedBy(func() { _ = materialize(body, unlimited) })
		charged := decodedBytes(body)
		if allocated > uint64(charged) {
			t.Errorf("%s: decoding allocated %d bytes, more than the %d charged", name, allocated, charged)
		}
		if ratio := float64(charged) / float64(len(body)); strings.HasSuffix(name, ".json") && ratio > 8 {
			t.Errorf("%s: charged %.1f times its size for decoding", name, ratio)
		}
	}
}

// TestWhatAStepKeepsIsCharged: a step's values that outlive it keep its
// scope, whatever keeps them: a concatenation (z + i keeps the array i and
// what was read of it), and the members an object read keeps (each value
// charged by what it holds: an array's struct is twice an object's).
// Measured against the budget, on bodies sized to make each work hardest.
func TestWhatAStepKeepsIsCharged(t *testing.T) {
	boundsTheShippedBuild(t)
	members := func(n int, value string) string {
		return list(`{"status":"firing",`, n, func(i int) string { return fmt.Sprintf(`"k%d":%s`, i, value) }, `}`)
	}
	cases := map[string][]byte{
		// 1 MiB of one-element arrays of an object of 60 members each.
		"[[0]].all(z, body.items.map(i, i[0].a == 0 ? z + i : z).size() > 0)": func() []byte {
			item := `[{"a":0,` + strings.TrimPrefix(members(60, "[]"), `{"status":"firing",`) + `]`
			n := (MaxInputBytes - 20) / (len(item) + 1)
			return []byte(list(`{"items":[`, n, func(int) string { return item }, `]}`))
		}(),
	}
	// An object of as many empty arrays as its read leaves the budget,
	// after 1 MiB of padding.
	for _, value := range []string{"[]", "{}", "0", `"x"`} {
		for n := 60_000; n > 0; n -= 1000 {
			obj := members(n, value)
			pad := MaxInputBytes - len(obj) - 20
			if pad < 0 {
				continue
			}
			body := []byte(`{"pad":[` + strings.TrimSuffix(strings.Repeat("0,", pad/2), ",") + `],"obj":` + obj + `}`)
			b := newBudget(len(body), nil)
			if fitsTheBudget(body, b) {
				cases[`body.obj.status == "firing" && body.obj.k0 == body.obj.k0 && `+strconv.Quote(value)+` != ""`] = body
				break
			}
		}
	}
	for expr, body := range cases {
		p, err := Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		held := HeldBy(func() { _, _ = p.Matches(context.Background(), Call{Body: body}) })
		if budget := budgetPerBodyByte * len(body); held > uint64(budget) {
			t.Errorf("%s on %d bytes: held %d bytes, more than the budget of %d (%.1f times)", expr, len(body), held, budget, float64(held)/float64(budget))
		}
	}
}

// fitsTheBudget tells whether reading the members of body and of its
// member obj fits b.
func fitsTheBudget(body []byte, b *allocBudget) bool {
	top, _ := parseJSON(body, b).(*jsonObject)
	if top == nil || !top.load() {
		return false
	}
	obj, _ := top.vals["obj"].(*jsonObject)
	return obj != nil && obj.load()
}

// TestRealFiltersWithinTheBudget: filters of real shapes that compare or
// join two arrays of the body decide as cel-go does: a concatenation is
// charged by what decoding holds (it was 48 times the bytes), and an array
// compared with another is read in turn (each element was kept).
func TestRealFiltersWithinTheBudget(t *testing.T) {
	stepsDecide(t)
	paths := func(n int, dir string) string {
		return list("[", n, func(i int) string { return fmt.Sprintf(`"%s/module-%d/src/file_%d.go"`, dir, i%50, i) }, "]")
	}
	ints := func(n, add int) string { return list("[", n, func(i int) string { return fmt.Sprint(i + add) }, "]") }
	for _, c := range []struct{ expr, body string }{
		{`"docs/module-1/src/file_1.go" in body.head_commit.added + body.head_commit.modified`,
			`{"head_commit":{"added":` + paths(100, "pkg") + `,"modified":` + paths(100, "docs") + `}}`},
		{`size(body.head_commit.added + body.head_commit.modified) > 10`,
			`{"head_commit":{"added":` + paths(1000, "pkg") + `,"modified":` + paths(1000, "docs") + `}}`},
		{`body.before == body.after`, `{"before":` + ints(1000, 0) + `,"after":` + ints(1000, 0) + `}`},
		{`body.before != body.after`, `{"before":` + ints(50_000, 0) + `,"after":` + ints(50_000, 1) + `}`},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.expr, err)
		}
		call := Call{Header: http.Header{}, Body: []byte(c.body)}
		got, err := p.Matches(context.Background(), call)
		if want := oracle(t, c.expr, call); err != nil || got != want || !want {
			t.Errorf("%s on %d bytes: Matches = %v, %v; cel-go on the decoded body: %v", c.expr, len(c.body), got, err, want)
		}
	}
}
