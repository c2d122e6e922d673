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
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// There is no Docker daemon here, so the image is checked by doing what its
// build stage does: copy exactly the sources the Dockerfile copies into an
// empty directory and build there as it does. The result must be a static
// binary (the final stage is an empty base).
func TestDockerfileBuildStageBuildsAStaticBinary(t *testing.T) {
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
	build := exec.Command("go", "build", "-trimpath", "-o", "hookrun", ".")
	build.Dir = ctx
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building from the Dockerfile's sources only: %v\n%s", err, out)
	}
	bin, err := elf.Open(filepath.Join(ctx, "hookrun"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bin.Close() }()
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary needs a dynamic loader; the image's empty base has none")
		}
	}
}
