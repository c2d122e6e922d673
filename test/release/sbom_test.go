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
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// spdxMediaType is the media type of an SPDX JSON document.
const spdxMediaType = "text/spdx+json"

// spdxDocument is the part of an SPDX 2 JSON document the tests read.
type spdxDocument struct {
	SPDXVersion string `json:"spdxVersion"`
	Packages    []struct {
		Name        string `json:"name"`
		VersionInfo string `json:"versionInfo"`
	} `json:"packages"`
}

// versionOf is the version of the document's package name, and whether it
// lists one.
func (d spdxDocument) versionOf(name string) (string, bool) {
	for _, p := range d.Packages {
		if p.Name == name {
			return p.VersionInfo, true
		}
	}
	return "", false
}

// sbom fetches the SBOM attached to the image digest in repo (ko attaches it
// as cosign does: the tag sha256-<hex>.sbom, one SPDX JSON layer).
func sbom(t *testing.T, repo, digest string) ([]byte, spdxDocument) {
	t.Helper()
	ref := repo + ":" + strings.Replace(digest, ":", "-", 1) + ".sbom"
	var m manifest
	crane(t, &m, "manifest", ref)
	if len(m.Layers) != 1 || m.Layers[0].MediaType != spdxMediaType {
		t.Fatalf("%s: layers %+v, want one %s", ref, m.Layers, spdxMediaType)
	}
	data := run(t, tool(t, "CRANE"), "blob", repo+"@"+m.Layers[0].Digest)
	var doc spdxDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	if !strings.HasPrefix(doc.SPDXVersion, "SPDX-2.") {
		t.Errorf("%s: spdxVersion %q", ref, doc.SPDXVersion)
	}
	return data, doc
}

// sbomFile is the name of the file of dist that holds the SBOM of the image's
// platform p, or of its index for p "index": <name>-linux-amd64.spdx.json.
func (img releasedImage) sbomFile(p string) string {
	return img.name + "-" + strings.ReplaceAll(p, "/", "-") + ".spdx.json"
}

// Each platform's image has an SPDX SBOM attached that describes it: the
// image (by digest), hookrun's module and the modules it was built with, at
// go.mod's versions; the index has one listing the platform images. dist/
// holds the same documents, named for the image, as <name>-<platform>.spdx.json
// and <name>-index.spdx.json.
func TestImageSBOMs(t *testing.T) {
	r := theRelease(t)
	for _, img := range r.images() {
		t.Run(img.name, func(t *testing.T) {
			ref := img.ref(t, r)
			digests := platformDigests(t, ref)
			for _, p := range platforms {
				data, doc := sbom(t, img.repo, digests[p])
				// As docs/operations.md fetches it.
				if got := run(t, tool(t, "COSIGN"), "download", "sbom", "--platform", p, ref); !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(data)) {
					t.Errorf("%s: cosign download sbom gives another document than the one attached:\n%.300s", p, got)
				}
				want := map[string]string{digests[p]: "", "github.com/hookrun/hookrun": ""}
				for _, m := range img.modules {
					want[m] = requiredVersion(t, m)
				}
				for name, want := range want {
					got, ok := doc.versionOf(name)
					if !ok || (want != "" && got != want) {
						t.Errorf("%s: the SBOM lists %s at %q (listed: %t), want %q", p, name, got, ok, want)
					}
				}
				if !bytes.Equal(distFile(t, r, img.sbomFile(p)), data) {
					t.Errorf("%s: dist/%s is not the SBOM attached to the image", p, img.sbomFile(p))
				}
			}
			data, doc := sbom(t, img.repo, strings.SplitN(ref, "@", 2)[1])
			for _, p := range platforms {
				if got, ok := doc.versionOf(digests[p]); !ok || got != p {
					t.Errorf("the index's SBOM lists %s as %q (listed: %t), want %s", digests[p], got, ok, p)
				}
			}
			if !bytes.Equal(distFile(t, r, img.sbomFile("index")), data) {
				t.Errorf("dist/%s is not the SBOM attached to the index", img.sbomFile("index"))
			}

			files, err := filepath.Glob(filepath.Join(r.dist, img.name+"-*.spdx.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != len(platforms)+1 {
				t.Errorf("dist has %d SBOMs of %s (%v), want %d", len(files), img.name, files, len(platforms)+1)
			}
		})
	}
}
