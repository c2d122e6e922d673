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
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
)

// validJSON agrees with encoding/json on what is one JSON value.
func TestValidJSON(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `-0.5e+10`, `1E3`, `true`, `false`, `null`, ` {"a" : [1, 2 ,{"b":null}] } `,
		`{"a":"\u00e9\n\"\\\/"}`, `"\ud83d\ude00"`,
		`{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `[1 2]`, `{} {}`, `"a`,
		"\"a\tb\"", `"\x"`, `"\u12"`, `NaN`, `[` + strings.Repeat(`[`, 20) + strings.Repeat(`]`, 21), "\"\xff\"",
	} {
		if got, want := validJSON([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("validJSON(%q) = %v, encoding/json says %v", in, got, want)
		}
	}
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	if validJSON([]byte(deep)) {
		t.Errorf("nesting deeper than %d is taken", maxJSONDepth)
	}
}

// What expressions read of a JSON body.
func TestJSONBody(t *testing.T) {
	const body = `{"action":"opened","n":12,"big":18446744073709551616,"x":0.5,"ok":true,"none":null,
		"labels":{"severity":"critical","team":"a"},"list":[1,"two",{"three":3},[4]],"empty":{},"nothing":[],
		"esc\u0061ped":"\u00e9t\u00e9","dup":1,"dup":2}`
	for _, expr := range []string{
		`body.action == "opened"`,
		`body.n == 12 && body.n == 12.0 && body.n > 11.5 && type(body.n) == int`,
		`body.big > 1.8e19 && type(body.big) == double`,
		`body.x == 0.5 && body.ok && body.none == null`,
		`has(body.labels) && !has(body.missing) && has(body.labels.team)`,
		`"action" in body && !("missing" in body)`,
		`size(body.labels) == 2 && size(body.list) == 4 && size(body.empty) == 0 && size(body.nothing) == 0`,
		`body.labels == {"severity": "critical", "team": "a"} && body.labels != {"severity": "critical"}`,
		`body.list[0] == 1 && body.list[1] == "two" && body.list[2].three == 3 && body.list[3] == [4]`,
		`1 in body.list && "two" in body.list && [4] in body.list && !(5 in body.list)`,
		`body.list.exists(e, type(e) == map && e.three == 3)`,
		`body.labels.all(k, k in ["severity", "team"])`,
		`body.labels.exists(k, body.labels[k] == "a")`,
		`body.escaped == "été"`,
		`body.dup == 2 && size(body) == 12`,
		`type(body) == map && type(body.list) == list`,
		`body.list.filter(e, type(e) == int) == [1]`,
		`body.nothing + [1] == [1]`,
		`body["action"] == "opened" && body.labels["team"] == "a"`,
	} {
		p, err := Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		if ok, err := p.Matches(t.Context(), Call{Body: []byte(body)}); !ok || err != nil {
			t.Errorf("%s: %v, %v; want true", expr, ok, err)
		}
	}
	for _, expr := range []string{`body.missing == 1`, `body.list[9] == 1`, `body.action.x == 1`, `body.n == "12" || body.n.size() == 0`} {
		p, err := Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		if ok, err := p.Matches(t.Context(), Call{Body: []byte(body)}); ok {
			t.Errorf("%s: true, want false or an error (%v)", expr, err)
		}
	}
}

// BenchmarkWorstBody: 1 MiB bodies built to make the documented filters
// work hardest: as many alerts as fit, none critical (every element
// scanned), and one with no labels at all (an error in every element).
func BenchmarkWorstBody(b *testing.B) {
	p, err := Compile(`body.status == "firing" && body.alerts.exists(a, a.labels.severity == "critical")`)
	if err != nil {
		b.Fatal(err)
	}
	fill := func(elem string) []byte {
		n := (MaxInputBytes - 40) / (len(elem) + 1)
		return []byte(`{"status":"firing","alerts":[` + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + `]}`)
	}
	for name, body := range map[string][]byte{
		"small alerts, none critical": fill(`{"labels":{"severity":"x"}}`),
		"empty alerts":                fill(`{}`),
		"1 MiB of one string":         []byte(`{"status":"firing","alerts":["` + strings.Repeat("x", MaxInputBytes-40) + `"]}`),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = p.Matches(b.Context(), Call{Body: body})
			}
		})
	}
	// Expressions that select into, or size, the whole body in every step
	// of a comprehension over it (within the cost limit): quadratic in the
	// body before values were kept once read.
	list := fill(`{"k":1}`)
	for _, expr := range []string{`body.alerts.all(x, size(body.alerts) > 0)`, `body.alerts.all(x, body.alerts[0].k == 1)`} {
		p, err := Compile(expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(expr, func(b *testing.B) {
			b.SetBytes(int64(len(list)))
			for b.Loop() {
				_, _ = p.Matches(b.Context(), Call{Body: list})
			}
		})
	}
}

// TestJSONValuesAreReadOnce: a member or element is read from the bytes
// once and then kept, so an expression that selects into a large body, or
// takes its size, in every step of a comprehension pays once for the scan,
// as the cost estimate assumes (before, every select rebuilt the nested
// object: body.all(x, size(body) > 0) grew with the square of the body).
func TestJSONValuesAreReadOnce(t *testing.T) {
	// Objects of smallJSON bytes or more are kept; smaller ones are scanned.
	pad := `"pad":"` + strings.Repeat("x", smallJSON) + `"`
	body, ok := ParseJSON([]byte(`{"big":{"k1":0,"k2":[1,{"a":2}],` + pad + `},"list":[{"x":1},[2]],` + pad + `}`)).(*jsonObject)
	if !ok {
		t.Fatal("not an object")
	}
	big := body.Get(types.String("big"))
	if again := body.Get(types.String("big")); again != big {
		t.Error("selecting a nested object twice read it twice")
	}
	list, ok := body.Get(types.String("list")).(*jsonArray)
	if !ok {
		t.Fatal("list is not an array")
	}
	first := list.Get(types.Int(0))
	if again := list.Get(types.Int(0)); again != first || list.Size() != types.Int(2) {
		t.Error("an element read twice is not the same value")
	}
	if list.offsets == nil || body.vals == nil {
		t.Error("nothing was kept")
	}
	inner, ok := big.(*jsonObject)
	if !ok {
		t.Fatal("big is not an object")
	}
	if inner.Equal(inner) != types.True || inner.decoded != nil {
		t.Error("equality decoded the whole value")
	}
}
