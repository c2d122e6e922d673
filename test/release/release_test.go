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

// Package release verifies what `make release` published and wrote (DESIGN
// sections 11 and 12): for hookrun's image and the demo agent's, the index and
// its platforms, the non-root user, static binaries, the SBOMs, the cosign
// signatures and attestations (SLSA provenance, SBOM) of each; the chart's
// signature (each good with the release key, refused with another), the chart
// pulled from oci:// and dry-run on a real API server, dist/install.yaml,
// dist/crds.yaml and dist/demo-agent.yaml applied there, the krew archives
// and dist/checksums.txt.
//
// `make test-release` (hack/test-release.sh) publishes a release to a registry
// on loopback and runs these tests with RELEASE_TEST_* pointing at it; without
// them every test skips.
package release

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hookrun/hookrun/hack/devcluster"
)

// The platforms every image of a release is built for.
var platforms = []string{"linux/amd64", "linux/arm64"}

// release is what hack/test-release.sh published.
type release struct {
	dist     string // make release's DIST
	registry string // its REGISTRY
	version  string // vX.Y.Z
	base     string // the base image, by digest
	key      string // the public key of the key the release was signed with
	otherKey string // the public key of another key pair
}

// image is the release's image repository; chartRepo its chart's.
func (r release) image() string     { return r.registry + "/hookrun" }
func (r release) chartRepo() string { return r.registry + "/charts/hookrun" }

// releasedImage is an image the release publishes.
type releasedImage struct {
	name        string   // ko's name for the binary: its entrypoint /ko-app/<name>, its SBOMs <name>-*.spdx.json
	repo        string   // REGISTRY/<repository>
	mainPath    string   // the package main it is built from
	versionArgs []string // the arguments that make the binary print its version, if it has any
	modules     []string // modules its SBOM lists at go.mod's versions
}

// images are the release's images, in the order of images.txt.
func (r release) images() []releasedImage {
	return []releasedImage{
		{name: "hookrun", repo: r.image(), mainPath: "github.com/hookrun/hookrun", versionArgs: []string{"version"},
			modules: []string{"k8s.io/client-go", "github.com/google/cel-go"}},
		{name: "demo-agent", repo: r.registry + "/hookrun-demo-agent", mainPath: "github.com/hookrun/hookrun/hack/demo-agent",
			modules: []string{"github.com/a2aproject/a2a-go/v2"}},
	}
}

// chartVersion is the version without the v: the chart's version and
// appVersion, and the image's main tag.
func (r release) chartVersion() string { return strings.TrimPrefix(r.version, "v") }

// theRelease is the release under test, or skips the test when there is none.
func theRelease(t *testing.T) release {
	t.Helper()
	dist := os.Getenv("RELEASE_TEST_DIST")
	if dist == "" {
		t.Skip("RELEASE_TEST_DIST is not set: `make test-release` publishes a release to a loopback registry and runs these tests on it")
	}
	r := release{dist: dist}
	for _, v := range []struct {
		name string
		to   *string
	}{
		{"RELEASE_TEST_REGISTRY", &r.registry}, {"RELEASE_TEST_VERSION", &r.version}, {"RELEASE_TEST_BASE", &r.base},
		{"RELEASE_TEST_KEY", &r.key}, {"RELEASE_TEST_OTHER_KEY", &r.otherKey},
	} {
		if *v.to = os.Getenv(v.name); *v.to == "" {
			t.Fatalf("RELEASE_TEST_DIST is set but %s is not: run `make test-release`", v.name)
		}
	}
	return r
}

// tool is the path of a tool the Makefile names in the environment.
func tool(t *testing.T, name string) string {
	t.Helper()
	bin := os.Getenv(name)
	if bin == "" {
		t.Fatalf("%s is not set: run `make test-release`", name)
	}
	return bin
}

// run runs a tool and returns its standard output; it fails the test with
// the tool's standard error when the tool fails.
func run(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	out, err := command(t, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// command runs a tool; the error carries the command line and standard error.
func command(t *testing.T, bin string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, &commandError{line: filepath.Base(bin) + " " + strings.Join(args, " "), err: err, stderr: stderr.String() + string(out)}
	}
	return out, nil
}

type commandError struct {
	line, stderr string
	err          error
}

func (e *commandError) Error() string { return e.line + ": " + e.err.Error() + "\n" + e.stderr }

// crane runs the pinned crane and decodes its JSON output into v.
func crane(t *testing.T, v any, args ...string) {
	t.Helper()
	out := run(t, tool(t, "CRANE"), args...)
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("crane %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// distFile reads a file of the release's DIST.
func distFile(t *testing.T, r release, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.dist, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// demoAgent is the demo agent's image.
func (r release) demoAgent() releasedImage { return r.images()[1] }

// imageRefs are the images' indexes by digest, as make release wrote them in
// images.txt: a line each, in the order of release.images.
func imageRefs(t *testing.T, r release) []string {
	t.Helper()
	refs := strings.Split(strings.TrimSuffix(string(distFile(t, r, "images.txt")), "\n"), "\n")
	images := r.images()
	if len(refs) != len(images) {
		t.Fatalf("images.txt: %q, want %d lines", refs, len(images))
	}
	for i, img := range images {
		if !strings.HasPrefix(refs[i], img.repo+"@sha256:") || len(refs[i]) != len(img.repo)+len("@sha256:")+64 {
			t.Fatalf("images.txt line %d: %q, want %s@sha256:...", i+1, refs[i], img.repo)
		}
	}
	return refs
}

// imageRef is hookrun's image index by digest (images.txt's first line).
func imageRef(t *testing.T, r release) string {
	t.Helper()
	return imageRefs(t, r)[0]
}

// ref is the image's index by digest, from images.txt.
func (img releasedImage) ref(t *testing.T, r release) string {
	t.Helper()
	for _, ref := range imageRefs(t, r) {
		if strings.HasPrefix(ref, img.repo+"@") {
			return ref
		}
	}
	t.Fatalf("images.txt names no %s", img.repo)
	return ""
}

var (
	apiServerOnce sync.Once
	apiServer     *envtest.Environment
	kubeconfig    string
	apiServerErr  error
)

// kubectl runs the kubectl of KUBEBUILDER_ASSETS against one API server that
// the package's tests share, started on first use (TestMain stops it).
func kubectl(t *testing.T, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-release`")
	}
	apiServerOnce.Do(func() {
		env := &envtest.Environment{}
		cfg, err := env.Start()
		if err != nil {
			apiServerErr = err
			return
		}
		apiServer = env
		dir, err := os.MkdirTemp("", "hookrun-release-kubeconfig-")
		if err != nil {
			apiServerErr = err
			return
		}
		kubeconfig = filepath.Join(dir, "kubeconfig")
		apiServerErr = devcluster.WriteKubeconfig(cfg, "admin", kubeconfig)
	})
	if apiServerErr != nil {
		t.Fatalf("starting the API server: %v", apiServerErr)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, &commandError{line: "kubectl " + strings.Join(args, " "), err: err, stderr: string(out)}
	}
	return out, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if apiServer != nil {
		_ = apiServer.Stop()
		_ = os.RemoveAll(filepath.Dir(kubeconfig))
	}
	os.Exit(code)
}
