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

package chart

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/hookrun/hookrun/test/testenv"
)

// The chart's README lists every value of values.yaml with its default and
// a description, and no value that is gone. values.schema.json says what a
// value is: an object it lists the properties of is a group of values (its
// row, if any, has no default), anything else is one value.
func TestChartREADMEListsEveryValue(t *testing.T) {
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	var values map[string]any
	readYAML(t, filepath.Join(chart, "values.yaml"), &values)
	var schema valuesSchema
	readYAML(t, filepath.Join(chart, "values.schema.json"), &schema)
	leaves, groups := map[string]any{}, map[string]bool{}
	splitValues("", values, &schema, leaves, groups)
	if len(leaves) < 50 {
		t.Fatalf("found %d values in values.yaml; the walk is broken", len(leaves))
	}

	readme, err := os.ReadFile(filepath.Join(chart, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := readmeRows(string(readme))
	const fix = "; run `make manifests` (hack/gen-chart-readme writes the table from values.yaml's comments)"
	for name, value := range leaves {
		r, ok := rows[name]
		if !ok {
			t.Errorf("value %s is missing from charts/hookrun/README.md%s", name, fix)
			continue
		}
		if want := "`" + compactJSON(t, value) + "`"; r.def != want {
			t.Errorf("README gives %s the default %s, values.yaml %s%s", name, r.def, want, fix)
		}
		if r.description == "" {
			t.Errorf("README says nothing of %s%s", name, fix)
		}
	}
	for name, r := range rows {
		switch {
		case groups[name]:
			if r.def != "—" || r.description == "" {
				t.Errorf("README row of the group %s: default %q (want —), description %q", name, r.def, r.description)
			}
		case !hasKey(leaves, name):
			t.Errorf("README lists %s, which values.yaml does not have%s", name, fix)
		}
	}
}

// valuesSchema is what the test reads of values.schema.json.
type valuesSchema struct {
	Properties map[string]*valuesSchema `json:"properties"`
}

// splitValues sorts the values under prefix into leaves (one value each, by
// dotted name) and groups.
func splitValues(prefix string, values map[string]any, schema *valuesSchema, leaves map[string]any, groups map[string]bool) {
	for key, value := range values {
		name := key
		if prefix != "" {
			name = prefix + "." + key
		}
		sub := schema.Properties[key]
		if m, ok := value.(map[string]any); ok && sub != nil && len(sub.Properties) > 0 {
			groups[name] = true
			splitValues(name, m, sub, leaves, groups)
			continue
		}
		leaves[name] = value
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// readmeRow is a row of the README's values tables.
type readmeRow struct{ def, description string }

// readmeRows reads the rows "| `name` | default | description |" of the
// README, with \| read as |.
func readmeRows(readme string) map[string]readmeRow {
	rows := map[string]readmeRow{}
	for _, line := range strings.Split(readme, "\n") {
		cells := tableCells(line)
		if len(cells) != 3 || !strings.HasPrefix(cells[0], "`") || !strings.HasSuffix(cells[0], "`") {
			continue
		}
		rows[strings.Trim(cells[0], "`")] = readmeRow{def: cells[1], description: cells[2]}
	}
	return rows
}

// tableCells splits a Markdown table row at the pipes no backslash escapes.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || strings.HasSuffix(line, `\|`) {
		return nil
	}
	var cells []string
	var cell strings.Builder
	inner := line[1 : len(line)-1]
	for i := 0; i < len(inner); i++ {
		switch {
		case inner[i] == '\\' && i+1 < len(inner) && inner[i+1] == '|':
			cell.WriteByte('|')
			i++
		case inner[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(inner[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// compactJSON is v as one line of JSON, as the README gives defaults.
func compactJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// readYAML reads a YAML (or JSON) file into out.
func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
