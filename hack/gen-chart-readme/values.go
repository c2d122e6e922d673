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

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// section is a top-level key of values.yaml: its comment and its rows.
type section struct {
	name    string
	comment string
	rows    []row
}

// row is a value (or a group of values, whose def is empty) of the README.
type row struct {
	name, def, description string
}

// schemaNode is what gen-chart-readme reads of values.schema.json.
type schemaNode struct {
	Properties map[string]*schemaNode `json:"properties"`
}

// parseValues reads values.yaml with its comments, in file order, as
// values.schema.json divides it into values.
func parseValues(values, schemaJSON []byte) ([]section, error) {
	var schema schemaNode
	if err := json.Unmarshal(schemaJSON, &schema); err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("values.yaml: want a mapping")
	}
	var sections []section
	var errs []error
	top := doc.Content[0]
	for i := 0; i < len(top.Content); i += 2 {
		key, value := top.Content[i], top.Content[i+1]
		s := section{name: key.Value}
		w := walker{errs: &errs}
		sub, ok := schema.Properties[key.Value]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: not in values.schema.json", key.Value))
		case isGroup(sub, value):
			s.comment = comment(key, value)
			w.group(key.Value, sub, value, &s.rows)
		default:
			w.value(key.Value, key, value, &s.rows)
		}
		sections = append(sections, s)
	}
	return sections, errors.Join(errs...)
}

// walker collects rows and what is wrong with values.yaml.
type walker struct{ errs *[]error }

// group adds the rows of the values in mapping, the value of path.
func (w walker) group(path string, schema *schemaNode, mapping *yaml.Node, rows *[]row) {
	for i := 0; i < len(mapping.Content); i += 2 {
		key, value := mapping.Content[i], mapping.Content[i+1]
		name := path + "." + key.Value
		sub, ok := schema.Properties[key.Value]
		switch {
		case !ok:
			*w.errs = append(*w.errs, fmt.Errorf("%s: not in values.schema.json", name))
		case isGroup(sub, value):
			if c := comment(key, value); c != "" {
				*rows = append(*rows, row{name: name, description: c})
			}
			w.group(name, sub, value, rows)
		default:
			w.value(name, key, value, rows)
		}
	}
}

// value adds the row of one value.
func (w walker) value(name string, key, value *yaml.Node, rows *[]row) {
	description := comment(key, value)
	if description == "" {
		*w.errs = append(*w.errs, fmt.Errorf("%s: no comment in values.yaml says what it is", name))
	}
	var v any
	if err := value.Decode(&v); err != nil {
		*w.errs = append(*w.errs, fmt.Errorf("%s: %w", name, err))
		return
	}
	def, err := compactJSON(v)
	if err != nil {
		*w.errs = append(*w.errs, fmt.Errorf("%s: %w", name, err))
		return
	}
	*rows = append(*rows, row{name: name, def: def, description: description})
}

// isGroup says whether value is a group of values rather than one value:
// an object the schema lists the properties of.
func isGroup(schema *schemaNode, value *yaml.Node) bool {
	return schema != nil && len(schema.Properties) > 0 && value.Kind == yaml.MappingNode
}

// comment is the comment above key, and any at the end of its line, as one
// line of text.
func comment(key, value *yaml.Node) string {
	var words []string
	for _, c := range []string{key.HeadComment, key.LineComment, value.LineComment} {
		for _, line := range strings.Split(c, "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
			if line != "" {
				words = append(words, line)
			}
		}
	}
	return strings.Join(words, " ")
}

// compactJSON is v as JSON on one line, keys sorted, nothing escaped for HTML.
func compactJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// render writes the sections as Markdown.
func render(sections []section) []byte {
	var b bytes.Buffer
	for _, s := range sections {
		fmt.Fprintf(&b, "\n### `%s`\n\n", s.name)
		if s.comment != "" {
			b.WriteString(markdownText(s.comment) + "\n\n")
		}
		b.WriteString("| value | default | description |\n|---|---|---|\n")
		for _, r := range s.rows {
			def := "—"
			if r.def != "" {
				def = codeSpan(r.def)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.name, def, markdownText(r.description))
		}
	}
	b.WriteString("\n")
	return b.Bytes()
}

// codeSpan is s as inline code in a table cell: backticks enough to hold
// any in s, and its pipes escaped (GitHub reads a | in a cell as a
// column break, also in code).
func codeSpan(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}

// markdownText is a comment as Markdown in a table cell: what lies between
// backticks stays code, and outside them the characters Markdown or HTML
// would read as markup are escaped.
func markdownText(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			parts[i] = strings.ReplaceAll(parts[i], "|", `\|`)
			continue
		}
		parts[i] = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`).Replace(parts[i])
	}
	return strings.Join(parts, "`")
}
