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

package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/hookrun/hookrun/test/testenv"
)

// The kubectl plugin's platforms (hack/kubectl-hookrun/krew.yaml).
var pluginPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// distFiles is what dist holds: the names of its files.
func distFiles(t *testing.T, r release) []string {
	t.Helper()
	entries, err := os.ReadDir(r.dist)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// dist holds the release's files and nothing else, and checksums.txt holds
// the sha256 of each other file (but its own signature's bundle, made after
// it), in the format sha256sum --check reads.
func TestDistAndChecksums(t *testing.T) {
	r := theRelease(t)
	want := []string{"chart.txt", "checksums.txt", "checksums.txt.sigstore.json", "crds.yaml", "demo-agent.yaml",
		"hookrun-" + r.chartVersion() + ".tgz", "hookrun.yaml", "images.txt", "install.yaml"}
	for _, img := range r.images() {
		for _, p := range append([]string{"index"}, platforms...) {
			want = append(want, img.sbomFile(p))
		}
	}
	for _, p := range pluginPlatforms {
		want = append(want, "kubectl-hookrun_"+strings.Replace(p, "/", "_", 1)+".tar.gz")
	}
	slices.Sort(want)
	got := distFiles(t, r)
	if !slices.Equal(got, want) {
		t.Errorf("dist holds %v, want %v", got, want)
	}

	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(distFile(t, r, "checksums.txt")), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt: %q is not `<sha256>  <file>`", line)
		}
		listed[name] = sum
	}
	for _, name := range got {
		if name == "checksums.txt" || name == "checksums.txt.sigstore.json" {
			continue
		}
		if sum := sha256.Sum256(distFile(t, r, name)); listed[name] != hex.EncodeToString(sum[:]) {
			t.Errorf("checksums.txt: %s %q, want its sha256 %x", name, listed[name], sum)
		}
		delete(listed, name)
	}
	if len(listed) > 0 {
		t.Errorf("checksums.txt lists files dist does not hold: %v", listed)
	}
}

// The krew manifest names each archive by its release URL and sha256; each
// archive holds the plugin built for its platform (static where the format
// shows it, the release's version), the completion script but on Windows, and
// the repository's LICENSE.
func TestKrewArchives(t *testing.T) {
	r := theRelease(t)
	var m struct {
		Spec struct {
			Version   string
			Platforms []struct {
				Selector struct{ MatchLabels map[string]string }
				URI      string
				Sha256   string
				Bin      string
			}
		}
	}
	if err := yaml.Unmarshal(distFile(t, r, "hookrun.yaml"), &m); err != nil {
		t.Fatal(err)
	}
	if m.Spec.Version != r.version || len(m.Spec.Platforms) != len(pluginPlatforms) {
		t.Fatalf("hookrun.yaml: version %s, %d platforms; want %s, %d", m.Spec.Version, len(m.Spec.Platforms), r.version, len(pluginPlatforms))
	}
	license, err := os.ReadFile(filepath.Join(testenv.Root(), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range m.Spec.Platforms {
		p := entry.Selector.MatchLabels["os"] + "/" + entry.Selector.MatchLabels["arch"]
		t.Run(p, func(t *testing.T) {
			name := "kubectl-hookrun_" + strings.Replace(p, "/", "_", 1) + ".tar.gz"
			if entry.URI != "https://github.com/hookrun/hookrun/releases/download/"+r.version+"/"+name {
				t.Errorf("uri %s", entry.URI)
			}
			archive := distFile(t, r, path.Base(entry.URI))
			if sum := sha256.Sum256(archive); hex.EncodeToString(sum[:]) != entry.Sha256 {
				t.Errorf("sha256 %s, the archive's is %x", entry.Sha256, sum)
			}
			files := untarGz(t, archive)
			want := []string{entry.Bin, "LICENSE"}
			if !strings.HasPrefix(p, "windows/") {
				want = append(want, "kubectl_complete-hookrun")
			}
			slices.Sort(want)
			if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
				t.Errorf("the archive holds %v, want %v", got, want)
			}
			if !bytes.Equal(files["LICENSE"], license) {
				t.Errorf("the archive's LICENSE is not the repository's")
			}
			bin := filepath.Join(t.TempDir(), entry.Bin)
			if err := os.WriteFile(bin, files[entry.Bin], 0o755); err != nil {
				t.Fatal(err)
			}
			checkBinary(t, bin, p, r.version, "github.com/hookrun/hookrun/hack/kubectl-hookrun", "--version")
		})
	}
}

// untarGz is a .tar.gz's regular files by name.
func untarGz(t *testing.T, archive []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = data
	}
}

// requiredVersion is the version go.mod requires of module path.
func requiredVersion(t *testing.T, module string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	t.Fatalf("go.mod requires no %s", module)
	return ""
}
