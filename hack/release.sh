#!/usr/bin/env bash
# Builds, publishes and signs a release of hookrun (DESIGN section 11). `make
# release VERSION=vX.Y.Z REGISTRY=host/path` runs it with the pinned tools of
# bin/ (KO, COSIGN, CRANE, HELM; K8S_VERSION is the Kubernetes version
# dist/install.yaml is rendered for). No Docker: every step is a Go tool.
#
#   REGISTRY/hookrun:X.Y.Z (and :vX.Y.Z)  the image, linux/amd64 and linux/arm64,
#                                        an SPDX SBOM attached to the index and
#                                        to each platform's image (ko), signed
#   REGISTRY/hookrun-demo-agent:X.Y.Z    the demo agent's image (and :vX.Y.Z),
#                                        built the same way, signed
#   (both images)                        cosign attestations on each index and
#                                        platform image: a SLSA v1 provenance
#                                        (slsaprovenance1) and its SPDX SBOM
#                                        (spdxjson), signed as the images are
#   oci://REGISTRY/charts/hookrun X.Y.Z  the chart, signed
#   DIST/                                install.yaml, crds.yaml,
#                                        demo-agent.yaml, the chart archive,
#                                        the SBOMs, the kubectl plugin's krew
#                                        archives and manifest (hookrun.yaml),
#                                        images.txt (hookrun's image, then the
#                                        demo agent's, by digest), chart.txt,
#                                        checksums.txt,
#                                        checksums.txt.sigstore.json
#
# Signing: with the key file COSIGN_KEY (cosign reads its password from
# COSIGN_PASSWORD) when it is set, else keyless (Sigstore's OIDC flow; in
# GitHub Actions the workflow's own identity). COSIGN_TLOG_UPLOAD=false leaves
# a key-signed release out of the transparency log (make test-release, which
# has no network).
set -euo pipefail
started_on=$(date -u +%Y-%m-%dT%H:%M:%SZ)
: "${VERSION:?}" "${REGISTRY:?}" "${KO:?}" "${COSIGN:?}" "${CRANE:?}" "${HELM:?}" "${K8S_VERSION:?}"
DIST=${DIST:-dist}
COSIGN_KEY=${COSIGN_KEY:-}
COSIGN_TLOG_UPLOAD=${COSIGN_TLOG_UPLOAD:-true}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "release: $*" >&2; exit 1; }

# The tag is a semantic version with a leading v, as krew requires.
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'
[[ $VERSION =~ $semver ]] || die "VERSION=$VERSION is not vX.Y.Z (a semantic version with a leading v)"
version=${VERSION#v}

# The chart is released as it is committed: Chart.yaml's version and
# appVersion (the image tag the chart installs, and its Artifact Hub images
# annotation) must already be this release's.
chart=charts/hookrun
chart_field() { sed -n "s/^$1: *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" "$chart/Chart.yaml"; }
[ "$(chart_field version)" = "$version" ] && [ "$(chart_field appVersion)" = "$version" ] ||
  die "$chart/Chart.yaml has version $(chart_field version) and appVersion $(chart_field appVersion); a release of $VERSION needs both to be $version (bump them, the images annotation and CHANGELOG.md, then tag)"
grep -q "image: ghcr.io/hookrun/hookrun:$version\$" "$chart/Chart.yaml" ||
  die "the artifacthub.io/images annotation of $chart/Chart.yaml does not name ghcr.io/hookrun/hookrun:$version"

REGISTRY=${REGISTRY%/}
image=$REGISTRY/hookrun
demo_image=$REGISTRY/hookrun-demo-agent
charts=$REGISTRY/charts
# helm, unlike ko, cosign and crane, needs telling that a registry on loopback
# speaks plain HTTP.
helm_http=()
case $REGISTRY in localhost:* | 127.0.0.1:* | \[::1\]:*) helm_http=(--plain-http) ;; esac

# How cosign signs (sign, attest, sign-blob): with the key, or keyless.
signing=()
[ -z "$COSIGN_KEY" ] || signing=(--key "$COSIGN_KEY" --tlog-upload="$COSIGN_TLOG_UPLOAD")
sign() { "$COSIGN" sign --yes "${signing[@]}" "$@"; }
# attest TYPE PREDICATE REF (cosign's predicate types: slsaprovenance1,
# spdxjson); --replace: a release made again leaves one attestation a type.
attest() {
  "$COSIGN" attest --yes "${signing[@]}" --replace --type "$1" --predicate "$2" "$3"
}

case $DIST in "" | / | . | "$root") die "DIST=$DIST: make release empties it; name a directory of its own" ;; esac
rm -rf "$DIST"
mkdir -p "$DIST"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The source: its commit, and whether the checkout holds changes not committed
# (the provenance says so).
commit=$(git rev-parse HEAD 2>/dev/null) || die "the provenance names the source's commit: run make release in a git checkout"
clean=true
[ -z "$(git status --porcelain)" ] || clean=false

# The base image, resolved to one digest for all platforms.
base=${KO_DEFAULTBASEIMAGE:-$(sed -n 's/^defaultBaseImage: *//p' .ko.yaml)}
if [[ $base != *@sha256:* ]]; then
  digest=$("$CRANE" digest "$base")
  name=${base%:*}
  [[ ${base##*/} == *:* ]] || name=$base # no tag
  base=$name@$digest
fi
echo "release: base image $base"

# The images: both platforms, static (CGO_ENABLED=0, .ko.yaml), user 65532,
# an SPDX SBOM per platform and for the index (DIST/<binary>-<platform or
# index>.spdx.json), pushed to REPO with the chart's appVersion (X.Y.Z) and
# the tag (vX.Y.Z); images.txt lists each index by digest, one a line.
# SOURCE_DATE_EPOCH (the commit's time) makes the image's creation date that
# of the source.
# publish REPO IMPORTPATH sets ref to the index, REPO@sha256:...
publish() {
  local repo=$1 path=$2 refs=$tmp/image-refs
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0) \
    KO_DOCKER_REPO=$repo KO_DEFAULTBASEIMAGE=$base VERSION=$VERSION \
    "$KO" build "$path" --bare --platform=linux/amd64,linux/arm64 --image-user=65532:65532 \
    --sbom=spdx --sbom-dir="$DIST" --tags="$version,$VERSION" --image-refs="$refs"
  # ko lists the index and each platform's image; the tag names the index.
  ref=$repo@$("$CRANE" digest "$repo:$version")
  grep -qxF "$ref" "$refs" || die "ko published $(tr '\n' ' ' <"$refs"), not $ref"
  echo "$ref" >>"$DIST/images.txt"
}
publish "$image" .
image_ref=$ref
publish "$demo_image" ./hack/demo-agent
demo_ref=$ref
finished_on=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# The provenance of both images (SLSA v1, https://slsa.dev/provenance/v1): the
# predicate only, cosign adds the subject (the image it attests). It says what
# this script knows: the version and registry it was asked for, the commit of
# the source (and whether the tree had uncommitted changes), the base image
# by digest, who ran it (the workflow in GitHub Actions, else "local") and
# when the images were built.
json() {
  [[ $1 != *[[:cntrl:]]* ]] || die "a value of the provenance holds a control character: $1"
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}
source_uri=
dirty=
$clean || dirty=', "annotations": {"uncommittedChanges": true}'
builder_id=local
invocation=
if [ "${GITHUB_ACTIONS:-}" = true ]; then
  source_uri="\"uri\": $(json "git+$GITHUB_SERVER_URL/$GITHUB_REPOSITORY@$GITHUB_REF"), "
  builder_id=$GITHUB_SERVER_URL/$GITHUB_WORKFLOW_REF
  invocation="\"invocationId\": $(json "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID/attempts/$GITHUB_RUN_ATTEMPT"), "
fi
cat >"$tmp/provenance.json" <<EOF
{
  "buildDefinition": {
    "buildType": "https://github.com/hookrun/hookrun/blob/main/docs/operations.md#provenance",
    "externalParameters": {"version": $(json "$VERSION"), "registry": $(json "$REGISTRY")},
    "resolvedDependencies": [
      {${source_uri}"digest": {"gitCommit": $(json "$commit")}$dirty},
      {"name": "base image", "uri": $(json "oci://${base%@*}"), "digest": {"sha256": $(json "${base##*@sha256:}")}}
    ]
  },
  "runDetails": {
    "builder": {"id": $(json "$builder_id")},
    "metadata": {${invocation}"startedOn": "$started_on", "finishedOn": "$finished_on"}
  }
}
EOF

# Each index is signed and, with it, its platform images; the provenance is
# attested to the index and to each platform image, and each SBOM ko wrote
# (DIST/NAME-index.spdx.json, NAME-linux-amd64.spdx.json, ...; NAME is the
# binary's) to the image it describes.
sign_and_attest() {
  local ref=$1 name=$2 platform platform_ref
  sign --recursive "$ref"
  attest slsaprovenance1 "$tmp/provenance.json" "$ref"
  attest spdxjson "$DIST/$name-index.spdx.json" "$ref"
  for platform in linux/amd64 linux/arm64; do
    platform_ref=${ref%@*}@$("$CRANE" digest --platform "$platform" "$ref")
    attest slsaprovenance1 "$tmp/provenance.json" "$platform_ref"
    attest spdxjson "$DIST/$name-${platform/\//-}.spdx.json" "$platform_ref"
  done
}
sign_and_attest "$image_ref" hookrun
sign_and_attest "$demo_ref" demo-agent

# The chart, as committed, to oci://REGISTRY/charts/hookrun.
"$HELM" package "$chart" --destination "$DIST"
archive=$DIST/hookrun-$version.tgz
"$HELM" push "$archive" "oci://$charts" "${helm_http[@]}" 2>&1 | tee "$tmp/push"
chart_digest=$(sed -n 's/^Digest: *//p' "$tmp/push")
[[ $chart_digest == sha256:* ]] || die "helm push printed no digest"
echo "$charts/hookrun:$version@$chart_digest" >"$DIST/chart.txt"
sign "$charts/hookrun@$chart_digest"

# install.yaml: what the chart installs with default values into
# hookrun-system, the image by digest, in the owner-required mode: a file
# applied without Helm cannot ask the cluster whether it serves
# MutatingAdmissionPolicy, and that mode works on every supported version; publicBaseURL, which the chart
# requires, is a placeholder to replace.
{
  cat <<EOF
# hookrun $VERSION: what \`helm install hookrun oci://$charts/hookrun --version $version\`
# installs into the namespace hookrun-system with default values, rendered for Kubernetes
# ${K8S_VERSION#v}, with the image by digest and the namespace added, in the owner-required mode
# (admission.ownerDefaulting=Required: every WebhookEndpoint names its spec.owner), which works on
# every supported Kubernetes version; the chart fills the owner in where MutatingAdmissionPolicy
# is served (1.36 and later).
# publicBaseURL is https://hooks.example.com: replace it with the external base URL of your
# receiver (the operator's --public-base-url) before applying.
---
apiVersion: v1
kind: Namespace
metadata:
  name: hookrun-system
EOF
  "$HELM" template hookrun "$archive" --namespace hookrun-system --kube-version "${K8S_VERSION#v}" \
    --set image.repository="$image" --set image.digest="${image_ref#*@}" \
    --set admission.ownerDefaulting=Required \
    --set publicBaseURL=https://hooks.example.com
} >"$DIST/install.yaml"

# crds.yaml: the CRDs as generated (config/crd/bases; the chart's are the same
# with Helm's annotations), for clusters that install them apart from the chart.
{
  cat <<EOF
# hookrun $VERSION: its CustomResourceDefinitions, as the chart and install.yaml install them but
# for Helm's annotations. For clusters that manage CRDs apart from hookrun (then install the chart
# with crds.enabled=false), or to run dist/demo-agent.yaml's Agent:
#   kubectl apply --server-side -f crds.yaml
EOF
  for f in config/crd/bases/*.yaml; do
    [ "$(head -n 1 "$f")" = --- ] || echo ---
    cat "$f"
  done
} >"$DIST/crds.yaml"

# demo-agent.yaml: config/demo-agent with the demo agent's image by digest.
placeholder=ko://github.com/hookrun/hookrun/hack/demo-agent
demo_manifest=config/demo-agent/demo-agent.yaml
[ "$(grep -cxF "          image: $placeholder" "$demo_manifest")" = 1 ] || die "$demo_manifest names its image other than once as $placeholder"
{
  echo "# hookrun $VERSION: the demo agent, its image $demo_ref."
  sed "s|image: $placeholder\$|image: $demo_ref|" "$demo_manifest"
} >"$DIST/demo-agent.yaml"

# The kubectl plugin: a krew archive per platform and the krew manifest.
go run ./hack/kubectl-hookrun/release -version "$VERSION" -out "$DIST"

(cd "$DIST" && find . -maxdepth 1 -type f ! -name checksums.txt -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >checksums.txt)
# checksums.txt signed as the image is, so that every file it lists is
# covered by the release's identity: the signature (and, keyless, the
# certificate) in one bundle, verified with cosign verify-blob.
"$COSIGN" sign-blob --yes "${signing[@]}" --bundle "$DIST/checksums.txt.sigstore.json" "$DIST/checksums.txt"
echo "release: $VERSION published: $image_ref, $demo_ref, oci://$charts/hookrun $version; files in $DIST:"
ls -l "$DIST"
