#!/usr/bin/env bash
# Installs, from the OS's packages, the container runtime a node of
# make test-node runs: containerd, runc, the CNI plugins (bridge,
# host-local, loopback, portmap), iptables and conntrack, and redis-server
# (the rate-limit store test/node's receivers share). Debian's packages
# (bookworm): containerd 1.6.20, runc 1.1.5, containernetworking-plugins
# 1.1.1. Needs root; does nothing when everything is there. The services are
# not started: make test-node starts its own containerd, with a
# configuration, state and socket of its own, and stops it.
set -euo pipefail

need=()
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v iptables >/dev/null || need+=(iptables)
command -v conntrack >/dev/null || need+=(conntrack)
command -v ip >/dev/null || need+=(iproute2)
command -v openssl >/dev/null || need+=(openssl)
# The store the node's receivers share in test/node (run on the host).
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -eq 0 ]; then
  echo "node runtime: containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}'), CNI plugins in /usr/lib/cni: installed"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "install-runtime: installing ${need[*]} needs root" >&2; exit 1; }
echo "node runtime: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: containerd recommends nothing the node needs, and
# the package's service is not wanted (policy-rc.d keeps it from starting
# where a service manager runs).
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian's containerd package starts its service where systemd runs: the
# node's own containerd uses its own socket, so the two never meet, but a
# stopped one costs nothing.
if command -v systemctl >/dev/null && systemctl is-active --quiet containerd 2>/dev/null; then
  systemctl stop containerd || true
fi
echo "node runtime: containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}') installed"
