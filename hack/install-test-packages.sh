#!/usr/bin/env bash
# Installs, from the OS's packages, the programs some of make test's specs
# run: redis-server (Debian's package, Redis 7.0) for the receiver's shared
# rate-limit store, and chromium (Debian's package) for the browser specs of
# kubectl hookrun ui. make test runs those specs when the program is on PATH
# and says in one line when it is not. Needs root; does nothing when
# everything is there. The package's own service is not wanted: the tests
# start their own servers on loopback.
set -euo pipefail

need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v chromium >/dev/null || need+=(chromium)
installed() { echo "test packages: $(redis-server --version | awk '{print $3}'), $(chromium --version 2>/dev/null | head -n1) installed"; }
if [ ${#need[@]} -eq 0 ]; then
  installed
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "install-test-packages: installing ${need[*]} needs root" >&2; exit 1; }
echo "test packages: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then
  systemctl stop redis-server || true
fi
installed
