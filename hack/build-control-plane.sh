#!/usr/bin/env bash
# Builds a local Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, kubectl) from the Go module proxy, so envtest, the
# e2e suite and `make dev` run against a real API server on a machine with no
# cluster and no container runtime.
#
# Usage: hack/build-control-plane.sh [OUT_DIR]
#   OUT_DIR defaults to bin/k8s/<K8S_VERSION>. Binaries already present are
#   not rebuilt, so the second run is instant.
#
# Environment: K8S_VERSION (default v1.37.0), ETCD_VERSION (default v3.6.6).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.0}
ETCD_VERSION=${ETCD_VERSION:-v3.6.6}
# Staging modules (k8s.io/api, k8s.io/client-go, ...) are published as v0.<minor>.<patch>.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-"$root/bin/k8s/$K8S_VERSION"}
mkdir -p "$out"
out=$(cd "$out" && pwd)

want=(etcd kube-apiserver kube-controller-manager kubectl)
missing=()
for b in "${want[@]}"; do [[ -x "$out/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "control plane $K8S_VERSION (etcd $ETCD_VERSION) cached in $out" >&2
  exit 0
fi
echo "building ${missing[*]} into $out (cold: several minutes)" >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0

in_list() { local x=$1; shift; for y in "$@"; do [[ $x == "$y" ]] && return 0; done; return 1; }

# --- Kubernetes: a throwaway module that requires k8s.io/kubernetes and pins
# every staging module its go.mod replaces with ./staging/... to the published
# staging version.
if in_list kube-apiserver "${missing[@]}" || in_list kube-controller-manager "${missing[@]}" || in_list kubectl "${missing[@]}"; then
  k8s="$work/k8s"
  mkdir -p "$k8s/kube-apiserver" "$k8s/kube-controller-manager" "$k8s/kubectl"
  gomod=$(cd "$k8s" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module hookrun.local/controlplane"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//')"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$STAGING_VERSION"'#p' "$gomod"
  } >"$k8s/go.mod"

  cat >"$k8s/kube-apiserver/main.go" <<'GO'
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() { os.Exit(cli.Run(app.NewAPIServerCommand())) }
GO
  cat >"$k8s/kube-controller-manager/main.go" <<'GO'
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() { os.Exit(cli.Run(app.NewControllerManagerCommand())) }
GO
  cat >"$k8s/kubectl/main.go" <<'GO'
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
	os.Exit(0)
}
GO
  (cd "$k8s" && go mod tidy >/dev/null)
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  for b in kube-apiserver kube-controller-manager kubectl; do
    if in_list "$b" "${missing[@]}"; then
      echo "  go build $b" >&2
      (cd "$k8s" && go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "./$b") && mv "$out/$b.tmp" "$out/$b"
    fi
  done
fi

# --- etcd: its own module, so its dependency graph never meets Kubernetes'.
if in_list etcd "${missing[@]}"; then
  e="$work/etcd"
  mkdir -p "$e"
  cat >"$e/go.mod" <<GOMOD
module hookrun.local/etcd

go $(go env GOVERSION | sed 's/^go//')

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
  cat >"$e/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$e" && go mod tidy >/dev/null)
  echo "  go build etcd" >&2
  (cd "$e" && go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" .) && mv "$out/etcd.tmp" "$out/etcd"
fi

echo "control plane $K8S_VERSION (etcd $ETCD_VERSION) built into $out" >&2
