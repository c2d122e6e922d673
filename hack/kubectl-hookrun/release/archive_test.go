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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Each archive holds what its krew.yaml entry installs: the plugin, the
// completion script but on Windows, and the repository's LICENSE (krew-index
// requires a license file installed with the plugin), at the top level with
// their modes and contents, the same bytes from the same files.
func TestArchiveHoldsThePluginAndLicense(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	completion, err := os.ReadFile(filepath.Join(root, completionPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range releasePlatforms {
		bin := filepath.Join(dir, p.binName())
		if err := os.WriteFile(bin, []byte("a plugin"), 0o755); err != nil {
			t.Fatal(err)
		}
		archive, err := tarGz(archiveFiles(root, bin, p), gzip.DefaultCompression)
		if err != nil {
			t.Fatal(err)
		}
		want := []tarEntry{{p.binName(), 0o755, "a plugin"}}
		if p.os != "windows" {
			want = append(want, tarEntry{"kubectl_complete-hookrun", 0o755, string(completion)})
		}
		want = append(want, tarEntry{"LICENSE", 0o644, string(license)})
		if got := untarGz(t, archive); !slices.Equal(got, want) {
			t.Errorf("%s: the archive holds %v, want %v", p, names(got), names(want))
		}
		again, err := tarGz(archiveFiles(root, bin, p), gzip.DefaultCompression)
		if err != nil || !bytes.Equal(again, archive) {
			t.Errorf("%s: archiving the same files twice gave different bytes (%v)", p, err)
		}
	}
}

type tarEntry struct {
	name string
	mode int64
	data string
}

func names(entries []tarEntry) []string {
	var n []string
	for _, e := range entries {
		n = append(n, fmt.Sprintf("%s (%o, %d bytes)", e.name, e.mode, len(e.data)))
	}
	return n
}

func untarGz(t *testing.T, archive []byte) []tarEntry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var entries []tarEntry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, tarEntry{hdr.Name, hdr.Mode, string(data)})
	}
}
