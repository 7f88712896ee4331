#!/usr/bin/env bash
# hack/image/containerd-import.sh — check that containerd (Debian's package) takes the podman-built image:
# `podman save` to a docker-archive, import into containerd's k8s.io namespace (the one a kubelet's CRI
# reads), list it, and run `--version` from it with `ctr run`. No kubelet, no CRI.
#
# Why this shape: a private containerd is started for the check only, with its root, state and socket under
# .local/image/containerd/ and its CRI plugin disabled (the CRI plugin would open a streaming port), so
# nothing of the host's /run/containerd or /var/lib/containerd is touched and no TCP port is opened. It is
# stopped by its own pid at the end. Needs: apt-get install containerd (pulls runc). Idempotent: a re-run
# re-imports over the same name.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

TAG="${TAG:-localhost/policy-sync:dev}"
CD="$IMAGE_WORK/containerd"
SOCK="$CD/run/containerd.sock"
ARCHIVE="$IMAGE_WORK/export/policy-sync-dev.tar"
mkdir -p "$CD/root" "$CD/state" "$CD/run" "$IMAGE_WORK/export"

podman image exists "$TAG" || { echo "no $TAG: run hack/image/build.sh first" >&2; exit 1; }
if [[ ! -f "$ARCHIVE" || "$(podman image inspect -f '{{.Id}}' "$TAG")" != "$(cat "$ARCHIVE.id" 2>/dev/null)" ]]; then
  "${NICE[@]}" podman save --format docker-archive -o "$ARCHIVE.part" "$TAG"
  mv "$ARCHIVE.part" "$ARCHIVE"
  podman image inspect -f '{{.Id}}' "$TAG" > "$ARCHIVE.id"
fi

cat > "$CD/config.toml" <<EOF
version = 2
root = "$CD/root"
state = "$CD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
EOF

# containerd 1.6 still puts the shims' sockets in /run/containerd/s, ctr's fifos in /run/containerd/fifo and
# runc's state in /run/containerd/runc, whatever the config says: remove them afterwards when this run
# made them (empty folders only).
[[ -e /run/containerd ]] && RUN_CD_EXISTED=1 || RUN_CD_EXISTED=0
cleanup() {
  kill "$CD_PID" 2>/dev/null || true
  wait "$CD_PID" 2>/dev/null || true
  if [[ "$RUN_CD_EXISTED" == 0 && -d /run/containerd ]]; then
    find /run/containerd -depth -type d -empty -delete 2>/dev/null || true
  fi
}
"${NICE[@]}" containerd --config "$CD/config.toml" > "$CD/containerd.log" 2>&1 &
CD_PID=$!
trap cleanup EXIT
for _ in $(seq 50); do [[ -S "$SOCK" ]] && break; sleep 0.2; done
CTR=(ctr --address "$SOCK" -n k8s.io)
"${CTR[@]}" version

"${NICE[@]}" "${CTR[@]}" images import "$ARCHIVE"
"${CTR[@]}" images ls | grep -F "${TAG#localhost/}"
ref="$("${CTR[@]}" images ls -q | grep -F "${TAG#localhost/}" | head -1)"
"${CTR[@]}" images check | grep -F "$ref" || true
"${CTR[@]}" run --rm "$ref" "policy-sync-check-$$" node /app/bin/policy-sync.js --version
"${CTR[@]}" run --rm --read-only "$ref" "policy-sync-check-ro-$$" id
