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

package devcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A binary in HOOKRUN_TEST_BIN older than a source of the tree is not run:
// the suite would test code that is not the tree's.
func TestPrebuiltBinaryOlderThanASourceIsRefused(t *testing.T) {
	root, prebuilt := t.TempDir(), t.TempDir()
	write := func(path string, at time.Time) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write(filepath.Join(root, "go.mod"), t0)
	write(filepath.Join(root, "receiver", "handler.go"), t0)
	// Build outputs and hidden directories are not sources.
	write(filepath.Join(root, "bin", "later.go"), t0.Add(time.Hour))
	write(filepath.Join(root, ".git", "later.go"), t0.Add(time.Hour))
	write(filepath.Join(prebuilt, "hookrun"), t0.Add(time.Minute))
	t.Setenv("HOOKRUN_TEST_BIN", prebuilt)

	if bin, err := Binary(t.Context(), root, t.TempDir(), "hookrun", "."); err != nil || bin != filepath.Join(prebuilt, "hookrun") {
		t.Fatalf("a binary newer than every source: %q, %v", bin, err)
	}
	write(filepath.Join(root, "receiver", "handler.go"), t0.Add(2*time.Minute))
	if _, err := Binary(t.Context(), root, t.TempDir(), "hookrun", "."); err == nil || !strings.Contains(err.Error(), "older than handler.go") {
		t.Fatalf("a binary older than handler.go: %v", err)
	}
	if _, err := Binary(t.Context(), root, t.TempDir(), "demo-agent", "./hack/demo-agent"); err == nil || !strings.Contains(err.Error(), "holds no demo-agent") {
		t.Fatalf("no demo-agent: %v", err)
	}
}
