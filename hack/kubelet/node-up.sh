#!/usr/bin/env bash
# hack/kubelet/node-up.sh — start one real node: containerd (Debian's, CRI plugin on) and the kubelet built by
# hack/kubelet/build.sh, attached to an apiserver (default: the private sandbox hub in .local/kubelet/sandbox),
# and wait for its Node to register and (if it can) become Ready. Part of the issue-43 kubelet experiment.
#
# Why this shape — contained, and removable by hack/kubelet/node-down.sh without guessing:
# - Both daemons run inside one private mount namespace (held by a `sleep` started with `unshare --mount
#   --propagation private`; pid in state/pids/holder.pid). Inside it, state/run is bound over /run (containerd
#   1.6 puts shim sockets and fifos under /run/containerd whatever its config says, and cadvisor looks for
#   /run/containerd/containerd.sock), state/varlog over /var/log (the kubelet's hard-coded /var/log/containers),
#   state/varlib over /var/lib (the device-plugin socket, /var/lib/kubelet/device-plugins/kubelet.sock, is
#   hard-coded and ignores --root-dir), and — unless FAKE_SYSCTLS=0 — six small files over the /proc/sys entries that the kubelet either rewrites
#   (protectKernelDefaults false) or refuses to start over (true): vm.overcommit_memory, vm.panic_on_oom,
#   kernel.panic, kernel.panic_on_oops, kernel.keys.root_maxkeys/maxbytes. The host's values stay as they are.
#   Every mount the kubelet makes for pod volumes lives in that namespace too, so it goes away with it.
# - The node is named `localhost` by default (KL_NODE): the apiserver reaches a kubelet at the node's first
#   address of type Hostname, and `localhost` resolves to 127.0.0.1; --node-ip=127.0.0.1 is refused by the
#   kubelet ("nodeIP can't be loopback address"), and its InternalIP is the host's eth0 address, which we leave alone.
# - No TCP port is fixed: the kubelet's server, its healthz and containerd's CRI streaming server take free
#   ports on 127.0.0.1; readOnlyPort is 0. No CNI bridge, no iptables (makeIPTablesUtilChains false).
# - cgroups: cgroupfs driver, cgroupRoot KL_CGROUP_ROOT (/policy-sync-kubelet-exp), which this script creates
#   in every v1 controller (the kubelet refuses a cgroupRoot that does not exist), cgroupsPerQOS true (so the
#   kubelet makes kubepods/, kubepods/burstable/ and kubepods/besteffort/ under it, and every pod below them;
#   with cgroupsPerQOS false the kubelet passes no cgroup parent at all and containerd puts pods at /k8s.io/<id>,
#   outside any root), enforceNodeAllocatable [] (no limits enforced on kubepods beyond capacity).
# - oom_score_adj: this machine refuses any negative value, even to root (EACCES), so the kubelet's own
#   oomScoreAdj is 0 and containerd's restrict_oom_score_adj clamps the pods' values (pause asks for -998).
# Options (environment): KL_CONTAINERD=debian|v2, KL_KUBECONFIG (client credentials; default the sandbox hub's admin kubeconfig),
# KL_CNI=none|loopback (loopback: a conflist with only the loopback plugin, which makes containerd report
# NetworkReady without making any host interface), KL_KUBELET_AUTH=strict|open (open: anonymous on and
# AlwaysAllow, so that an apiserver without a kubelet client certificate can read logs), FAKE_SYSCTLS=1|0,
# PROTECT_KERNEL_DEFAULTS=true|false (with FAKE_SYSCTLS=1 either is harmless), KL_READY_TIMEOUT (s, 180).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

KL_KUBECONFIG="${KL_KUBECONFIG:-$KL_SANDBOX/kubeconfigs/hub.kubeconfig}"
KL_CNI="${KL_CNI:-none}"
KL_KUBELET_AUTH="${KL_KUBELET_AUTH:-strict}"
FAKE_SYSCTLS="${FAKE_SYSCTLS:-1}"
PROTECT_KERNEL_DEFAULTS="${PROTECT_KERNEL_DEFAULTS:-true}"
KL_READY_TIMEOUT="${KL_READY_TIMEOUT:-180}"
[[ -x "$KL_BIN/kubelet" ]] || { echo "no $KL_BIN/kubelet: run hack/kubelet/build.sh" >&2; exit 1; }
[[ -f "$KL_KUBECONFIG" ]] || { echo "no kubeconfig $KL_KUBECONFIG: start the sandbox (see hack/kubelet/run-all.sh)" >&2; exit 1; }
if [[ -f "$KL_PIDS/holder.pid" ]] && kill -0 "$(cat "$KL_PIDS/holder.pid")" 2>/dev/null; then
  echo "a node is already up (holder pid $(cat "$KL_PIDS/holder.pid")): run hack/kubelet/node-down.sh first" >&2; exit 1
fi
command -v containerd >/dev/null || { echo "containerd missing: apt-get install containerd" >&2; exit 1; }
CD_BIN="$(command -v containerd)"
if [[ "$KL_CONTAINERD" == v2 ]]; then
  CD_BIN="$KL_BIN/containerd2/containerd"
  [[ -x "$CD_BIN" ]] || { echo "no $CD_BIN: run hack/kubelet/build-containerd2.sh" >&2; exit 1; }
  export PATH="$KL_BIN/containerd2:$PATH"   # its own containerd-shim-runc-v2, found on PATH
fi
bash "$KL_REPO/hack/kubelet/pause-image.sh" >/dev/null

mkdir -p "$KL_RUN" "$KL_VARLOG" "$KL_VARLIB" "$KL_SYSCTL" "$KL_CD_ROOT" "$KL_CD_STATE" "$KL_KUBELET_DIR" "$KL_LOGS" "$KL_PIDS" \
  "$KL_STATE/cni/net.d" "$KL_STATE/pod-logs" "$KL_STATE/volume-plugins"
KC="$KL_STATE/kubelet.kubeconfig"
cp "$KL_KUBECONFIG" "$KC"
# The sandbox CA, for the kubelet's x509 client authentication (the apiserver's clients are signed by it).
CA="$KL_STATE/client-ca.crt"
python3 - "$KC" "$CA" <<'PY'
import base64, re, sys
text = open(sys.argv[1]).read()
m = re.search(r"certificate-authority-data:\s*(\S+)", text)
open(sys.argv[2], "wb").write(base64.b64decode(m.group(1)) if m else b"")
PY

KUBELET_PORT="$(free_port)"; HEALTHZ_PORT="$(free_port)"; STREAM_PORT="$(free_port)"
echo "$KUBELET_PORT $HEALTHZ_PORT $STREAM_PORT" >"$KL_STATE/ports"

if [[ "$KL_CNI" == loopback ]]; then
  cat >"$KL_STATE/cni/net.d/10-loopback.conflist" <<'CNI'
{"cniVersion": "0.4.0", "name": "loopback-only", "plugins": [{"type": "loopback"}]}
CNI
else
  rm -f "$KL_STATE/cni/net.d/"*
fi

cat >"$KL_STATE/containerd.toml" <<TOML
version = 2
root = "$KL_CD_ROOT"
state = "$KL_CD_STATE"
[grpc]
  address = "$KL_CD_SOCK_NS"
[ttrpc]
  address = "$KL_CD_SOCK_NS.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "$STREAM_PORT"
  sandbox_image = "localhost/kubelet-exp/pause:3.10.1"
  disable_apparmor = true
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "${KL_RUNC:-$(command -v runc)}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$KL_STATE/cni/net.d"
TOML

if [[ "$KL_KUBELET_AUTH" == open ]]; then
  AUTHN="  anonymous: {enabled: true}
  webhook: {enabled: true}
  x509: {clientCAFile: $CA}"
  AUTHZ="  mode: AlwaysAllow"
else
  AUTHN="  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $CA}"
  AUTHZ="  mode: Webhook"
fi
cat >"$KL_STATE/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $HEALTHZ_PORT
authentication:
$AUTHN
authorization:
$AUTHZ
containerRuntimeEndpoint: unix://$KL_CD_SOCK_NS
cgroupDriver: cgroupfs
cgroupsPerQOS: true
cgroupRoot: $KL_CGROUP_ROOT
enforceNodeAllocatable: []
oomScoreAdj: 0
failSwapOn: false
protectKernelDefaults: $PROTECT_KERNEL_DEFAULTS
makeIPTablesUtilChains: false
podLogsDir: $KL_STATE/pod-logs
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
maxPods: 20
serializeImagePulls: true
YAML

if [[ "${KL_PRECREATE_CGROUP_ROOT:-1}" == 1 ]]; then
  for c in /sys/fs/cgroup/*/; do
    c="${c%/}"; [[ "$c" == */unified ]] && continue
    mkdir -p "$c$KL_CGROUP_ROOT"
    if [[ "$(basename "$c")" == cpuset ]]; then
      cat "$c/cpuset.cpus" >"$c$KL_CGROUP_ROOT/cpuset.cpus"; cat "$c/cpuset.mems" >"$c$KL_CGROUP_ROOT/cpuset.mems"
    fi
  done
fi

# The holder of the private mount namespace, detached from this shell (so it outlives it).
setsid unshare --mount --propagation private sleep infinity </dev/null >/dev/null 2>&1 &
echo $! >"$KL_PIDS/holder.pid"
sleep 0.3
in_ns mount --bind "$KL_RUN" /run
in_ns mount --bind "$KL_VARLOG" /var/log
in_ns mount --bind "$KL_VARLIB" /var/lib
if [[ "$FAKE_SYSCTLS" == 1 ]]; then
  for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
    kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    f="$KL_SYSCTL/${kv%%=*}"; mkdir -p "$(dirname "$f")"; echo "${kv#*=}" >"$f"
    in_ns mount --bind "$f" "/proc/sys/${kv%%=*}"
  done
fi

t_cd=$(date +%s.%N)
setsid nsenter --target "$(cat "$KL_PIDS/holder.pid")" --mount -- nice -n 10 "$CD_BIN" --config "$KL_STATE/containerd.toml" \
  </dev/null >"$KL_LOGS/containerd.log" 2>&1 &
echo $! >"$KL_PIDS/containerd.pid"
for _ in $(seq 100); do [[ -S "$KL_CD_SOCK" ]] && break; sleep 0.2; done
[[ -S "$KL_CD_SOCK" ]] || { echo "containerd did not open $KL_CD_SOCK; see $KL_LOGS/containerd.log" >&2; exit 1; }
echo "containerd up in $(python3 -c "print(round($(date +%s.%N)-$t_cd,2))") s (pid $(cat "$KL_PIDS/containerd.pid"))"
"${CTR[@]}" images import --all-platforms "$KL_ROOT/images/pause.tar" >/dev/null

t_kl=$(date +%s.%N)
echo "$t_kl" >"$KL_STATE/kubelet.t0"
setsid nsenter --target "$(cat "$KL_PIDS/holder.pid")" --mount -- nice -n 10 "$KL_BIN/kubelet" \
  --config="$KL_STATE/kubelet-config.yaml" --kubeconfig="$KC" --root-dir="$KL_KUBELET_DIR" \
  --cert-dir="$KL_KUBELET_DIR/pki" --volume-plugin-dir="$KL_STATE/volume-plugins" \
  --hostname-override="$KL_NODE" --v="${KL_V:-2}" \
  </dev/null >"$KL_LOGS/kubelet.log" 2>&1 &
echo $! >"$KL_PIDS/kubelet.pid"
echo "kubelet started (pid $(cat "$KL_PIDS/kubelet.pid")), ports: server $KUBELET_PORT healthz $HEALTHZ_PORT stream $STREAM_PORT"

K=("$KL_KUBECTL" --kubeconfig "$KC")
registered="" ready=""
deadline=$((SECONDS + KL_READY_TIMEOUT))
while ((SECONDS < deadline)); do
  kill -0 "$(cat "$KL_PIDS/kubelet.pid")" 2>/dev/null || { echo "kubelet exited; last lines of $KL_LOGS/kubelet.log:" >&2; tail -5 "$KL_LOGS/kubelet.log" >&2; exit 1; }
  st="$("${K[@]}" get node "$KL_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)"
  if [[ -n "$st" && -z "$registered" ]]; then registered=$(date +%s.%N); echo "Node registered after $(python3 -c "print(round($registered-$t_kl,2))") s"; fi
  if [[ "$st" == True ]]; then ready=$(date +%s.%N); break; fi
  sleep 0.5
done
if [[ -n "$ready" ]]; then
  echo "Node Ready after $(python3 -c "print(round($ready-$t_kl,2))") s from kubelet start"
  echo "$ready" >"$KL_STATE/node-ready.t"
else
  echo "Node not Ready within ${KL_READY_TIMEOUT}s"
fi
"${K[@]}" get node "$KL_NODE" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' || true
