#!/usr/bin/env bash
# hack/image/build.sh — build the repo's own Dockerfile, unchanged, into localhost/policy-sync:dev with podman,
# on a machine with no container registry and no Docker engine.
#
# Why each piece:
#   - hack/image/base.sh first: it makes the FROM image (node:22-bookworm-slim) locally; --pull=never then
#     makes the build use it and never ask a registry.
#   - BUILD_NETWORK (default host): the build's `RUN npm ci` needs the npm registry. The RUN steps listen
#     on no port, so the host's network is safe here. buildah 1.28 (Debian bookworm) refuses slirp4netns for
#     a build ("unable to find network with name or ID slirp4netns"), though `podman run` takes it;
#     `private` would make a CNI bridge (cni-podman0, 10.88.0.1/16) on the host; `none` (this repo's
#     containers.conf default) leaves npm retrying until it gives up.
#   - the CA mount: this machine reaches the npm registry through a TLS-intercepting egress proxy whose CA
#     is in the host's /etc/ssl/certs bundle; the image (like upstream's slim image) has no CA bundle of
#     its own, so `npm ci` fails with SELF_SIGNED_CERT_IN_CHAIN. The host's bundle and an npmrc naming it
#     (cafile=) are bind-mounted over the image's empty /usr/local/etc, which is npm's global config
#     folder ($PREFIX/etc). A RUN-time mount only: nothing of it lands in a layer or in the final image.
#     Set BUILD_CA= (empty) to build without it, where the registry is reached directly.
#   - --layers (podman's default): a second build with unchanged sources takes the cached layers.
# Everything (images, layers, the CA copy) stays under .local/image/. Extra arguments go to podman build
# (e.g. --no-cache, --build-arg VERSION=…).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

TAG="${TAG:-localhost/policy-sync:dev}"
BUILD_NETWORK="${BUILD_NETWORK:-host}"
BUILD_CA="${BUILD_CA-/etc/ssl/certs/ca-certificates.crt}"

bash "$HACK_IMAGE_DIR/base.sh"

args=(--pull=never --layers --network="$BUILD_NETWORK" -t "$TAG" -f "$REPO_ROOT/Dockerfile")
if [[ -n "$BUILD_CA" ]]; then
  etc="$IMAGE_WORK/npm-build-etc"
  mkdir -p "$etc"
  cp "$BUILD_CA" "$etc/ca.crt.new" && mv "$etc/ca.crt.new" "$etc/ca.crt"
  printf 'cafile=/usr/local/etc/ca.crt\nfund=false\naudit=false\nupdate-notifier=false\n' > "$etc/npmrc"
  args+=(-v "$etc:/usr/local/etc:ro")
fi

cd "$REPO_ROOT"
start=$(date +%s.%N)
"${NICE[@]}" podman build "${args[@]}" "$@" .
end=$(date +%s.%N)
printf 'build: %s in %.1f s\n' "$TAG" "$(echo "$end - $start" | bc)"
podman images "$TAG"
