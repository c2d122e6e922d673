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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// There is no Docker daemon here, so the image is checked by doing what its
// build stage does: copy exactly the sources the Dockerfile copies into an
// empty directory and resolve the build there as it does (CGO_ENABLED=0,
// -mod=readonly): every package of hookrun and of its modules must be found,
// with no source missing. It is not compiled again: a CGO_ENABLED=0,
// -trimpath build shares no compiled package with make test's race build,
// and compiling the whole graph once more cost minutes on a fresh machine.
// What the flags give (a static binary, which the empty final stage needs)
// is checked on the release's binaries, built the same way (test/release,
// TestImageIsNonRootAndStatic).
func TestDockerfileBuildStageHasEverySource(t *testing.T) {
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.TempDir()
	var buildLine string
	for _, line := range strings.Split(string(dockerfile), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 3 && fields[0] == "COPY" && !strings.HasPrefix(fields[1], "--"):
			for _, src := range fields[1 : len(fields)-1] {
				cp := exec.Command("cp", "-r", strings.TrimSuffix(src, "/"), filepath.Join(ctx, strings.TrimSuffix(src, "/")))
				if out, err := cp.CombinedOutput(); err != nil {
					t.Fatalf("COPY %s: %v %s", src, err, out)
				}
			}
		case len(fields) > 2 && fields[0] == "RUN" && fields[1] == "go" && fields[2] == "build":
			buildLine = line
		}
	}
	if !strings.Contains(buildLine, "-trimpath") || !strings.Contains(string(dockerfile), "CGO_ENABLED=0") {
		t.Fatalf("the Dockerfile's build is not the static, trimmed build: %q", buildLine)
	}
	list := exec.Command("go", "list", "-deps", "-e", "-f", `{{with .Error}}{{$.ImportPath}}: {{.}}{{"\n"}}{{end}}`, ".")
	list.Dir = ctx
	list.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	out, err := list.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("resolving the build from the Dockerfile's sources only: %v\n%s", err, out)
	}
}
