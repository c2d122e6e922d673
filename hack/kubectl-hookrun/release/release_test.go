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
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const releaseURL = "https://github.com/hookrun/hookrun/releases/download/"

// manifest is a krew plugin manifest (krew's index.Plugin), for strict
// decoding: a misspelt or misplaced field fails the test.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
			Bin string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readTemplate(t *testing.T) []byte {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(repoRoot(t), templatePath))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func sumOf(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

// krew.yaml renders, as krew-release-bot renders it, to a manifest with one
// entry per release platform: its selector, the archive's URL under the tag's
// GitHub release with its sum, and the files krew installs from it.
func TestTemplateRendersOnePlatformEntryPerArchive(t *testing.T) {
	const tag = "v1.2.3"
	var uris []string
	out, err := render(readTemplate(t), tag, func(uri string) (string, error) {
		uris = append(uris, uri)
		return sumOf(uri), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "apiVersion: ") {
		t.Errorf("the rendered manifest does not start with apiVersion (the template's comment is a template comment):\n%s", out)
	}
	if strings.Contains(string(out), "{{") {
		t.Errorf("the rendered manifest still has template actions:\n%s", out)
	}
	var m manifest
	if err := yaml.UnmarshalStrict(out, &m); err != nil {
		t.Fatalf("rendered manifest: %v\n%s", err, out)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" ||
		m.Metadata.Name+".yaml" != manifestName || m.Spec.Version != tag ||
		m.Spec.Homepage != "https://github.com/hookrun/hookrun" || m.Spec.ShortDescription == "" || m.Spec.Description == "" {
		t.Errorf("manifest header: %+v", m)
	}
	if !strings.Contains(m.Spec.Caveats, "/store/hookrun/"+tag+"/kubectl_complete-hookrun") {
		t.Errorf("the caveats do not name where krew installs the completion script:\n%s", m.Spec.Caveats)
	}
	if len(m.Spec.Platforms) != len(releasePlatforms) {
		t.Fatalf("%d platform entries, want %d (%v)", len(m.Spec.Platforms), len(releasePlatforms), releasePlatforms)
	}
	for i, p := range releasePlatforms {
		got := m.Spec.Platforms[i]
		uri := releaseURL + tag + "/" + p.archiveName()
		if got.Selector.MatchLabels["os"] != p.os || got.Selector.MatchLabels["arch"] != p.arch || len(got.Selector.MatchLabels) != 2 {
			t.Errorf("entry %d (%s): selector %v", i, p, got.Selector.MatchLabels)
		}
		if got.URI != uri || got.Sha256 != sumOf(uri) || uris[i] != uri {
			t.Errorf("entry %d (%s): uri %s sha256 %s, want %s with its sum", i, p, got.URI, got.Sha256, uri)
		}
		want := []string{p.binName()}
		if p.os != "windows" {
			want = append(want, "kubectl_complete-hookrun")
		}
		want = append(want, "LICENSE")
		var from []string
		for _, f := range got.Files {
			from = append(from, f.From)
			if f.To != "." {
				t.Errorf("entry %d (%s): %s goes to %q, want .", i, p, f.From, f.To)
			}
		}
		if got.Bin != p.binName() || !slices.Equal(from, want) {
			t.Errorf("entry %d (%s): bin %s files %v, want bin %s files %v", i, p, got.Bin, from, p.binName(), want)
		}
	}
}

// The release names an archive for each platform it builds, and only those.
func TestRenderReleaseNeedsEveryArchiveAndNoOther(t *testing.T) {
	tmpl := readTemplate(t)
	sums := map[string]string{}
	for _, p := range releasePlatforms {
		sums[p.archiveName()] = sumOf(p.String())
	}
	if _, err := renderRelease(tmpl, "v1.0.0", sums); err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{"kubectl-hookrun_linux_riscv64.tar.gz": sumOf("riscv64")}
	for name, sum := range sums {
		extra[name] = sum
	}
	if _, err := renderRelease(tmpl, "v1.0.0", extra); err == nil || !strings.Contains(err.Error(), "linux_riscv64") {
		t.Errorf("an archive the manifest does not name: err %v", err)
	}
	delete(sums, "kubectl-hookrun_darwin_arm64.tar.gz")
	if _, err := renderRelease(tmpl, "v1.0.0", sums); err == nil || !strings.Contains(err.Error(), "darwin_arm64") {
		t.Errorf("an archive not built: err %v", err)
	}
	for _, v := range []string{"", "1.0.0", "v1.0", "fb35e8c-dirty", "v1.0.0-rc.01"} {
		if err := run(t.Context(), []string{"-version", v, "-out", t.TempDir()}, os.Stderr); err == nil || !strings.Contains(err.Error(), "semantic version") {
			t.Errorf("-version %q: err %v", v, err)
		}
	}
}

// The real krew (make test sets KREW and VALIDATE_KREW_MANIFEST to the pinned
// builds in bin/) accepts krew.yaml rendered as make plugin-release renders
// it and installs the plugin from the host's archive, offline; the installed
// plugin runs, is the archived binary (its --version), and its completion
// script reaches it.
func TestKrewInstallsTheRelease(t *testing.T) {
	krew := os.Getenv("KREW")
	if krew == "" {
		t.Skip("KREW is not set: `make test` builds the pinned krew into bin/ and sets it")
	}
	validator := os.Getenv("VALIDATE_KREW_MANIFEST")
	if validator == "" {
		t.Fatal("KREW is set but VALIDATE_KREW_MANIFEST is not: `make test` sets both (`make krew` builds them into bin/)")
	}
	host := platform{runtime.GOOS, runtime.GOARCH}
	if !slices.Contains(releasePlatforms, host) {
		t.Skipf("krew.yaml has no archive for %s", host)
	}
	const version = "v0.0.1-krewtest"
	dir := t.TempDir()
	// The plugin make test built once (HOOKRUN_TEST_BIN), which prints its
	// own version; else one built here as a release builds it, stamped with
	// this one. (That a release stamps its version is checked on the
	// release's archives: test/release, TestKrewArchives.)
	var archive, sum, wantVersion string
	var err error
	if prebuilt := os.Getenv("HOOKRUN_TEST_BIN"); prebuilt != "" {
		bin := filepath.Join(prebuilt, "kubectl-hookrun")
		out, verr := exec.CommandContext(t.Context(), bin, "--version").CombinedOutput()
		if verr != nil {
			t.Fatalf("%s --version: %v\n%s", bin, verr, out)
		}
		wantVersion = strings.TrimSpace(string(out))
		// Stored, not compressed: this plugin is built with -race (70 MB),
		// and so is this test, under which gzip's default level took 35 s
		// of it. krew reads any level; the release's own archives are
		// checked at its level (test/release).
		archive, sum, err = packArchive(repoRoot(t), bin, dir, host, gzip.NoCompression)
	} else {
		wantVersion = "version " + version
		archive, sum, err = buildArchive(t.Context(), repoRoot(t), version, dir, host)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Only the host's archive is built here (cross-builds take minutes);
	// the other entries get a stand-in sum (of their URL), which krew
	// validates as a sum but never compares with an archive.
	rendered, err := render(readTemplate(t), version, func(uri string) (string, error) {
		if uri == releaseURL+version+"/"+host.archiveName() {
			return sum, nil
		}
		return sumOf(uri), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(dir, manifestName)
	if err := os.WriteFile(manifestPath, rendered, 0o644); err != nil {
		t.Fatal(err)
	}

	// A clean environment: no user's krew, kubeconfig or KREW_OS/KREW_ARCH,
	// and a proxy that refuses every connection, so that krew fails if it
	// tries to download anything.
	home := filepath.Join(dir, "home")
	krewRoot := filepath.Join(dir, "krew")
	env := []string{
		"HOME=" + home,
		"KREW_ROOT=" + krewRoot,
		"KREW_NO_UPGRADE_CHECK=1",
		"HTTP_PROXY=http://127.0.0.1:1", "HTTPS_PROXY=http://127.0.0.1:1", "NO_PROXY=",
		"TMPDIR=" + dir,
		"PATH=" + filepath.Join(krewRoot, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	runIn := func(bin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Env = env
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// Structure, every entry selects a platform krew supports and no two
	// select the same one. (Its install step downloads every archive.)
	runIn(validator, "-manifest", manifestPath, "-skip-install")

	// krew compares the archive with the manifest's sum: with another sum
	// it refuses to install.
	wrongSum := filepath.Join(dir, "wrong-sum", manifestName)
	if err := os.MkdirAll(filepath.Dir(wrongSum), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrongSum, []byte(strings.Replace(string(rendered), sum, sumOf("another archive"), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), krew, "install", "--manifest="+wrongSum, "--archive="+archive)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "checksum does not match") {
		t.Fatalf("krew install with a wrong sum: %v\n%s", err, out)
	}

	out := runIn(krew, "install", "--manifest="+manifestPath, "--archive="+archive)
	if !strings.Contains(out, "Installed plugin: hookrun") {
		t.Fatalf("krew install:\n%s", out)
	}
	// (krew list needs the default index, which is a git clone.)
	receipt, err := os.ReadFile(filepath.Join(krewRoot, "receipts", manifestName))
	if err != nil || !strings.Contains(string(receipt), "version: "+version) {
		t.Errorf("krew's receipt of hookrun %s: %v\n%s", version, err, receipt)
	}

	plugin := filepath.Join(krewRoot, "bin", host.binName())
	help := runIn(plugin, "--help")
	for _, want := range []string{"kubectl hookrun", "Usage:", "show", "rotate", "redeliver"} {
		if !strings.Contains(help, want) {
			t.Errorf("kubectl-hookrun --help does not say %q:\n%s", want, help)
		}
	}
	if out := runIn(plugin, "--version"); !strings.Contains(out, wantVersion) {
		t.Errorf("kubectl-hookrun --version: %q, want the archived plugin's %q", out, wantVersion)
	}
	// The binary krew installed is the archive's, byte for byte.
	installed, err := os.ReadFile(plugin)
	if err != nil {
		t.Fatal(err)
	}
	archived, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range untarGz(t, archived) {
		if e.name == host.binName() {
			found = true
			if sha256.Sum256([]byte(e.data)) != sha256.Sum256(installed) {
				t.Errorf("krew installed a %s of %d bytes that is not the archive's (%d bytes)", plugin, len(installed), len(e.data))
			}
		}
	}
	if !found {
		t.Errorf("the archive has no %s", host.binName())
	}

	// krew installs the license beside the plugin.
	if _, err := os.Stat(filepath.Join(krewRoot, "store", "hookrun", version, "LICENSE")); err != nil {
		t.Errorf("krew did not install the LICENSE: %v", err)
	}

	if host.os == "windows" {
		return
	}
	completion := filepath.Join(krewRoot, "store", "hookrun", version, "kubectl_complete-hookrun")
	if st, err := os.Stat(completion); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("krew did not install an executable %s: %v", completion, err)
	}
	// kubectl runs it to complete `kubectl hookrun <TAB>`; it finds the
	// plugin in krew's bin directory.
	if out := runIn(completion, ""); !strings.Contains(out, "rotate") {
		t.Errorf("kubectl_complete-hookrun does not complete the subcommands:\n%s", out)
	}
}
