#!/usr/bin/env bash
# make test-node: one real node on this machine (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, containerd, kubelet, kube-proxy,
# CoreDNS), the release of `make release` installed on it as a user installs
# it, then the Go tests of test/node (DESIGN section 12).
#
# Nothing is pulled from outside: every image the node runs is built here
# from Go source and pushed to an OCI registry on loopback (crane's,
# go-containerregistry's), from which containerd pulls over plain HTTP:
# hookrun and the demo agent (make release, ko), the pod sandbox
# (hack/node/pause), CoreDNS (hack/node/build-coredns.sh) and their base
# (CA certificates, /etc/passwd with user 65532, /tmp).
#
# The node's network is its own: a bridge (hookrun0, POD_CIDR) that the CNI
# bridge plugin attaches pods to, Services in SERVICE_CIDR, kube-proxy in
# iptables mode. The API server listens on the bridge's address. Everything
# it starts is stopped, by PID, when it ends, whether it passed or not: the
# pods' processes (by the node's own cgroup), the mounts under its work
# directory, the network namespaces of its pods, kube-proxy's iptables
# chains, the bridge.
#
# Needs root, and the runtime of hack/node/install-runtime.sh. Tools from the
# Makefile: KO, COSIGN, CRANE, HELM, K8S_VERSION, K8S_BIN (control plane and
# node binaries), COREDNS (the binary).
set -euo pipefail
: "${KO:?}" "${COSIGN:?}" "${CRANE:?}" "${HELM:?}" "${K8S_VERSION:?}" "${K8S_BIN:?}" "${COREDNS:?}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
start=$(date +%s)

POD_CIDR=${POD_CIDR:-10.213.0.0/24}
NODE_IP=${NODE_IP:-10.213.0.1}
SERVICE_CIDR=${SERVICE_CIDR:-10.214.0.0/24}
API_SERVICE_IP=${API_SERVICE_IP:-10.214.0.1}
CLUSTER_DNS_IP=${CLUSTER_DNS_IP:-10.214.0.10}
BRIDGE=${BRIDGE:-hookrun0}
NODE_NAME=hookrun-node
ETCD_PORT=${ETCD_PORT:-32379}

die() { echo "test-node: $*" >&2; exit 1; }
log() { echo "test-node: $(date -u +%T) $*"; }

[ "$(id -u)" = 0 ] || die "needs root (a kubelet, containerd and iptables); run it as root"
for tool in containerd runc iptables conntrack ip openssl redis-server; do
  command -v "$tool" >/dev/null || die "$tool is missing: run hack/node/install-runtime.sh (as root) first"
done
[ -x /usr/lib/cni/bridge ] || die "the CNI plugins are missing: run hack/node/install-runtime.sh (as root) first"
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
  [ -x "$K8S_BIN/$b" ] || die "$K8S_BIN/$b is missing: make control-plane node-binaries"
done
# A bridge of this name left by a run that was killed before it could stop
# (no node of this script runs) is removed.
if ip link show "$BRIDGE" >/dev/null 2>&1 && ! pgrep -f "kubelet --config .*/hookrun-test-node\." >/dev/null; then
  echo "test-node: removing the bridge $BRIDGE a killed run left" >&2
  ip link delete "$BRIDGE"
fi
# The node's ranges must meet nothing this machine already routes.
for cidr in "$POD_CIDR" "$SERVICE_CIDR"; do
  if [ -n "$(ip route show to match "${cidr%/*}" | grep -v '^default')" ] || ip link show "$BRIDGE" >/dev/null 2>&1; then
    die "$cidr or the bridge $BRIDGE is in use on this machine (ip route; ip link): set POD_CIDR, NODE_IP, SERVICE_CIDR, API_SERVICE_IP, CLUSTER_DNS_IP, BRIDGE"
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/hookrun-test-node.XXXXXX")
chmod 0755 "$work"
mkdir -p "$work/logs" "$work/pki"
cgroup=hookrun-node-$$
pids=()
passed=false
netns_before=$(ip netns list 2>/dev/null | awk '{print $1}' | sort)

# stop ends what this script started, newest first, and removes what the
# node left on the machine.
stop() {
  # Only the script itself, once (a subshell may inherit the trap).
  [ "$BASHPID" = "$$" ] && [ -z "${stopped:-}" ] || return 0
  stopped=1
  set +e
  log "stopping the node"
  # kubelet first, so it restarts no container; then every process of the
  # node's pods (cgroup v1: each hierarchy has the node's root).
  [ -n "${release_pid:-}" ] && kill -- "-$release_pid" 2>/dev/null
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  for hierarchy in /sys/fs/cgroup/*/; do
    [ -d "$hierarchy$cgroup" ] || continue
    find "$hierarchy$cgroup" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null
  done
  # containerd's shims outlive containerd: they are named by its socket.
  pkill -9 -f "containerd-shim.*$work" 2>/dev/null
  sleep 0.5
  for hierarchy in /sys/fs/cgroup/*/; do
    [ -d "$hierarchy$cgroup" ] && find "$hierarchy$cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  # Mounts under the work directory (volumes, rootfs, sandboxes), deepest first.
  awk -v w="$work" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  # The kubelet's links to its containers' logs (which are in the work
  # directory).
  find /var/log/containers -maxdepth 1 -type l -lname "$work/*" -delete 2>/dev/null
  # The pods' network namespaces: those that were not there before.
  comm -13 <(echo "$netns_before") <(ip netns list 2>/dev/null | awk '{print $1}' | sort) | xargs -r -n1 ip netns delete 2>/dev/null
  [ -x "$K8S_BIN/kube-proxy" ] && "$K8S_BIN/kube-proxy" --cleanup >"$work/logs/kube-proxy-cleanup.log" 2>&1
  # What kube-proxy's cleanup leaves: the kubelet's chains (KUBE-FIREWALL,
  # KUBE-KUBELET-CANARY), and portmap's (CNI-HOSTPORT-*) when a pod had a
  # host port.
  for ipt in iptables ip6tables; do
    for table in filter nat mangle; do
      "$ipt" -t "$table" -S 2>/dev/null | grep -E -- '^-A .* -j (KUBE|CNI)-' | sed 's/^-A/-D/' | while read -r rule; do
        eval "$ipt -t $table $rule"
      done
      for chain in $("$ipt" -t "$table" -S 2>/dev/null | awk '/^-N (KUBE|CNI)-/{print $2}'); do
        "$ipt" -t "$table" -F "$chain"
      done
      for chain in $("$ipt" -t "$table" -S 2>/dev/null | awk '/^-N (KUBE|CNI)-/{print $2}'); do
        "$ipt" -t "$table" -X "$chain"
      done
    done
  done 2>/dev/null
  ip link delete "$BRIDGE" 2>/dev/null
  if $passed; then
    rm -rf "$work"
  else
    echo "test-node: failed; the node's logs are in $work/logs" >&2
  fi
}
trap stop EXIT

# run NAME ARGS... starts a process of the node in the background.
run() {
  local name=$1
  shift
  "$@" >"$work/logs/$name.log" 2>&1 &
  pids+=($!)
}

# wait_for WHAT SECONDS COMMAND... retries COMMAND until it succeeds.
wait_for() {
  local what=$1 seconds=$2
  shift 2
  for _ in $(seq $((seconds * 2))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  die "$what did not become ready in ${seconds}s (logs: $work/logs)"
}

## The registry and the images.
mkdir -p "$work/registry"
run registry "$CRANE" registry serve --address 127.0.0.1:0 --disk "$work/registry"
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/logs/registry.log" 2>/dev/null || true)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || die "the registry did not start: $(cat "$work/logs/registry.log")"
registry=127.0.0.1:$port
log "registry at $registry"

# The base: CA certificates (the OS's), /etc/passwd naming user 65532, /tmp;
# for both platforms, as the release builds both.
mkdir -p "$work/base/etc/ssl/certs" "$work/base/tmp"
chmod 1777 "$work/base/tmp"
cp /etc/ssl/certs/ca-certificates.crt "$work/base/etc/ssl/certs/ca-certificates.crt" 2>/dev/null ||
  die "/etc/ssl/certs/ca-certificates.crt is missing (Debian's ca-certificates)"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$work/base/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$work/base/etc/group"
tar -C "$work/base" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$work/base.tar" etc tmp
{
  "$CRANE" append --oci-empty-base -f "$work/base.tar" -t "$registry/base:layer" >/dev/null
  for arch in amd64 arm64; do
    "$CRANE" mutate "$registry/base:layer" --set-platform "linux/$arch" --user 65532:65532 -t "$registry/base:$arch" >/dev/null
  done
  "$CRANE" index append -m "$registry/base:amd64" -m "$registry/base:arm64" -t "$registry/base:nonroot" >/dev/null
} 2>>"$work/logs/images.log"

# image NAME BINARY ENTRYPOINT...: BINARY on the base (linux/amd64), as NAME.
image() {
  local name=$1 binary=$2
  shift 2
  local layer=$work/images/$name
  mkdir -p "$layer/usr/local/bin"
  cp "$binary" "$layer/usr/local/bin/"
  tar -C "$layer" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$layer.tar" usr
  "$CRANE" append -b "$registry/base:amd64" -f "$layer.tar" -t "$registry/$name:layer" >/dev/null 2>>"$work/logs/images.log"
  local entrypoint
  entrypoint=$(IFS=,; echo "$*")
  "$CRANE" mutate "$registry/$name:layer" --entrypoint "$entrypoint" -t "$registry/$name:node" >/dev/null 2>>"$work/logs/images.log"
  echo "$registry/$name@$("$CRANE" digest "$registry/$name:node")"
}
mkdir -p "$work/images"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/images/pause-bin/pause" ./hack/node/pause
pause_image=$(image pause "$work/images/pause-bin/pause" /usr/local/bin/pause)
coredns_image=$(image coredns "$COREDNS" "/usr/local/bin/$(basename "$COREDNS")")
log "images: $pause_image, $coredns_image"

## The release, as make test-release makes it (signed with a throwaway key),
## and a second build of another version for the upgrade: built while the
## node starts, awaited before the tests.
export COSIGN_PASSWORD=test-node
(cd "$work" && "$COSIGN" generate-key-pair --output-key-prefix release >/dev/null 2>&1)
version=v$(sed -n 's/^version: *//p' charts/hookrun/Chart.yaml)
next=${version#v}-next.1
release() {
  set -e
  local release_start
  release_start=$(date +%s)
  KO_DEFAULTBASEIMAGE="$registry/base:nonroot" make --no-print-directory release VERSION="$version" REGISTRY="$registry/hookrun" DIST="$work/dist" \
    COSIGN_KEY="$work/release.key" COSIGN_TLOG_UPLOAD=false \
    KO="$KO" COSIGN="$COSIGN" CRANE="$CRANE" HELM="$HELM" K8S_VERSION="$K8S_VERSION"
  echo "make release $version: $(($(date +%s) - release_start))s"
  # The image (amd64, the node's) and the chart with version and appVersion NEXT.
  KO_DOCKER_REPO="$registry/hookrun/hookrun" KO_DEFAULTBASEIMAGE="$registry/base:nonroot" VERSION="v$next" \
    "$KO" build . --bare --platform=linux/amd64 --image-user=65532:65532 --sbom=none --tags="$next"
  mkdir -p "$work/chart-next"
  cp -r charts/hookrun "$work/chart-next/"
  sed -i "s/^version: .*/version: $next/; s/^appVersion: .*/appVersion: \"$next\"/" "$work/chart-next/hookrun/Chart.yaml"
  "$HELM" package "$work/chart-next/hookrun" --destination "$work/chart-next"
  "$HELM" push "$work/chart-next/hookrun-$next.tgz" "oci://$registry/hookrun/charts" --plain-http
  echo "second build $next pushed"
}
# In a session of its own, so that stop ends every process it started.
export registry version next work KO COSIGN CRANE HELM K8S_VERSION
setsid bash -c "$(declare -f release); release" >"$work/logs/release.log" 2>&1 &
release_pid=$!

## Certificates: one CA for the API server, its clients and the kubelet.
pki=$work/pki
openssl_quiet() { openssl "$@" 2>/dev/null; }
openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=hookrun-node-ca" -keyout "$pki/ca.key" -out "$pki/ca.crt"
# cert NAME CN O [SANS]
cert() {
  local name=$1 cn=$2 o=$3 sans=${4:-}
  openssl_quiet req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$cn${o:+/O=$o}" \
    -keyout "$pki/$name.key" -out "$pki/$name.csr"
  {
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } >"$pki/$name.ext"
  openssl_quiet x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 \
    -extfile "$pki/$name.ext" -out "$pki/$name.crt"
}
cert apiserver kube-apiserver "" "IP:$NODE_IP,IP:$API_SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
cert admin hookrun-node-admin system:masters
cert controller-manager system:kube-controller-manager ""
cert scheduler system:kube-scheduler ""
cert kubelet "system:node:$NODE_NAME" system:nodes "IP:$NODE_IP,DNS:$NODE_NAME"
cert kube-proxy system:kube-proxy ""
openssl_quiet ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key"
openssl_quiet ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub"

# kubeconfig NAME: NAME's certificate, the API server on the bridge.
kubeconfig() {
  local kc=$work/$1.kubeconfig
  "$K8S_BIN/kubectl" config set-cluster node --server="https://$NODE_IP:6443" --certificate-authority="$pki/ca.crt" --embed-certs --kubeconfig="$kc" >/dev/null
  "$K8S_BIN/kubectl" config set-credentials "$1" --client-certificate="$pki/$1.crt" --client-key="$pki/$1.key" --embed-certs --kubeconfig="$kc" >/dev/null
  "$K8S_BIN/kubectl" config set-context node --cluster=node --user="$1" --kubeconfig="$kc" >/dev/null
  "$K8S_BIN/kubectl" config use-context node --kubeconfig="$kc" >/dev/null
}
for who in admin controller-manager scheduler kubelet kube-proxy; do kubeconfig "$who"; done
export KUBECONFIG=$work/admin.kubeconfig
kubectl() { "$K8S_BIN/kubectl" "$@"; }

## The network: the bridge the API server listens on and pods attach to.
ip link add "$BRIDGE" type bridge
ip addr add "$NODE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
ip link set "$BRIDGE" up
# Services between pods of one bridge: iptables sees bridged packets.
sysctl -qw net.bridge.bridge-nf-call-iptables=1 net.ipv4.ip_forward=1

## The control plane.
run etcd "$K8S_BIN/etcd" --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
  --unsafe-no-fsync
wait_for etcd 30 grep -q "serving client traffic insecurely" "$work/logs/etcd.log"
run kube-apiserver "$K8S_BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port 6443 \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
  --service-cluster-ip-range "$SERVICE_CIDR" --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --cert-dir "$work/apiserver" \
  --kubelet-preferred-address-types InternalIP
wait_for kube-apiserver 90 kubectl get --raw /readyz
run kube-controller-manager "$K8S_BIN/kube-controller-manager" --kubeconfig "$work/controller-manager.kubeconfig" \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --use-service-account-credentials \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --leader-elect=false --secure-port 0 --concurrent-gc-syncs 5
run kube-scheduler "$K8S_BIN/kube-scheduler" --kubeconfig "$work/scheduler.kubeconfig" --leader-elect=false --secure-port 0
log "control plane up"

## containerd, with its own root, state and socket.
cat >"$work/containerd.toml" <<EOF
version = 2
root = "$work/containerd/root"
state = "$work/containerd/state"
[grpc]
  address = "$work/containerd/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$work/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  # Lowering oom_score_adj is refused here, even to root.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$work/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."$registry"]
    endpoint = ["http://$registry"]
EOF
mkdir -p "$work/cni/net.d" "$work/cni/ipam"
cat >"$work/cni/net.d/10-hookrun.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "hookrun-node",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "$work/cni/ipam",
               "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]], "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
run containerd containerd --config "$work/containerd.toml"
wait_for containerd 30 test -S "$work/containerd/containerd.sock"

## The kubelet: cgroup v1 with the cgroupfs driver, under a cgroup of its own.
for hierarchy in /sys/fs/cgroup/*/; do
  [ -f "${hierarchy}cgroup.procs" ] && mkdir -p "$hierarchy$cgroup"
done
# A new cpuset takes no task until it has CPUs and memory nodes.
for f in cpus mems; do
  [ -f "/sys/fs/cgroup/cpuset/$cgroup/cpuset.$f" ] && cat "/sys/fs/cgroup/cpuset/cpuset.$f" >"/sys/fs/cgroup/cpuset/$cgroup/cpuset.$f"
done
printf 'nameserver %s\n' "$NODE_IP" >"$work/resolv.conf"
cat >"$work/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$cgroup
containerRuntimeEndpoint: unix://$work/containerd/containerd.sock
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [$CLUSTER_DNS_IP]
resolvConf: $work/resolv.conf
podLogsDir: $work/pod-logs
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
EOF
run kubelet "$K8S_BIN/kubelet" --config "$work/kubelet.yaml" --kubeconfig "$work/kubelet.kubeconfig" \
  --root-dir "$work/kubelet" --cert-dir "$work/kubelet-pki" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
cat >"$work/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $work/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: {maxPerCore: 0, min: 0}
EOF
run kube-proxy "$K8S_BIN/kube-proxy" --config "$work/kube-proxy.yaml"
wait_for "the node" 120 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
log "node $NODE_NAME Ready"

sed -e "s#COREDNS_IMAGE#$coredns_image#" -e "s#CLUSTER_DNS_IP#$CLUSTER_DNS_IP#" hack/node/manifests/coredns.yaml |
  kubectl apply -f - >/dev/null
wait_for CoreDNS 180 kubectl -n kube-system wait --for=condition=Available deployment/coredns --timeout=1s
log "CoreDNS Available"

log "waiting for the release"
wait "$release_pid" || die "the release failed: $(tail -30 "$work/logs/release.log")"
grep -h "^make release\|^second build" "$work/logs/release.log" | sed 's/^/test-node: /'

export NODE_TEST_WORK=$work NODE_TEST_REGISTRY=$registry NODE_TEST_VERSION=$version NODE_TEST_NEXT_VERSION=$next \
  NODE_TEST_KEY=$work/release.pub NODE_TEST_DIST=$work/dist NODE_TEST_KUBECONFIG=$KUBECONFIG \
  NODE_TEST_CLUSTER_DNS=$CLUSTER_DNS_IP NODE_TEST_LOGS=$work/logs
COSIGN="$COSIGN" HELM="$HELM" KUBECTL="$K8S_BIN/kubectl" \
  go test -count=1 -timeout 40m ./test/node/ -v ${NODE_TEST_RUN:+-run "$NODE_TEST_RUN"}
passed=true
[ -f "$work/figures.txt" ] && sed 's/^/test-node: figure: /' "$work/figures.txt"
log "passed in $(($(date +%s) - start))s"
