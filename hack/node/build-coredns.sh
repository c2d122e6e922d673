#!/usr/bin/env bash
# Builds CoreDNS for make test-node's node from its Go module, with only the
# plugins the node's Corefile names (hack/node/manifests/coredns.yaml), into
# OUT (default bin/node/coredns-<version>), cached. A throwaway module, as
# hack/build-control-plane.sh builds Kubernetes, so CoreDNS's dependencies
# never meet hookrun's.
#
# Environment: COREDNS_VERSION (default v1.15.0).
set -euo pipefail
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-"$root/bin/node/coredns-$COREDNS_VERSION"}
if [ -x "$out" ]; then
  echo "coredns $COREDNS_VERSION cached in $out" >&2
  exit 0
fi
mkdir -p "$(dirname "$out")"
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0
cat >"$work/go.mod" <<GOMOD
module hookrun.local/coredns

go $(go env GOVERSION | sed 's/^go//')

require github.com/coredns/coredns $COREDNS_VERSION
GOMOD
# The plugins register themselves when imported; coremain orders them by
# CoreDNS's own directive list.
cat >"$work/main.go" <<'GO'
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
GO
(cd "$work" && go mod tidy >/dev/null)
echo "  go build coredns $COREDNS_VERSION" >&2
(cd "$work" && go build -trimpath -ldflags "-s -w" -o "$out.tmp" .) && mv "$out.tmp" "$out"
echo "coredns $COREDNS_VERSION built into $out in $(($(date +%s) - start))s" >&2
