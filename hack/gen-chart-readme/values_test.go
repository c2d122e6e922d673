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
	"reflect"
	"strings"
	"testing"
)

const testSchema = `{"properties": {
  "image": {"properties": {"repository": {}, "tag": {}}},
  "operator": {"properties": {
    "resources": {"type": "object"},
    "networkPolicy": {"properties": {"enabled": {}, "ports": {}}}
  }},
  "publicBaseURL": {}
}}`

func TestParseValues(t *testing.T) {
	values := `# The image.
image:
  # repository of it.
  repository: ghcr.io/hookrun/hookrun
  tag: ""  # empty: appVersion.
operator:
  # Requests and limits.
  resources:
    requests: {cpu: 100m}
  # An egress policy.
  networkPolicy:
    # enabled renders it.
    enabled: false
    # Ports,
    # on two lines.
    ports: [443, 6443]
# The receiver's base.
publicBaseURL: ""
`
	got, err := parseValues([]byte(values), []byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	want := []section{
		{name: "image", comment: "The image.", rows: []row{
			{"image.repository", `"ghcr.io/hookrun/hookrun"`, "repository of it."},
			{"image.tag", `""`, "empty: appVersion."},
		}},
		{name: "operator", rows: []row{
			{"operator.resources", `{"requests":{"cpu":"100m"}}`, "Requests and limits."},
			{"operator.networkPolicy", "", "An egress policy."},
			{"operator.networkPolicy.enabled", "false", "enabled renders it."},
			{"operator.networkPolicy.ports", "[443,6443]", "Ports, on two lines."},
		}},
		{name: "publicBaseURL", rows: []row{{"publicBaseURL", `""`, "The receiver's base."}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%#v\nwant\n%#v", got, want)
	}
}

func TestParseValuesRefuses(t *testing.T) {
	for _, tc := range []struct{ name, values, want string }{
		{"a value without a comment", "image:\n  # it.\n  repository: x\n  tag: \"\"\n", "image.tag: no comment"},
		{"a group's comment is not its values'", "# The image.\nimage:\n  # it.\n  repository: x\n  tag: \"\"\n", "image.tag: no comment"},
		{"a value the schema does not know", "# Replicas.\nreplicas: 1\n", "replicas: not in values.schema.json"},
		{"a nested value the schema does not know", "image:\n  # it.\n  digest: x\n", "image.digest: not in values.schema.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseValues([]byte(tc.values), []byte(testSchema))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"*.example.com" for every subdomain`, `"\*.example.com" for every subdomain`},
		{"[{name: x}] and a <b> | pipe", `\[{name: x}\] and a &lt;b&gt; \| pipe`},
		{"run `kubectl get x -l a=b_c` | then", "run `kubectl get x -l a=b_c` \\| then"},
		{"code with a `a|b` pipe", "code with a `a\\|b` pipe"},
		{"an unclosed ` stays text_", "an unclosed ` stays text\\_"},
	} {
		if got := markdownText(tc.in); got != tc.want {
			t.Errorf("markdownText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := codeSpan(`"a|b"`); got != "`\"a\\|b\"`" {
		t.Errorf("codeSpan = %s", got)
	}
}

func TestReplaceSection(t *testing.T) {
	readme := "# Chart\n\nprose\n" + beginSection + "\nold table\n" + endSection + "\nmore prose\n"
	got, err := replaceSection([]byte(readme), []byte("\nnew table\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Chart\n\nprose\n" + beginSection + "\n\nnew table\n" + endSection + "\nmore prose\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := replaceSection([]byte("# Chart\n"), nil); err == nil {
		t.Error("a README without the markers: no error")
	}
}
