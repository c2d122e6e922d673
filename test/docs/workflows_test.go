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
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hookrun/hookrun/test/testenv"
)

// usesLine is a step's action: `uses: owner/repo[/path]@ref`.
var usesLine = regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(\S+?)@(\S+)`)

// pinnedRef is a full commit: a tag or a branch can be moved after review.
var pinnedRef = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestWorkflowActionsPinnedByCommit: every action the workflows use, the
// release's above all (it may write packages and mint OIDC tokens), is named
// by a full commit.
func TestWorkflowActionsPinnedByCommit(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.Root(), ".github", "workflows", "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no workflow found in .github/workflows")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		uses := usesLine.FindAllStringSubmatch(string(data), -1)
		for _, u := range uses {
			if !pinnedRef.MatchString(u[2]) {
				t.Errorf("%s: %s@%s is not pinned by a full commit", filepath.Base(f), u[1], u[2])
			}
		}
		if len(uses) == 0 {
			t.Errorf("%s uses no action: the pattern no longer reads it", filepath.Base(f))
		}
	}
}
