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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verify runs cosign verify of ref with the public key; the release's
// signatures are not in the transparency log (make test-release has none).
func verify(t *testing.T, key, ref string) ([]byte, error) {
	t.Helper()
	return command(t, tool(t, "COSIGN"), "verify", "--key", key, "--insecure-ignore-tlog=true", "--output", "json", ref)
}

// cosign verify passes with the release's key for each image's index and
// platform images and the chart (by digest and by tag), and fails with
// another key and for an image the release did not sign (its base).
func TestSignatures(t *testing.T) {
	r := theRelease(t)
	chart := chartRef(t, r)
	signed := []string{chart, r.chartRepo() + ":" + r.chartVersion()}
	refusedWithOtherKey := []string{chart}
	for _, img := range r.images() {
		ref := img.ref(t, r)
		signed = append(signed, ref, img.repo+":"+r.chartVersion())
		refusedWithOtherKey = append(refusedWithOtherKey, ref)
		for _, d := range platformDigests(t, ref) {
			signed = append(signed, img.repo+"@"+d)
		}
	}
	for _, ref := range signed {
		out, err := verify(t, r.key, ref)
		if err != nil {
			t.Errorf("with the release key: %v", err)
			continue
		}
		digest := ref[strings.LastIndex(ref, "@")+1:]
		if strings.Contains(ref, "@") && !strings.Contains(string(out), `"docker-manifest-digest":"`+digest+`"`) {
			t.Errorf("cosign verify %s: the signed payload names another digest:\n%s", ref, out)
		}
	}
	for _, ref := range refusedWithOtherKey {
		if _, err := verify(t, r.otherKey, ref); err == nil || !strings.Contains(err.Error(), "no matching signatures") {
			t.Errorf("%s verified with another key: %v", ref, err)
		}
	}
	if _, err := verify(t, r.key, r.base); err == nil || !strings.Contains(err.Error(), "no signatures found") {
		t.Errorf("the base image, which the release did not sign, verified: %v", err)
	}
}

// checksums.txt's bundle verifies with the release's key, and not with
// another key nor for a checksums.txt changed by one byte.
func TestChecksumsSignature(t *testing.T) {
	r := theRelease(t)
	bundle := filepath.Join(r.dist, "checksums.txt.sigstore.json")
	sums := filepath.Join(r.dist, "checksums.txt")
	verifyBlob := func(key, file string) ([]byte, error) {
		return command(t, tool(t, "COSIGN"), "verify-blob", "--key", key, "--bundle", bundle, "--insecure-ignore-tlog=true", file)
	}
	if out, err := verifyBlob(r.key, sums); err != nil {
		t.Errorf("cosign verify-blob checksums.txt with the release key: %v\n%s", err, out)
	}
	if _, err := verifyBlob(r.otherKey, sums); err == nil {
		t.Error("checksums.txt verified with another key")
	}
	changed := append(distFile(t, r, "checksums.txt"), '\n')
	tampered := filepath.Join(t.TempDir(), "checksums.txt")
	if err := os.WriteFile(tampered, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyBlob(r.key, tampered); err == nil {
		t.Error("a changed checksums.txt verified with the release key")
	}
}
