#!/usr/bin/env bash
# hack/image/deps.sh — install, from Debian's packages, what hack/image/*.sh need on a Debian 12 machine
# with no Docker engine and no container registry: podman and buildah (builds and runs), runc (crun, the
# other runtime podman takes, refuses this machine's hybrid cgroup v1+v2 layout: "cgroups in hybrid mode
# not supported"), mmdebstrap (the base image's root filesystem), catatonit, fuse-overlayfs, slirp4netns
# and uidmap (podman's usual companions, for rootless use), and with WITH_CONTAINERD=1 containerd (for
# hack/image/containerd-import.sh). Idempotent: installs only what is missing. Run as root.
set -euo pipefail
pkgs=(runc podman buildah mmdebstrap uidmap fuse-overlayfs slirp4netns catatonit)
[[ "${WITH_CONTAINERD:-0}" == 1 ]] && pkgs+=(containerd)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update
  # runc is named first and recommends are off, so apt does not pick crun for podman's "crun | runc".
  DEBIAN_FRONTEND=noninteractive nice -n 19 ionice -c3 apt-get install -y --no-install-recommends "${missing[@]}"
fi
dpkg-query -W -f='${Package} ${Version}\n' "${pkgs[@]}"
