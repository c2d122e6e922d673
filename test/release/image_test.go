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
	"bufio"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Base-image annotations (the OCI image spec) that ko writes.
const (
	annotationBaseName   = "org.opencontainers.image.base.name"
	annotationBaseDigest = "org.opencontainers.image.base.digest"
)

// index is an OCI image index, as crane manifest prints it.
type index struct {
	MediaType string `json:"mediaType"`
	Manifests []struct {
		Digest   string `json:"digest"`
		Platform struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		} `json:"platform"`
	} `json:"manifests"`
	Annotations map[string]string `json:"annotations"`
}

// manifest is an OCI image manifest, as crane manifest prints it.
type manifest struct {
	MediaType string `json:"mediaType"`
	Layers    []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	} `json:"layers"`
	Annotations map[string]string `json:"annotations"`
}

// platformDigests reads an image index of the release, by digest: platform ->
// the digest of its image. It fails the test unless the index has exactly the
// release platforms.
func platformDigests(t *testing.T, ref string) map[string]string {
	t.Helper()
	var idx index
	crane(t, &idx, "manifest", ref)
	digests := map[string]string{}
	for _, m := range idx.Manifests {
		digests[m.Platform.OS+"/"+m.Platform.Architecture] = m.Digest
	}
	if got := slices.Sorted(maps.Keys(digests)); len(idx.Manifests) != len(platforms) || !slices.Equal(got, platforms) {
		t.Fatalf("the image index has %d manifests for %v, want one each for %v", len(idx.Manifests), got, platforms)
	}
	return digests
}

// Each image is an index of linux/amd64 and linux/arm64, tagged with the
// chart's appVersion (X.Y.Z, what the chart installs) and the tag (vX.Y.Z),
// built on the base make release was given (by digest), as its annotations
// record: the index names the base by digest, and each platform's image gives
// the digest of the base's image of that platform.
func TestImageIndex(t *testing.T) {
	r := theRelease(t)
	for _, img := range r.images() {
		t.Run(img.name, func(t *testing.T) {
			ref := img.ref(t, r)
			var idx index
			crane(t, &idx, "manifest", ref)
			if !strings.Contains(idx.MediaType, "image.index") && !strings.Contains(idx.MediaType, "manifest.list") {
				t.Fatalf("%s is a %s, not an image index", ref, idx.MediaType)
			}
			digests := platformDigests(t, ref)

			want := strings.SplitN(ref, "@", 2)[1]
			for _, tag := range []string{r.chartVersion(), r.version} {
				if got := strings.TrimSpace(string(run(t, tool(t, "CRANE"), "digest", img.repo+":"+tag))); got != want {
					t.Errorf("%s:%s is %s, want the release's index %s", img.repo, tag, got, want)
				}
			}

			// (The index's base digest annotation is not the base's: ko computes it
			// after annotating the base index.)
			if idx.Annotations[annotationBaseName] != r.base {
				t.Errorf("the index's base annotations: %v, want the name %s", idx.Annotations, r.base)
			}
			var baseIdx index
			crane(t, &baseIdx, "manifest", r.base)
			for _, m := range baseIdx.Manifests {
				p := m.Platform.OS + "/" + m.Platform.Architecture
				var platformImage manifest
				crane(t, &platformImage, "manifest", img.repo+"@"+digests[p])
				if platformImage.Annotations[annotationBaseDigest] != m.Digest {
					t.Errorf("%s: built on %s, want the base's %s image %s", p, platformImage.Annotations[annotationBaseDigest], p, m.Digest)
				}
			}
		})
	}
}

// config is the part of an image's config file the tests read.
type config struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User       string   `json:"User"`
		Entrypoint []string `json:"Entrypoint"`
	} `json:"config"`
}

// Each platform's image runs as the non-root user 65532 (the chart's and
// demo-agent.yaml's runAsUser; the base's nonroot user in /etc/passwd), and
// its entrypoint is its binary built for that platform: static (CGO_ENABLED=0,
// no interpreter, no shared library), and hookrun stamped with the release's
// version.
func TestImageIsNonRootAndStatic(t *testing.T) {
	r := theRelease(t)
	for _, img := range r.images() {
		ref := img.ref(t, r)
		for _, p := range platforms {
			t.Run(img.name+"/"+p, func(t *testing.T) {
				var cfg config
				crane(t, &cfg, "config", "--platform", p, ref)
				if cfg.OS+"/"+cfg.Architecture != p {
					t.Errorf("the config is for %s/%s", cfg.OS, cfg.Architecture)
				}
				if cfg.Config.User != "65532:65532" {
					t.Errorf("the image's user is %q, want 65532:65532 (nonroot)", cfg.Config.User)
				}
				if len(cfg.Config.Entrypoint) != 1 || path.Base(cfg.Config.Entrypoint[0]) != img.name {
					t.Fatalf("entrypoint %q, want the %s binary", cfg.Config.Entrypoint, img.name)
				}
				entrypoint := strings.TrimPrefix(cfg.Config.Entrypoint[0], "/")
				files := exportFiles(t, ref, p, entrypoint, "etc/passwd")
				if !slices.Contains(strings.Split(string(files["etc/passwd"]), "\n"), "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin") {
					t.Errorf("/etc/passwd names no nonroot user 65532:\n%s", files["etc/passwd"])
				}
				bin := filepath.Join(t.TempDir(), img.name)
				if err := os.WriteFile(bin, files[entrypoint], 0o755); err != nil {
					t.Fatal(err)
				}
				checkBinary(t, bin, p, r.version, img.mainPath, img.versionArgs...)
			})
		}
	}
}

// exportFiles reads the named files (paths without the leading /) of the
// image's filesystem for platform p, as crane export flattens it.
func exportFiles(t *testing.T, ref, p string, names ...string) map[string][]byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), tool(t, "CRANE"), "export", "--platform", p, ref, "-")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bufio.NewReader(stdout))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("crane export %s: %v", p, err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "/"))
		if slices.Contains(names, name) && hdr.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = data
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("crane export %s: %v\n%s", p, err, stderr.String())
	}
	for _, n := range names {
		if _, ok := files[n]; !ok {
			t.Fatalf("the %s image has no file /%s", p, n)
		}
	}
	return files
}
