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

// Package docs tests the documentation: every relative link of docs/*.md,
// the README and the chart's README leads to a file (and its #anchor to a
// heading there, as GitHub names headings), every YAML block of
// docs/getting-started.md decodes strictly into hookrun's types, so a
// misspelt or unknown field fails the test, and the list of leaf packages
// in docs/operator.md is the one .golangci.yml's depguard rules hold.
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// markdownFiles are the documents whose links are checked: the docs, and
// the top-level and chart documents that link into them.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.Root(), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README.md", "SECURITY.md", "CHANGELOG.md", filepath.Join("charts", "hookrun", "README.md")} {
		files = append(files, filepath.Join(testenv.Root(), f))
	}
	if len(files) < 10 {
		t.Fatalf("found only %d markdown files: %v", len(files), files)
	}
	return files
}

// line is a line of a markdown document outside fenced code blocks.
type line struct {
	n    int
	text string
}

// prose is the document's lines outside fenced code blocks, and its fenced
// blocks of the given info string (such as "yaml"), each joined.
func prose(doc []byte, info string) (lines []line, blocks []string) {
	var fence string // the opening fence while inside a block
	var keep bool
	var block strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		trimmed := strings.TrimLeft(text, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			keep = strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == info
			block.Reset()
		case fence != "" && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "":
			if keep {
				blocks = append(blocks, block.String())
			}
			fence = ""
		case fence != "":
			block.WriteString(text + "\n")
		default:
			lines = append(lines, line{n, text})
		}
	}
	return lines, blocks
}

// withoutCode is text without its code spans (`...`, “...“): a link in
// a code span is not a link.
func withoutCode(text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			return b.String() + text
		}
		b.WriteString(text[:i])
		run := len(text[i:]) - len(strings.TrimLeft(text[i:], "`"))
		rest := text[i+run:]
		end := strings.Index(rest, strings.Repeat("`", run))
		if end < 0 {
			return b.String() + text[i:]
		}
		text = rest[end+run:]
	}
}

// repoURL is how documents shown outside the repository (the chart's
// README on Artifact Hub) link into it; such a link is checked as a
// relative one from the repository's root.
const repoURL = "https://github.com/hookrun/hookrun/blob/main/"

var (
	linkPattern    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	headingPattern = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor     = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	inlineLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// slug is the anchor GitHub gives a heading: its text, lower case,
// without punctuation but hyphens and underscores, spaces as hyphens.
func slug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors are the anchors of a markdown document: its headings' slugs
// (a repeated one gets -1, -2, ... as on GitHub) and its HTML anchors.
func anchors(doc []byte) map[string]bool {
	lines, _ := prose(doc, "")
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range lines {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		m := headingPattern.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"9. The kubectl plugin: the endpoint card in one command each": "9-the-kubectl-plugin-the-endpoint-card-in-one-command-each",
		"Reliability: kill -9 under load (make chaos)":                 "reliability-kill--9-under-load-make-chaos",
		"422 `agent_unavailable`, `thread_unavailable`":                "422-agent_unavailable-thread_unavailable",
		"Runs stuck in `queued`":                                       "runs-stuck-in-queued",
		"WebhookEndpoint (`whe`, `hook`)":                              "webhookendpoint-whe-hook",
		"200 `{\"status\":\"ignored\"}`":                               "200-statusignored",
		"See [api.md](api.md) first":                                   "see-apimd-first",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestLinks: every relative link of the docs, the README, SECURITY.md,
// CHANGELOG.md and the chart's README (and each link of theirs to a file of
// this repository on GitHub) leads to a file or directory of the
// repository, and an #anchor to a heading (or an HTML anchor) of the
// markdown file it names.
func TestLinks(t *testing.T) {
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		doc, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(doc)
		return cache[path], nil
	}
	checked := 0
	for _, file := range markdownFiles(t) {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(testenv.Root(), file)
		lines, _ := prose(doc, "")
		for _, l := range lines {
			for _, m := range linkPattern.FindAllStringSubmatch(withoutCode(l.text), -1) {
				target := m[1]
				base := filepath.Dir(file)
				if inRepo, ok := strings.CutPrefix(target, repoURL); ok {
					target, base = inRepo, testenv.Root()
				}
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(base, filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", rel, l.n, target, path)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into a file that is not markdown", rel, l.n, target)
					continue
				}
				a, err := anchorsOf(dest)
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", rel, l.n, target, err)
					continue
				}
				if !a[anchor] {
					t.Errorf("%s:%d: link %q: no heading of %s has the anchor #%s", rel, l.n, target, filepath.Base(dest), anchor)
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d relative links: is the link pattern still right?", checked)
	}
}

// newObject is an empty object of the kind a YAML document of the guide
// declares: hookrun's kinds, and the core kinds a guide may show beside them.
func newObject(tm metav1.TypeMeta) (any, error) {
	switch tm.APIVersion + " " + tm.Kind {
	case agentsv1alpha1.GroupVersion.String() + " Agent":
		return &agentsv1alpha1.Agent{}, nil
	case agentsv1alpha1.GroupVersion.String() + " WebhookEndpoint":
		return &agentsv1alpha1.WebhookEndpoint{}, nil
	case agentsv1alpha1.GroupVersion.String() + " AgentThread":
		return &agentsv1alpha1.AgentThread{}, nil
	case "v1 Secret":
		return &corev1.Secret{}, nil
	case "v1 Namespace":
		return &corev1.Namespace{}, nil
	}
	return nil, fmt.Errorf("apiVersion %q, kind %q is not a kind this test knows", tm.APIVersion, tm.Kind)
}

// documents splits a YAML stream into its documents.
func documents(stream string) []string {
	var docs []string
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(stream, -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

// TestGettingStartedYAML: every ```yaml block of docs/getting-started.md
// decodes strictly (no unknown or repeated field) into the type of its
// kind, and names an object with a name and a namespace, as kubectl apply
// needs it.
func TestGettingStartedYAML(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "getting-started.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, blocks := prose(doc, "yaml")
	kinds := map[string]int{}
	for i, block := range blocks {
		for j, d := range documents(block) {
			where := fmt.Sprintf("yaml block %d, document %d", i+1, j+1)
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(d), &tm); err != nil {
				t.Errorf("%s: %v\n%s", where, err, d)
				continue
			}
			obj, err := newObject(tm)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(d), obj); err != nil {
				t.Errorf("%s (%s): %v\n%s", where, tm.Kind, err, d)
				continue
			}
			var meta struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			_ = yaml.Unmarshal([]byte(d), &meta)
			if meta.Metadata.Name == "" || meta.Metadata.Namespace == "" {
				t.Errorf("%s (%s): metadata.name and metadata.namespace are required, so that the block applies as it is", where, tm.Kind)
			}
			kinds[tm.Kind]++
		}
	}
	if kinds["Agent"] == 0 || kinds["WebhookEndpoint"] == 0 {
		t.Errorf("the guide's YAML has %v: an Agent and a WebhookEndpoint at least", kinds)
	}
}
