#!/usr/bin/env bash
# hack/kubelet/pause-image.sh — make the pod-sandbox ("pause") image that containerd's CRI needs for every pod,
# without a registry: pause.c from the k8s.io/kubernetes module (build/pause/linux/pause.c, the same source as
# registry.k8s.io/pause:3.10.1), compiled static with gcc, packed by hand as a one-layer OCI image archive
# (.local/kubelet/images/pause.tar, tag localhost/kubelet-exp/pause:3.10.1). node-up.sh imports it.
#
# Why by hand: registry.k8s.io cannot be reached here, and podman would put it into hack/image's storage;
# an OCI archive is a few JSON files and a tar layer, which `ctr images import` takes as it is.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
source "$KL_REPO/hack/versions.env"
command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"
out="$KL_ROOT/images"
tag="localhost/kubelet-exp/pause:3.10.1"
[[ -f "$out/pause.tar" && -z "${FORCE:-}" ]] && { echo "$out/pause.tar present"; exit 0; }
mkdir -p "$out"
src="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')/build/pause/linux/pause.c"
work="$(mktemp -d "$out/pause.XXXXXX")"
trap 'rm -rf "$work"' EXIT
gcc -Os -Wall -Werror -static -DVERSION=v3.10.1-local -o "$work/pause" "$src"
strip "$work/pause"
TAG="$tag" WORK="$work" OUT="$out/pause.tar" python3 - <<'PY'
import hashlib, io, json, os, tarfile, time
work, tag = os.environ["WORK"], os.environ["TAG"]
def blob(data):
    d = hashlib.sha256(data).hexdigest(); return d, data
# The layer: /pause, mode 0755, owned by root.
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
    ti = t.gettarinfo(os.path.join(work, "pause"), arcname="pause"); ti.uid = ti.gid = 0; ti.uname = ti.gname = ""; ti.mtime = 0
    with open(os.path.join(work, "pause"), "rb") as f: t.addfile(ti, f)
layer = raw.getvalue()
diff_id = hashlib.sha256(layer).hexdigest()
config = json.dumps({"architecture": "amd64", "os": "linux",
    "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
    "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff_id]},
    "created": "1970-01-01T00:00:00Z"}).encode()
cd, _ = blob(config)
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + cd, "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + diff_id, "size": len(layer)}]}).encode()
md, _ = blob(manifest)
index = json.dumps({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": "sha256:" + md, "size": len(manifest), "annotations": {"io.containerd.image.name": tag, "org.opencontainers.image.ref.name": tag.rsplit(":", 1)[1]}}]}).encode()
with tarfile.open(os.environ["OUT"] + ".part", "w") as t:
    def add(name, data):
        ti = tarfile.TarInfo(name); ti.size = len(data); ti.mtime = 0; t.addfile(ti, io.BytesIO(data))
    add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    add("index.json", index)
    for d, data in ((diff_id, layer), (cd, config), (md, manifest)): add("blobs/sha256/" + d, data)
os.rename(os.environ["OUT"] + ".part", os.environ["OUT"])
PY
echo "$out/pause.tar: $tag ($(stat -c %s "$work/pause") byte binary)"
