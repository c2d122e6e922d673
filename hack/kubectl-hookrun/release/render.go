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
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// render executes tmpl, a krew plugin manifest template in the format of
// krew-release-bot, for the release tag. Like the bot it offers the field
// .TagName and the functions addURIAndSha and indent; addURIAndSha's first
// argument is itself a template of the archive's URL (with .TagName and
// .Version, the tag's digits), and the call becomes the archive's uri line and
// a sha256 line indented by four spaces. Where the bot downloads the archive to
// hash it, render asks sha256Of for the sum of the released URL.
func render(tmpl []byte, tag string, sha256Of func(uri string) (string, error)) ([]byte, error) {
	t, err := template.New("manifest").Option("missingkey=error").Funcs(template.FuncMap{
		"addURIAndSha": func(uriTemplate, tag string) (string, error) {
			uri, err := expandURI(uriTemplate, tag)
			if err != nil {
				return "", err
			}
			sum, err := sha256Of(uri)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", uri, sum), nil
		},
		"indent": indent,
	}).Parse(string(tmpl))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, struct{ TagName string }{tag}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// expandURI executes an archive URL template as addURIAndSha does.
func expandURI(uriTemplate, tag string) (string, error) {
	t, err := template.New("uri").Option("missingkey=error").Parse(uriTemplate)
	if err != nil {
		return "", fmt.Errorf("archive URL %q: %w", uriTemplate, err)
	}
	var uri strings.Builder
	values := struct{ TagName, Version string }{tag, tagVersion(tag)}
	if err := t.Execute(&uri, values); err != nil {
		return "", fmt.Errorf("archive URL %q: %w", uriTemplate, err)
	}
	return uri.String(), nil
}

var tagDigits = regexp.MustCompile(`\d+(\.\d+)+`)

// tagVersion is the version in a tag (v1.2.3 -> 1.2.3), or the tag.
func tagVersion(tag string) string {
	if v := tagDigits.FindString(tag); v != "" {
		return v
	}
	return tag
}

// indent is the bot's indent: for an addURIAndSha call indented by spaces
// instead of four, `{{ addURIAndSha ... | indent 6 }}`.
func indent(spaces int, v string) string {
	v = strings.ReplaceAll(v, "    sha256:", "sha256:")
	pad := strings.Repeat(" ", spaces)
	return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
}
