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

package docs

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/hookrun/hookrun/test/testenv"
)

const module = "github.com/hookrun/hookrun/"

// depguardRule is what this test reads of a depguard rule of .golangci.yml.
type depguardRule struct {
	Files []string `json:"files"`
	Allow []string `json:"allow"`
}

// depguardRules are the depguard rules of .golangci.yml, by name.
func depguardRules(t *testing.T) map[string]depguardRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.Root(), ".golangci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Linters struct {
			Settings struct {
				Depguard struct {
					Rules map[string]depguardRule `json:"rules"`
				} `json:"depguard"`
			} `json:"settings"`
		} `json:"linters"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		t.Fatalf(".golangci.yml: %v", err)
	}
	rules := config.Linters.Settings.Depguard.Rules
	for _, name := range []string{"leaf-packages", "receiver"} {
		if _, ok := rules[name]; !ok {
			t.Fatalf(".golangci.yml has no depguard rule %q (rules: %v): is this test still reading the right file?", name, slices.Sorted(maps.Keys(rules)))
		}
	}
	return rules
}

// packageOfPattern is the package directory a depguard files pattern
// covers ("**/controllers/oidc/**/*.go" is controllers/oidc), and false for
// a pattern that is not one package's files.
func packageOfPattern(pattern string) (string, bool) {
	p, ok := strings.CutPrefix(pattern, "**/")
	if !ok {
		return "", false
	}
	p = strings.TrimSuffix(p, "/*.go")
	p = strings.TrimSuffix(p, "/**")
	return p, !strings.ContainsAny(p, "*!$")
}

// leafPackagesOfDocs is the table of docs/operator.md's "Leaf packages":
// each package, and whether the receiver imports it.
func leafPackagesOfDocs(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "operator.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := prose(doc, "")
	in := false
	out := map[string]bool{}
	for _, l := range lines {
		if m := headingPattern.FindStringSubmatch(l.text); m != nil {
			in = m[1] == "##" && m[2] == "Leaf packages"
			continue
		}
		if !in || !strings.HasPrefix(l.text, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(l.text, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("docs/operator.md:%d: a row of the leaf packages has %d cells, not 3: %s", l.n, len(cells), l.text)
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		switch receiver := strings.TrimSpace(cells[2]); receiver {
		case "yes", "no":
			out[pkg] = receiver == "yes"
		default:
			t.Fatalf("docs/operator.md:%d: the receiver column of %s says %q, not yes or no", l.n, pkg, receiver)
		}
	}
	if len(out) == 0 {
		t.Fatal(`docs/operator.md has no table under "## Leaf packages"`)
	}
	return out
}

// TestLeafPackagesList: the leaf packages docs/operator.md lists are the
// packages .golangci.yml's leaf-packages rule covers, those it marks as
// imported by the receiver are the ones the receiver rule allows, and every
// package a rule lets a controller or a leaf package import is listed (but
// controllers/internal, what the controllers share), so that the list
// and the rules cannot drift apart.
func TestLeafPackagesList(t *testing.T) {
	rules := depguardRules(t)
	docs := leafPackagesOfDocs(t)
	listed := slices.Sorted(maps.Keys(docs))

	var covered []string
	for _, pattern := range rules["leaf-packages"].Files {
		pkg, ok := packageOfPattern(pattern)
		if !ok {
			t.Errorf(".golangci.yml: leaf-packages covers %q, which this test does not read as one package's files", pattern)
			continue
		}
		if !slices.Contains(covered, pkg) {
			covered = append(covered, pkg)
		}
	}
	slices.Sort(covered)
	if !slices.Equal(listed, covered) {
		t.Errorf("docs/operator.md lists the leaf packages %v, .golangci.yml's leaf-packages rule covers %v", listed, covered)
	}

	var shared, allowed []string
	for pkg, receiver := range docs {
		if receiver {
			shared = append(shared, pkg)
		}
	}
	for _, pkg := range rules["receiver"].Allow {
		allowed = append(allowed, strings.TrimPrefix(pkg, module))
	}
	slices.Sort(shared)
	slices.Sort(allowed)
	if !slices.Equal(shared, allowed) {
		t.Errorf("docs/operator.md says the receiver imports %v, .golangci.yml's receiver rule allows %v", shared, allowed)
	}

	for _, rule := range []string{"leaf-packages", "controller-packages"} {
		for _, pkg := range rules[rule].Allow {
			pkg = strings.TrimPrefix(pkg, module)
			if pkg == "controllers/internal" {
				continue
			}
			if _, ok := docs[pkg]; !ok {
				t.Errorf(".golangci.yml's %s rule allows %s, which docs/operator.md does not list as a leaf package", rule, pkg)
			}
		}
	}
}
