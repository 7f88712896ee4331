# Sourced by hack/image/*.sh: points podman/buildah at this repo's own config and keeps every image,
# layer and cache under .local/image/ (git-ignored), away from /var/lib/containers.
for _cmd in podman mmdebstrap runc; do
  command -v "$_cmd" >/dev/null || { echo "hack/image: $_cmd is missing: run hack/image/deps.sh" >&2; exit 1; }
done
HACK_IMAGE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HACK_IMAGE_DIR/../.." && pwd)"
IMAGE_WORK="$REPO_ROOT/.local/image"
mkdir -p "$IMAGE_WORK/storage" "$IMAGE_WORK/run" "$IMAGE_WORK/tmp"
export CONTAINERS_CONF="$HACK_IMAGE_DIR/containers.conf"
STORAGE_CONF="$IMAGE_WORK/storage.conf"
cat > "$STORAGE_CONF.new" <<CONF
[storage]
driver = "overlay"
graphroot = "$IMAGE_WORK/storage"
runroot = "$IMAGE_WORK/run"
CONF
mv "$STORAGE_CONF.new" "$STORAGE_CONF"
export CONTAINERS_STORAGE_CONF="$STORAGE_CONF"
export TMPDIR="$IMAGE_WORK/tmp"
# Heavy work yields to everything else on this 2-core machine.
# shellcheck disable=SC2034 # used by the scripts that source this file
NICE=(nice -n 19 ionice -c3)
