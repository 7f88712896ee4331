#!/usr/bin/env bash
# hack/kubelet/node-down.sh — stop and remove everything hack/kubelet/node-up.sh started, in an order that
# leaves nothing behind: the node's pods (through the apiserver, then through containerd), the kubelet,
# containerd, the shims, the mount-namespace holder, the cgroup root, and state/ (KEEP_STATE=1 keeps it).
#
# Why it can be exact: every process it stops is found by a pid file node-up.sh wrote, by being inside the
# node's own mount namespace (the shims: /proc/PID/ns/mnt equal to the holder's), or by being in the node's own
# cgroup root (pod containers). Nothing is matched by name. Idempotent: safe to run when nothing is up.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
KC="$KL_STATE/kubelet.kubeconfig"
alive() { [[ -f "$KL_PIDS/$1.pid" ]] && kill -0 "$(cat "$KL_PIDS/$1.pid")" 2>/dev/null; }
stop() { # stop NAME: TERM, up to 15 s, then KILL
  alive "$1" || return 0
  local pid; pid="$(cat "$KL_PIDS/$1.pid")"
  kill -TERM "$pid"
  for _ in $(seq 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && { echo "  $1 ($pid) did not stop on TERM: KILL"; kill -KILL "$pid"; }
  echo "  stopped $1 ($pid)"
}

if [[ -f "$KC" ]] && "$KL_KUBECTL" --kubeconfig "$KC" get --raw /readyz >/dev/null 2>&1; then
  if alive kubelet; then
    "$KL_KUBECTL" --kubeconfig "$KC" delete pods -A --field-selector "spec.nodeName=$KL_NODE" --wait=true --timeout=60s || true
  fi
  "$KL_KUBECTL" --kubeconfig "$KC" delete node "$KL_NODE" --ignore-not-found --wait=false || true
fi
stop kubelet
if alive containerd && [[ -S "$KL_CD_SOCK" ]]; then
  for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks kill -s SIGKILL "$t" 2>/dev/null || true; done
  sleep 1
  for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks rm -f "$t" 2>/dev/null || true; done
  for c in $("${CTR[@]}" containers ls -q 2>/dev/null); do "${CTR[@]}" containers rm "$c" 2>/dev/null || true; done
fi
stop containerd

# Pod processes still in the cgroup root (none if the steps above worked), then the shims and anything else
# in the node's mount namespace, then its holder.
cg_procs() { find /sys/fs/cgroup/*/"${KL_CGROUP_ROOT#/}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u; }
for p in $(cg_procs); do echo "  killing pod process $p ($(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-60))"; kill -KILL "$p" 2>/dev/null || true; done
if alive holder; then
  hp="$(cat "$KL_PIDS/holder.pid")"; ns="$(readlink "/proc/$hp/ns/mnt")"
  for d in /proc/[0-9]*; do
    p="${d#/proc/}"; [[ "$p" == "$hp" ]] && continue
    [[ "$(readlink "$d/ns/mnt" 2>/dev/null)" == "$ns" ]] || continue
    echo "  killing $p in the node's mount namespace ($(tr '\0' ' ' <"$d/cmdline" 2>/dev/null | cut -c1-60))"
    kill -KILL "$p" 2>/dev/null || true
  done
  stop holder
fi
# The cgroup root, deepest first, in every v1 controller (and v2, if the kubelet ever used it).
sleep 0.5
for base in /sys/fs/cgroup/*/"${KL_CGROUP_ROOT#/}" /sys/fs/cgroup/"${KL_CGROUP_ROOT#/}"; do
  [[ -d "$base" ]] || continue
  find "$base" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  [[ -d "$base" ]] && echo "  could not remove $base" >&2 || echo "  removed cgroup $base"
done
# Nothing of ours should be mounted in the host's namespace; unmount it if it is.
{ grep -F " $KL_STATE" /proc/self/mountinfo || true; } | awk '{print $5}' | sort -r | while read -r m; do
  echo "  unmounting $m (host namespace)"; umount -l "$m" || true
done
if [[ -z "${KEEP_STATE:-}" && -d "$KL_STATE" ]]; then rm -rf "$KL_STATE" && echo "  removed $KL_STATE"; fi
echo "node down"
