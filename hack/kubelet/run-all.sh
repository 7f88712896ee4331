#!/usr/bin/env bash
# hack/kubelet/run-all.sh — the whole kubelet experiment end to end, and always cleaned up: build the kubelet,
# start a private sandbox (1 spoke, no OCM registration) under .local/kubelet/sandbox, start the node
# (containerd + kubelet, node-up.sh) attached to its hub, load the image, run the pod checks, then stop the
# node (node-down.sh) and the sandbox (`down --purge`), also on failure or Ctrl-C (trap).
#
# Why a trap around everything: a kubelet experiment leaves mounts, cgroups, shims and containers behind when
# it is stopped halfway; node-down.sh removes exactly what node-up.sh made, so it runs on every exit path.
# Options: the environment of node-up.sh (KL_CNI, KL_KUBELET_AUTH, ...), KEEP_UP=1 (leave it all running),
# KL_CONTAINERD=debian|v2 (v2: the containerd built by build-containerd2.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$KL_REPO"
cleanup() {
  rc=$?
  if [[ -z "${KEEP_UP:-}" ]]; then
    bash hack/kubelet/node-down.sh || true
    npx tsx testkit/sandbox/cli.ts down --purge --root "$KL_SANDBOX" || true
  fi
  exit "$rc"
}
trap cleanup EXIT INT TERM
bash hack/kubelet/build.sh
npx tsx testkit/sandbox/cli.ts up --spokes 1 --root "$KL_SANDBOX" --without-registration
bash hack/kubelet/node-up.sh
bash hack/kubelet/load-image.sh
bash hack/kubelet/pod-check.sh
