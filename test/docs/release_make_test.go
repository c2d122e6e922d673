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
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookrun/hookrun/test/testenv"
)

// TestReleaseTagReachesNoShell: make release hands the tag to
// hack/release.sh in its environment, which refuses one that is not a
// semantic version before anything else; a tag holding a command
// substitution or quotes (git allows $, (, ` and " in tag names) runs
// nothing. The
// release job may push packages and mint OIDC tokens. The tools are
// /bin/true: release.sh stops before it uses them.
func TestReleaseTagReachesNoShell(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not on PATH")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	for _, tag := range []string{
		`v1.0.0$$(touch ` + marker + `)`, // make reads $$ as $
		`v1.0.0"; touch ` + marker + `; echo "`,
		"v1.0.0`touch " + marker + "`",
	} {
		cmd := exec.Command("make", "--no-print-directory", "release", "VERSION="+tag, "REGISTRY=127.0.0.1:1/hookrun",
			"KO=/bin/true", "COSIGN=/bin/true", "CRANE=/bin/true", "HELM=/bin/true")
		cmd.Dir = testenv.Root()
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("make release VERSION=%q succeeded:\n%s", tag, out)
		}
		if !strings.Contains(string(out), "is not vX.Y.Z") {
			t.Errorf("make release VERSION=%q did not stop at release.sh's version check:\n%s", tag, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("make release VERSION=%q ran the tag's command", tag)
		}
	}
}

// TestReleaseJobCachesNothing: setup-go's cache is off in a workflow job
// that may write packages or mint OIDC tokens (a cache another run wrote
// could feed it).
func TestReleaseJobCachesNothing(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.Root(), ".github", "workflows", "release.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	setupGo := regexp.MustCompile(`(?m)uses:\s*actions/setup-go@\S+.*\n((?:\s{8,}.*\n)+)`)
	m := setupGo.FindAllStringSubmatch(string(data), -1)
	if len(m) == 0 {
		t.Fatal("the release workflow uses no actions/setup-go: the pattern no longer reads it")
	}
	for _, step := range m {
		if !regexp.MustCompile(`(?m)^\s+cache:\s*false\s*$`).MatchString(step[1]) {
			t.Errorf("actions/setup-go without cache: false in the release job:\n%s", step[0])
		}
	}
}
