#!/usr/bin/env bash
# make test-release: runs `make release` against an OCI registry on loopback
# (crane's, go-containerregistry's registry) with a throwaway cosign key, then
# verifies what it published and wrote with the Go tests of test/release.
# No network: the image's base is a stand-in pushed to that registry first
# (linux/amd64 and linux/arm64, /etc/passwd naming the nonroot user 65532 and
# /tmp, as distroless static:nonroot has), the signatures stay out of the
# transparency log, and the chart is dry-run and install.yaml, crds.yaml and
# demo-agent.yaml applied on a kube-apiserver of bin/k8s the tests start.
#
# Tools from the Makefile: KO, COSIGN, CRANE, HELM, K8S_VERSION (and
# KUBEBUILDER_ASSETS). The work directory is removed when the tests pass and
# kept, with the registry's log, when they fail.
set -euo pipefail
: "${KO:?}" "${COSIGN:?}" "${CRANE:?}" "${HELM:?}" "${K8S_VERSION:?}" "${KUBEBUILDER_ASSETS:?}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
start=$(date +%s)

work=$(mktemp -d "${TMPDIR:-/tmp}/hookrun-test-release.XXXXXX")
registry_pid=
passed=false
cleanup() {
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  if $passed; then rm -rf "$work"; else echo "test-release: failed; its files are in $work" >&2; fi
}
trap cleanup EXIT

# The registry, on a free loopback port; it logs the port it chose.
mkdir -p "$work/registry"
"$CRANE" registry serve --address 127.0.0.1:0 --disk "$work/registry" 2>"$work/registry.log" &
registry_pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")
  [ -n "$port" ] && break
  kill -0 "$registry_pid" 2>/dev/null || { cat "$work/registry.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "test-release: the registry did not start" >&2; cat "$work/registry.log" >&2; exit 1; }
registry=127.0.0.1:$port
echo "test-release: registry at $registry"

# The stand-in base: one layer, a config per platform with the nonroot user.
mkdir -p "$work/base/etc" "$work/base/tmp"
chmod 1777 "$work/base/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$work/base/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$work/base/etc/group"
tar -C "$work/base" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$work/base.tar" etc tmp
"$CRANE" append --oci-empty-base -f "$work/base.tar" -t "$registry/base:layer" >/dev/null
for arch in amd64 arm64; do
  "$CRANE" mutate "$registry/base:layer" --set-platform "linux/$arch" --user 65532:65532 -t "$registry/base:$arch" >/dev/null
done
"$CRANE" index append -m "$registry/base:amd64" -m "$registry/base:arm64" -t "$registry/base:nonroot" >/dev/null
base=$registry/base@$("$CRANE" digest "$registry/base:nonroot")

# A throwaway key pair to sign with, and another that must not verify.
export COSIGN_PASSWORD=test-release
(cd "$work" && "$COSIGN" generate-key-pair --output-key-prefix release >/dev/null)
(cd "$work" && "$COSIGN" generate-key-pair --output-key-prefix other >/dev/null)

# The release of the chart's version, as committed.
version=v$(sed -n 's/^version: *//p' charts/hookrun/Chart.yaml)
release_start=$(date +%s)
KO_DEFAULTBASEIMAGE="$registry/base:nonroot" make --no-print-directory release VERSION="$version" REGISTRY="$registry/hookrun" DIST="$work/dist" \
  COSIGN_KEY="$work/release.key" COSIGN_TLOG_UPLOAD=false \
  KO="$KO" COSIGN="$COSIGN" CRANE="$CRANE" HELM="$HELM" K8S_VERSION="$K8S_VERSION"
release_seconds=$(($(date +%s) - release_start))

RELEASE_TEST_DIST=$work/dist RELEASE_TEST_REGISTRY=$registry/hookrun RELEASE_TEST_VERSION=$version \
  RELEASE_TEST_BASE=$base RELEASE_TEST_KEY=$work/release.pub RELEASE_TEST_OTHER_KEY=$work/other.pub \
  KO="$KO" COSIGN="$COSIGN" CRANE="$CRANE" HELM="$HELM" K8S_VERSION="$K8S_VERSION" \
  go test -count=1 -timeout 20m ./test/release/ -v ${RELEASE_TEST_RUN:+-run "$RELEASE_TEST_RUN"}
passed=true
echo "test-release: passed in $(($(date +%s) - start))s (make release: ${release_seconds}s)"
