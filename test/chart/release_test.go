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

package chart

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/hookrun/hookrun/test/testenv"
)

// releaseImage is the image releases publish (DESIGN section 11).
const releaseImage = "ghcr.io/hookrun/hookrun"

// chartMetadata is what the tests read of Chart.yaml.
type chartMetadata struct {
	AppVersion  string            `json:"appVersion"`
	Annotations map[string]string `json:"annotations"`
}

// The chart installs the release image at its appVersion unless told
// otherwise, and says so to Artifact Hub.
func TestChartInstallsTheReleaseImage(t *testing.T) {
	g := NewWithT(t)
	var meta chartMetadata
	readYAML(t, filepath.Join(testenv.Root(), "charts", "hookrun", "Chart.yaml"), &meta)
	g.Expect(meta.AppVersion).NotTo(BeEmpty())
	want := releaseImage + ":" + meta.AppVersion
	defaults := render(t)
	own := render(t, "--set", "image.repository=registry.example.com/hookrun", "--set", "image.tag=dev")
	// make release renders dist/install.yaml with the image by digest.
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pinned := render(t, "--set", "image.tag=dev", "--set", "image.digest="+digest)
	for _, c := range []string{"operator", "receiver"} {
		g.Expect(onlyContainer(g, defaults[deploymentKey(c)])).To(HaveKeyWithValue("image", want), c)
		g.Expect(onlyContainer(g, own[deploymentKey(c)])).To(HaveKeyWithValue("image", "registry.example.com/hookrun:dev"), c)
		g.Expect(onlyContainer(g, pinned[deploymentKey(c)])).To(HaveKeyWithValue("image", releaseImage+"@"+digest), c)
	}
	out, err := helmCommand(t, "template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"),
		"--set", "publicBaseURL=https://hooks.example.com", "--set", "image.digest=latest").CombinedOutput()
	g.Expect(err).To(HaveOccurred(), "a digest that is not sha256:<64 hex digits>")
	g.Expect(string(out)).To(ContainSubstring("/image/digest"))

	var images []struct {
		Name      string   `json:"name"`
		Image     string   `json:"image"`
		Platforms []string `json:"platforms"`
	}
	g.Expect(yaml.Unmarshal([]byte(meta.Annotations["artifacthub.io/images"]), &images)).To(Succeed())
	g.Expect(images).To(HaveLen(1))
	g.Expect(images[0].Image).To(Equal(want), "artifacthub.io/images must name the image the chart installs")
	g.Expect(images[0].Platforms).To(ConsistOf("linux/amd64", "linux/arm64"))
}

// Chart.yaml's Artifact Hub annotations use only keys Artifact Hub
// documents, the license is the LICENSE file's, the links point at the
// repository, and the CRDs listed are the chart's.
func TestChartArtifactHubAnnotations(t *testing.T) {
	g := NewWithT(t)
	root := testenv.Root()
	var meta chartMetadata
	readYAML(t, filepath.Join(root, "charts", "hookrun", "Chart.yaml"), &meta)
	// https://artifacthub.io/docs/topics/annotations/helm
	documented := []string{"alternativeName", "category", "changes", "containsSecurityUpdates", "images", "crds",
		"crdsExamples", "license", "links", "maintainers", "operator", "operatorCapabilities", "prerelease",
		"recommendations", "screenshots", "signKey"}
	for key := range meta.Annotations {
		if name, ok := strings.CutPrefix(key, "artifacthub.io/"); ok {
			g.Expect(documented).To(ContainElement(name), "annotation %s is not one Artifact Hub documents", key)
		}
	}
	g.Expect(meta.Annotations).To(HaveKeyWithValue("artifacthub.io/license", "Apache-2.0"))
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Fields(string(license))[:4]).To(Equal([]string{"Apache", "License", "Version", "2.0,"}))

	var links []struct{ Name, URL string }
	g.Expect(yaml.Unmarshal([]byte(meta.Annotations["artifacthub.io/links"]), &links)).To(Succeed())
	g.Expect(links).NotTo(BeEmpty())
	names := []string{}
	for _, l := range links {
		names = append(names, l.Name)
		g.Expect(l.URL).To(HavePrefix("https://github.com/hookrun/hookrun/"), l.Name)
		if file, ok := strings.CutPrefix(l.URL, "https://github.com/hookrun/hookrun/blob/main/"); ok {
			g.Expect(filepath.Join(root, file)).To(BeAnExistingFile(), l.Name)
		}
	}
	g.Expect(names).To(ContainElement("support"), "Artifact Hub shows the link named support as where to report an issue")

	type crd struct{ Kind, Version, Name string }
	var listed []crd
	g.Expect(yaml.Unmarshal([]byte(meta.Annotations["artifacthub.io/crds"]), &listed)).To(Succeed())
	var installed []crd
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range files {
		var def struct {
			Metadata struct{ Name string }
			Spec     struct {
				Names    struct{ Kind string }
				Versions []crdVersion
			}
		}
		readYAML(t, f, &def)
		i := slices.IndexFunc(def.Spec.Versions, func(v crdVersion) bool { return v.Storage })
		g.Expect(i).NotTo(Equal(-1), f)
		installed = append(installed, crd{Kind: def.Spec.Names.Kind, Version: def.Spec.Versions[i].Name, Name: def.Metadata.Name})
	}
	g.Expect(listed).To(ConsistOf(installed), "artifacthub.io/crds lists the CRDs of config/crd/bases")
}

// crdVersion is a version of a CustomResourceDefinition.
type crdVersion struct {
	Name    string
	Storage bool
}
