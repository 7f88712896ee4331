#!/usr/bin/env bash
# shellcheck disable=SC2034 # variables for the scripts that source this file
# hack/kubelet/env.sh — sourced by the other hack/kubelet scripts: where the kubelet experiment keeps its
# binaries, state, sockets and logs (all under .local/kubelet/, git-ignored), and the nice/ionice prefix.
#
# Why one file: node-up.sh, node-down.sh and the checks must agree on every path so that node-down.sh can
# find and remove exactly what node-up.sh made (pids, mount namespace, cgroup root) and nothing else.
set -euo pipefail
KL_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KL_ROOT="${KL_ROOT:-$KL_REPO/.local/kubelet}"
KL_BIN="$KL_ROOT/bin"
KL_STATE="$KL_ROOT/state"                 # one node's state; node-down.sh deletes it
KL_RUN="$KL_STATE/run"                    # bound over /run inside the private mount namespace
KL_VARLOG="$KL_STATE/varlog"              # bound over /var/log inside it (the kubelet's hard-coded /var/log/containers)
KL_VARLIB="$KL_STATE/varlib"              # bound over /var/lib inside it (the hard-coded /var/lib/kubelet/device-plugins)
KL_SYSCTL="$KL_STATE/sysctl"              # the files bound over the six /proc/sys entries the kubelet checks
KL_CONTAINERD="${KL_CONTAINERD:-debian}"  # debian (1.6.20, /usr/bin) or v2 (built by build-containerd2.sh)
KL_CD_ROOT="$KL_ROOT/containerd/root"        # images and snapshots, kept across runs (like .local/image)
if [[ "$KL_CONTAINERD" == v2 ]]; then KL_CD_ROOT="$KL_ROOT/containerd2/root"; fi
KL_CD_STATE="$KL_STATE/containerd/state"  # inside the namespace; runtime state
KL_CD_SOCK_NS="/run/containerd/containerd.sock"   # the socket path as the kubelet (inside the namespace) sees it
KL_CD_SOCK="$KL_RUN/containerd/containerd.sock"   # the same socket as seen from the host
KL_KUBELET_DIR="$KL_STATE/kubelet"
KL_LOGS="$KL_ROOT/logs"
KL_PIDS="$KL_STATE/pids"                  # holder.pid, containerd.pid, kubelet.pid
KL_SANDBOX="${KL_SANDBOX:-$KL_ROOT/sandbox}"
KL_NODE="${KL_NODE:-localhost}"
KL_CGROUP_ROOT="${KL_CGROUP_ROOT:-/policy-sync-kubelet-exp}"
KL_KUBECTL="$KL_REPO/.local/bin/kubectl"
NICE=(nice -n 19 ionice -c3)
CTR=(ctr --address "$KL_CD_SOCK" -n k8s.io)

# free_port: a TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# in_ns CMD...: run CMD inside the node's private mount namespace (held by holder.pid).
in_ns() { nsenter --target "$(cat "$KL_PIDS/holder.pid")" --mount -- "$@"; }
