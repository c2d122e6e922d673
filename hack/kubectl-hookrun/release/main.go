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

// Command release builds the kubectl plugin's release for krew: one archive
// per platform (kubectl-hookrun_<os>_<arch>.tar.gz) and the krew manifest
// hookrun.yaml, rendered from the template hack/kubectl-hookrun/krew.yaml
// with the archives' sha256 sums, in the form krew-release-bot would render
// it once the archives are uploaded to the GitHub release of the tag.
//
//	go run ./hack/kubectl-hookrun/release -version v0.1.0 -out bin/plugin-release
//
// `make plugin-release VERSION=v0.1.0` runs it from the repository root.
// `kubectl krew install --manifest=bin/plugin-release/hookrun.yaml
// --archive=bin/plugin-release/kubectl-hookrun_linux_amd64.tar.gz` installs a
// build before it is uploaded.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// The platforms krew.yaml has an archive for.
var releasePlatforms = []platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"},
}

// manifestName is the rendered manifest's name: krew names a plugin's
// manifest after the plugin (metadata.name in krew.yaml).
const manifestName = "hookrun.yaml"

// semVer is a semantic version with a leading v, as krew requires of
// spec.version (https://semver.org).
var semVer = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	flags := flag.NewFlagSet("release", flag.ContinueOnError)
	version := flags.String("version", "", "The release's tag: a semantic version with a leading v, e.g. v0.1.0 (krew requires one).")
	dir := flags.String("out", filepath.Join("bin", "plugin-release"), "Directory for the archives and the rendered manifest.")
	root := flags.String("root", ".", "The repository's root.")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if !semVer.MatchString(*version) {
		return fmt.Errorf("-version %q is not a semantic version with a leading v (krew requires one): make plugin-release VERSION=v0.1.0", *version)
	}
	tmpl, err := os.ReadFile(filepath.Join(*root, templatePath))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}

	sums := map[string]string{} // archive name -> sha256
	for _, p := range releasePlatforms {
		archive, sum, err := buildArchive(ctx, *root, *version, *dir, p)
		if err != nil {
			return err
		}
		sums[p.archiveName()] = sum
		fmt.Fprintf(out, "%s  %s\n", sum, archive)
	}
	manifest, err := renderRelease(tmpl, *version, sums)
	if err != nil {
		return err
	}
	manifestPath := filepath.Join(*dir, manifestName)
	if err := writeFile(manifestPath, manifest); err != nil {
		return err
	}
	fmt.Fprintf(out, "krew manifest: %s\nupload the archives to https://github.com/hookrun/hookrun/releases/tag/%s\n", manifestPath, *version)
	return nil
}

// renderRelease renders the manifest template for tag with the sums of the
// archives built (by name). Every archive the template names must have been
// built, and every archive built must be in the template.
func renderRelease(tmpl []byte, tag string, sums map[string]string) ([]byte, error) {
	var named []string
	manifest, err := render(tmpl, tag, func(uri string) (string, error) {
		name := path.Base(uri)
		sum, ok := sums[name]
		if !ok {
			return "", fmt.Errorf("the manifest's archive %s is none of the archives built (%s)", uri, strings.Join(slices.Sorted(maps.Keys(sums)), ", "))
		}
		named = append(named, name)
		return sum, nil
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for name := range sums {
		if !slices.Contains(named, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, errors.New("the manifest names no URL for " + strings.Join(missing, ", "))
	}
	return manifest, nil
}
