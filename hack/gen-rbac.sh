#!/usr/bin/env bash
# Generates the operator's and the receiver's ClusterRoles from the
# kubebuilder RBAC markers in controllers/ and receiver/ into config/rbac as
# plain manifests (config/rbac applies as it is: kubectl apply -f config/rbac).
set -euo pipefail
controller_gen=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$controller_gen" rbac:roleName=hookrun-operator paths="./controllers/..." output:rbac:artifacts:config="$tmp/operator"
"$controller_gen" rbac:roleName=hookrun-receiver paths="./receiver/..." output:rbac:artifacts:config="$tmp/receiver"
mkdir -p config/rbac
cp "$tmp/operator/role.yaml" config/rbac/operator_role.yaml
cp "$tmp/receiver/role.yaml" config/rbac/receiver_role.yaml
