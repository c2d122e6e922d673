#!/usr/bin/env bash
# Builds, publishes and signs a release of hookrun (DESIGN section 11). `make
# release VERSION=vX.Y.Z REGISTRY=host/path` runs it with the pinned tools of
# bin/ (KO, COSIGN, CRANE, HELM; K8S_VERSION is the Kubernetes version
# dist/install.yaml is rendered for). No Docker: every step is a Go tool.
#
#   REGISTRY/hookrun:X.Y.Z (and :vX.Y.Z)  the image, linux/amd64 and linux/arm64,
#                                        an SPDX SBOM attached to the index and
#                                        to each platform's image (ko), signed
#   oci://REGISTRY/charts/hookrun X.Y.Z  the chart, signed
#   DIST/                                install.yaml, the chart archive, the
#                                        SBOMs, the kubectl plugin's krew
#                                        archives and manifest (hookrun.yaml),
#                                        images.txt, chart.txt, checksums.txt,
#                                        checksums.txt.sigstore.json
#
# Signing: with the key file COSIGN_KEY (cosign reads its password from
# COSIGN_PASSWORD) when it is set, else keyless (Sigstore's OIDC flow; in
# GitHub Actions the workflow's own identity). COSIGN_TLOG_UPLOAD=false leaves
# a key-signed release out of the transparency log (make test-release, which
# has no network).
set -euo pipefail
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
charts=$REGISTRY/charts
# helm, unlike ko, cosign and crane, needs telling that a registry on loopback
# speaks plain HTTP.
helm_http=()
case $REGISTRY in localhost:* | 127.0.0.1:* | \[::1\]:*) helm_http=(--plain-http) ;; esac

sign() {
  if [ -n "$COSIGN_KEY" ]; then
    "$COSIGN" sign --yes --key "$COSIGN_KEY" --tlog-upload="$COSIGN_TLOG_UPLOAD" "$@"
  else
    "$COSIGN" sign --yes "$@"
  fi
}

case $DIST in "" | / | . | "$root") die "DIST=$DIST: make release empties it; name a directory of its own" ;; esac
rm -rf "$DIST"
mkdir -p "$DIST"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The base image, resolved to one digest for all platforms.
base=${KO_DEFAULTBASEIMAGE:-$(sed -n 's/^defaultBaseImage: *//p' .ko.yaml)}
if [[ $base != *@sha256:* ]]; then
  digest=$("$CRANE" digest "$base")
  name=${base%:*}
  [[ ${base##*/} == *:* ]] || name=$base # no tag
  base=$name@$digest
fi
echo "release: base image $base"

# The image: both platforms, static (CGO_ENABLED=0, .ko.yaml), user 65532, an
# SPDX SBOM per platform and for the index, pushed to REGISTRY/hookrun with
# the chart's appVersion (X.Y.Z) and the tag (vX.Y.Z). SOURCE_DATE_EPOCH (the
# commit's time) makes the image's creation date that of the source.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0) \
  KO_DOCKER_REPO=$image KO_DEFAULTBASEIMAGE=$base VERSION=$VERSION \
  "$KO" build . --bare --platform=linux/amd64,linux/arm64 --image-user=65532:65532 \
  --sbom=spdx --sbom-dir="$DIST" --tags="$version,$VERSION" --image-refs="$tmp/image-refs"
# ko lists the index and each platform's image; the tag names the index.
image_ref=$image@$("$CRANE" digest "$image:$version")
grep -qxF "$image_ref" "$tmp/image-refs" || die "ko published $(tr '\n' ' ' <"$tmp/image-refs"), not $image_ref"
echo "$image_ref" >"$DIST/images.txt"
# The index, and each platform's image with it.
sign --recursive "$image_ref"

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

# The kubectl plugin: a krew archive per platform and the krew manifest.
go run ./hack/kubectl-hookrun/release -version "$VERSION" -out "$DIST"

(cd "$DIST" && find . -maxdepth 1 -type f ! -name checksums.txt -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >checksums.txt)
# checksums.txt signed as the image is, so that every file it lists is
# covered by the release's identity: the signature (and, keyless, the
# certificate) in one bundle, verified with cosign verify-blob.
if [ -n "$COSIGN_KEY" ]; then
  "$COSIGN" sign-blob --yes --key "$COSIGN_KEY" --tlog-upload="$COSIGN_TLOG_UPLOAD" --bundle "$DIST/checksums.txt.sigstore.json" "$DIST/checksums.txt"
else
  "$COSIGN" sign-blob --yes --bundle "$DIST/checksums.txt.sigstore.json" "$DIST/checksums.txt"
fi
echo "release: $VERSION published: $image_ref, oci://$charts/hookrun $version; files in $DIST:"
ls -l "$DIST"
