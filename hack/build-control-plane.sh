#!/usr/bin/env bash
# Builds a local Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, kubectl) from the Go module proxy, so envtest, the
# e2e suite and `make dev` run against a real API server on a machine with no
# cluster and no container runtime. With --node it builds, instead, what a
# node adds (kube-scheduler, kubelet, kube-proxy: `make node-binaries`, for
# `make test-node`).
#
# Usage: hack/build-control-plane.sh [--node] [OUT_DIR]
#   OUT_DIR defaults to bin/k8s/<K8S_VERSION>. Binaries already present are
#   not rebuilt, so the second run is instant.
#
# Environment: K8S_VERSION (default v1.37.0), ETCD_VERSION (default v3.6.6).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.0}
ETCD_VERSION=${ETCD_VERSION:-v3.6.6}
# Staging modules (k8s.io/api, k8s.io/client-go, ...) are published as v0.<minor>.<patch>.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"

what="control plane"
want=(etcd kube-apiserver kube-controller-manager kubectl)
if [[ ${1:-} == --node ]]; then
  shift
  what="node"
  want=(kube-scheduler kubelet kube-proxy)
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-"$root/bin/k8s/$K8S_VERSION"}
mkdir -p "$out"
out=$(cd "$out" && pwd)

missing=()
for b in "${want[@]}"; do [[ -x "$out/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$what $K8S_VERSION binaries (${want[*]}) cached in $out" >&2
  exit 0
fi
echo "building ${missing[*]} into $out (cold: several minutes)" >&2
start=$(date +%s)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0

# main_of writes the main package of binary $1: its command is $2 (a Go
# expression of package app, imported from $3).
main_of() {
  mkdir -p "$k8s/$1"
  local ctx=
  [[ $2 == *context.* ]] && ctx='"context"'
  cat >"$k8s/$1/main.go" <<GO
package main

import (
	$ctx
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	app "$3"
)

func main() { os.Exit(cli.Run($2)) }
GO
}

# --- Kubernetes: a throwaway module that requires k8s.io/kubernetes and pins
# every staging module its go.mod replaces with ./staging/... to the published
# staging version.
k8s_missing=()
for b in "${missing[@]}"; do [[ $b == etcd ]] || k8s_missing+=("$b"); done
if [[ ${#k8s_missing[@]} -gt 0 ]]; then
  k8s="$work/k8s"
  mkdir -p "$k8s"
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

  for b in "${k8s_missing[@]}"; do
    case $b in
    kube-apiserver) main_of "$b" "app.NewAPIServerCommand()" k8s.io/kubernetes/cmd/kube-apiserver/app ;;
    kube-controller-manager) main_of "$b" "app.NewControllerManagerCommand()" k8s.io/kubernetes/cmd/kube-controller-manager/app ;;
    kube-scheduler) main_of "$b" "app.NewSchedulerCommand()" k8s.io/kubernetes/cmd/kube-scheduler/app ;;
    kubelet) main_of "$b" "app.NewKubeletCommand(context.Background())" k8s.io/kubernetes/cmd/kubelet/app ;;
    kube-proxy) main_of "$b" "app.NewProxyCommand()" k8s.io/kubernetes/cmd/kube-proxy/app ;;
    kubectl)
      mkdir -p "$k8s/kubectl"
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
      ;;
    esac
  done
  (cd "$k8s" && go mod tidy >/dev/null)
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  for b in "${k8s_missing[@]}"; do
    echo "  go build $b" >&2
    (cd "$k8s" && go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "./$b") && mv "$out/$b.tmp" "$out/$b"
  done
fi

# --- etcd: its own module, so its dependency graph never meets Kubernetes'.
if [[ " ${missing[*]} " == *" etcd "* ]]; then
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

echo "$what $K8S_VERSION (${missing[*]}) built into $out in $(($(date +%s) - start))s" >&2
