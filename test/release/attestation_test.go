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
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookrun/hookrun/test/testenv"
)

// The predicate types of the release's attestations: cosign's names (attest
// --type) and the in-toto predicateType each stands for.
const (
	provenanceType          = "slsaprovenance1"
	provenancePredicateType = "https://slsa.dev/provenance/v1"
	sbomType                = "spdxjson"
	sbomPredicateType       = "https://spdx.dev/Document"
	// provenanceBuildType is the buildType of hack/release.sh's provenance.
	provenanceBuildType = "https://github.com/hookrun/hookrun/blob/main/docs/operations.md#provenance"
)

// statement is an in-toto statement, as cosign verify-attestation prints it
// (the payload of a DSSE envelope).
type statement struct {
	Type          string `json:"_type"`
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	Predicate json.RawMessage `json:"predicate"`
}

// provenance is the SLSA v1 provenance predicate hack/release.sh writes.
type provenance struct {
	BuildDefinition struct {
		BuildType            string            `json:"buildType"`
		ExternalParameters   map[string]string `json:"externalParameters"`
		ResolvedDependencies []struct {
			URI         string            `json:"uri"`
			Name        string            `json:"name"`
			Digest      map[string]string `json:"digest"`
			Annotations map[string]any    `json:"annotations"`
		} `json:"resolvedDependencies"`
	} `json:"buildDefinition"`
	RunDetails struct {
		Builder struct {
			ID string `json:"id"`
		} `json:"builder"`
		Metadata struct {
			StartedOn  time.Time `json:"startedOn"`
			FinishedOn time.Time `json:"finishedOn"`
		} `json:"metadata"`
	} `json:"runDetails"`
}

// verifyAttestation runs cosign verify-attestation of the attestations of
// type typ on ref with the public key (the release's are not in the
// transparency log) and returns the statements they carry.
func verifyAttestation(t *testing.T, key, typ, ref string) ([]statement, error) {
	t.Helper()
	out, err := command(t, tool(t, "COSIGN"), "verify-attestation", "--key", key, "--type", typ, "--insecure-ignore-tlog=true", ref)
	if err != nil {
		return nil, err
	}
	var statements []statement
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var envelope struct {
			PayloadType string `json:"payloadType"`
			Payload     []byte `json:"payload"`
		}
		if err := json.Unmarshal(line, &envelope); err != nil {
			t.Fatalf("cosign verify-attestation %s: %v\n%.300s", ref, err, line)
		}
		var s statement
		if err := json.Unmarshal(envelope.Payload, &s); err != nil {
			t.Fatalf("cosign verify-attestation %s: the payload: %v", ref, err)
		}
		statements = append(statements, s)
	}
	return statements, nil
}

// attested is the one statement verified for ref, about ref's digest, whose
// attestations are at the tag sha256-<hex>.att of its repository.
func attested(t *testing.T, r release, typ, ref string) statement {
	t.Helper()
	statements, err := verifyAttestation(t, r.key, typ, ref)
	if err != nil {
		t.Fatalf("with the release key: %v", err)
	}
	if len(statements) != 1 {
		t.Fatalf("%s: %d %s attestations, want one", ref, len(statements), typ)
	}
	s := statements[0]
	repo, digest, _ := strings.Cut(ref, "@")
	if len(s.Subject) != 1 || "sha256:"+s.Subject[0].Digest["sha256"] != digest || s.Subject[0].Name != repo {
		t.Errorf("%s: the %s attestation is about %+v, want %s", ref, typ, s.Subject, ref)
	}
	// Where docs/operations.md says the attestations are: cosign's tag.
	var m manifest
	crane(t, &m, "manifest", repo+":"+strings.Replace(digest, ":", "-", 1)+".att")
	return s
}

// git runs git in the checkout the release was made from.
func git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = testenv.Root()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// Each image's index and platform images carry a SLSA v1 provenance
// attestation that verifies with the release key (and not with another): its
// subject is the image's digest, and it names the version and registry of
// make release, the commit of this checkout (and whether it had uncommitted
// changes), the base image by digest and who built it.
func TestProvenanceAttestations(t *testing.T) {
	r := theRelease(t)
	commit := git(t, "rev-parse", "HEAD")
	dirty := git(t, "status", "--porcelain") != ""
	baseName, baseDigest, _ := strings.Cut(r.base, "@sha256:")
	for _, img := range r.images() {
		index := img.ref(t, r)
		refs := []string{index}
		for _, d := range platformDigests(t, index) {
			refs = append(refs, img.repo+"@"+d)
		}
		for _, ref := range refs {
			t.Run(img.name+"@"+ref[strings.LastIndex(ref, ":")+1:][:12], func(t *testing.T) {
				s := attested(t, r, provenanceType, ref)
				if s.PredicateType != provenancePredicateType {
					t.Errorf("predicateType %s, want %s", s.PredicateType, provenancePredicateType)
				}
				var p provenance
				if err := json.Unmarshal(s.Predicate, &p); err != nil {
					t.Fatal(err)
				}
				def := p.BuildDefinition
				if def.BuildType != provenanceBuildType {
					t.Errorf("buildType %s, want %s", def.BuildType, provenanceBuildType)
				}
				if want := map[string]string{"version": r.version, "registry": r.registry}; !reflect.DeepEqual(def.ExternalParameters, want) {
					t.Errorf("externalParameters %v, want %v", def.ExternalParameters, want)
				}
				if len(def.ResolvedDependencies) != 2 {
					t.Fatalf("resolvedDependencies %+v, want the source and the base image", def.ResolvedDependencies)
				}
				source, base := def.ResolvedDependencies[0], def.ResolvedDependencies[1]
				if source.Digest["gitCommit"] != commit || (source.Annotations["uncommittedChanges"] == true) != dirty {
					t.Errorf("the source: %+v, want the commit %s (uncommitted changes: %t)", source, commit, dirty)
				}
				if base.URI != "oci://"+baseName || base.Digest["sha256"] != baseDigest {
					t.Errorf("the base image: %+v, want %s", base, r.base)
				}
				if p.RunDetails.Builder.ID != "local" {
					t.Errorf("builder.id %q, want local (a release made outside GitHub Actions)", p.RunDetails.Builder.ID)
				}
				if md := p.RunDetails.Metadata; md.StartedOn.IsZero() || md.FinishedOn.Before(md.StartedOn) || md.FinishedOn.After(time.Now()) {
					t.Errorf("metadata: startedOn %v, finishedOn %v", md.StartedOn, md.FinishedOn)
				}
			})
		}
		if _, err := verifyAttestation(t, r.otherKey, provenanceType, index); err == nil || !strings.Contains(err.Error(), "no matching attestations") {
			t.Errorf("%s: the provenance verified with another key: %v", index, err)
		}
	}
}

// Each image's index and platform images carry their SBOM (the document of
// dist) as an SPDX attestation that verifies with the release key, and not
// with another.
func TestSBOMAttestations(t *testing.T) {
	r := theRelease(t)
	for _, img := range r.images() {
		index := img.ref(t, r)
		files := map[string]string{index: img.sbomFile("index")}
		for p, d := range platformDigests(t, index) {
			files[img.repo+"@"+d] = img.sbomFile(p)
		}
		for ref, file := range files {
			t.Run(strings.TrimSuffix(file, ".spdx.json"), func(t *testing.T) {
				s := attested(t, r, sbomType, ref)
				if s.PredicateType != sbomPredicateType {
					t.Errorf("predicateType %s, want %s", s.PredicateType, sbomPredicateType)
				}
				var got, want any
				if err := json.Unmarshal(s.Predicate, &got); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(distFile(t, r, file), &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("the attested SBOM is not dist/%s", file)
				}
			})
		}
		if _, err := verifyAttestation(t, r.otherKey, sbomType, index); err == nil || !strings.Contains(err.Error(), "no matching attestations") {
			t.Errorf("%s: the SBOM verified with another key: %v", index, err)
		}
	}
}
