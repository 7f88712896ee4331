#!/usr/bin/env bash
# hack/kubelet/load-image.sh — put the image hack/image/build.sh built (localhost/policy-sync:dev) into the
# experiment node's containerd, namespace k8s.io (the one its CRI, hence the kubelet, reads), as
# hack/image/containerd-import.sh does: `podman save` to a docker-archive, then `ctr images import`.
#
# Why this shape: there is no registry to pull from, so pods use imagePullPolicy: Never. The archive
# hack/image/containerd-import.sh left in .local/image/export is reused when it is of the same image id;
# otherwise podman saves a fresh one into .local/kubelet/images (podman pointed at hack/image's config and
# storage, read only: this script does not rewrite hack/image's storage.conf). Needs the node up (node-up.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
TAG="${TAG:-localhost/policy-sync:dev}"
[[ -S "$KL_CD_SOCK" ]] || { echo "no containerd at $KL_CD_SOCK: run hack/kubelet/node-up.sh" >&2; exit 1; }
export CONTAINERS_CONF="$KL_REPO/hack/image/containers.conf"
export CONTAINERS_STORAGE_CONF="$KL_REPO/.local/image/storage.conf"
[[ -f "$CONTAINERS_STORAGE_CONF" ]] || { echo "no hack/image storage: run hack/image/build.sh" >&2; exit 1; }
id="$(podman image inspect -f '{{.Id}}' "$TAG")"
archive="$KL_REPO/.local/image/export/policy-sync-dev.tar"
if [[ ! -f "$archive" || "$(cat "$archive.id" 2>/dev/null)" != "$id" ]]; then
  archive="$KL_ROOT/images/policy-sync-dev.tar"
  if [[ ! -f "$archive" || "$(cat "$archive.id" 2>/dev/null)" != "$id" ]]; then
    mkdir -p "$KL_ROOT/images"
    TMPDIR="$KL_ROOT/images" "${NICE[@]}" podman save --format docker-archive -o "$archive.part" "$TAG"
    mv "$archive.part" "$archive"; echo "$id" >"$archive.id"
  fi
fi
mark="$KL_CD_ROOT/../imported-policy-sync.id"
if "${CTR[@]}" images ls -q | grep -qxF "$TAG" && [[ "$(cat "$mark" 2>/dev/null)" == "$id" ]]; then
  echo "$TAG already in containerd"
else
  t0=$(date +%s.%N)
  "${NICE[@]}" "${CTR[@]}" images import "$archive"
  echo "$id" >"$mark"
  echo "imported $TAG in $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
fi
"${CTR[@]}" images ls | awk -v t="$TAG" 'NR==1 || $1==t'
