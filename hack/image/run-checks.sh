#!/usr/bin/env bash
# hack/image/run-checks.sh — smoke-test the built image localhost/policy-sync:dev with podman: `--version`,
# `--help`, that it runs as the non-root user node (uid 1000), that it starts with a read-only root
# filesystem (both podman's --read-only, which adds tmpfs /tmp and /run, and --read-only-tmpfs=false, which
# is what Kubernetes' readOnlyRootFilesystem gives) and with every capability dropped, and print the image's
# size and the start-up time to `--version`.
#
# Why: the Dockerfile's runtime promises (USER node, an ENTRYPOINT that needs nothing writable) are checked
# here on this machine rather than first in a cluster. Containers get no network (containers.conf
# netns = "none"): nothing here needs one. RUNS (default 5) sets how many timed starts are made.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

TAG="${TAG:-localhost/policy-sync:dev}"
RUNS="${RUNS:-5}"
podman image exists "$TAG" || { echo "no $TAG: run hack/image/build.sh first" >&2; exit 1; }
want_version="$(podman image inspect -f '{{index .Labels "org.opencontainers.image.version"}}' "$TAG")"

fail() { echo "FAIL: $*" >&2; exit 1; }
v="$(podman run --rm "$TAG" --version)"
[[ "$v" == "$want_version" ]] || fail "--version printed '$v', the image's label says '$want_version'"
echo "ok: --version = $v"
podman run --rm "$TAG" --help | grep -q '^Usage: policy-sync' || fail "--help"
echo "ok: --help"
who="$(podman run --rm --entrypoint id "$TAG")"
[[ "$who" == "uid=1000(node) gid=1000(node) groups=1000(node)" ]] || fail "runs as: $who"
echo "ok: runs as $who"
v="$(podman run --rm --read-only --read-only-tmpfs=false --cap-drop=ALL --security-opt=no-new-privileges "$TAG" --version)"
[[ "$v" == "$want_version" ]] || fail "read-only, cap-drop=ALL: '$v'"
podman run --rm --read-only --read-only-tmpfs=false --cap-drop=ALL "$TAG" hub --help | grep -q '^Usage: policy-sync hub' \
  || fail "read-only, cap-drop=ALL: hub --help"
caps="$(podman run --rm --read-only --cap-drop=ALL --entrypoint sh "$TAG" -c 'grep ^CapEff /proc/self/status')"
[[ "$caps" == *0000000000000000 ]] || fail "capabilities left: $caps"
echo "ok: read-only root filesystem (no tmpfs either), all capabilities dropped ($caps)"

podman image inspect -f 'size: {{.Size}} bytes; user {{.Config.User}}; entrypoint {{json .Config.Entrypoint}}' "$TAG"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
t_version=(); t_true=()
for _ in $(seq "$RUNS"); do
  t_version+=("$(ms podman run --rm "$TAG" --version)")
  t_true+=("$(ms podman run --rm --entrypoint /bin/true "$TAG")")
done
echo "start-up, podman run … --version (ms): ${t_version[*]}"
echo "podman's own overhead, podman run --entrypoint /bin/true (ms): ${t_true[*]}"
echo "node inside the container, --version (ms):" \
  "$(podman run --rm --entrypoint bash "$TAG" -c 'for _ in $(seq '"$RUNS"'); do s=$(date +%s%N); node --max-semi-space-size=4 /app/bin/policy-sync.js --version >/dev/null; e=$(date +%s%N); printf "%s " $(( (e - s) / 1000000 )); done')"
echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores)"
