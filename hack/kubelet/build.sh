#!/usr/bin/env bash
# hack/kubelet/build.sh — build a real kubelet (k8s.io/kubernetes/cmd/kubelet) at the Kubernetes version that
# hack/versions.env pins, into .local/kubelet/bin/kubelet (git-ignored). Part of the issue-43 kubelet experiment.
#
# Why this shape: it is the same approach as build_kubernetes() in hack/build-components.sh (an empty consumer
# module requiring k8s.io/kubernetes@VERSION, with each staging module that k8s.io/kubernetes replaces locally
# pinned to the matching v0.X.Y release, the same -ldflags version stamps), but in its own module folder
# (.local/kubelet/gobuild/kubernetes) so that it never races or rewrites the one build-components.sh owns.
# CGO off, as upstream builds the kubelet for its release binaries. Runs under nice/ionice: other builds and tests
# share this 2-core machine. Rebuilt only when the pin changes (FORCE=1 rebuilds).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../versions.env
source "$root/hack/versions.env"
command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"

bin="$root/.local/kubelet/bin"
dir="$root/.local/kubelet/gobuild/kubernetes"
pin="kubernetes=$KUBERNETES_VERSION"
mkdir -p "$bin"
if [[ -z "${FORCE:-}" && -x "$bin/kubelet" && "$(cat "$bin/.kubelet.pin" 2>/dev/null)" == "$pin" ]]; then
  echo "[kubelet-build] kubelet $KUBERNETES_VERSION up to date" >&2
  exit 0
fi
export GOFLAGS="-mod=mod -buildvcs=false -trimpath"
export CGO_ENABLED=0
NICE=(nice -n 19 ionice -c3)

start=$SECONDS
rm -rf "$dir" && mkdir -p "$dir"
printf 'module policysync.local/kubelet\n\ngo 1.24\n' >"$dir/go.mod"
modfile="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
minor="v0.${KUBERNETES_VERSION#v1.}"
(
  cd "$dir"
  printf 'require k8s.io/kubernetes %s\n' "$KUBERNETES_VERSION" >>go.mod
  grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$modfile" | awk '{print $1}' | sort -u |
    while read -r m; do printf 'replace %s => %s %s\n' "$m" "$m" "$minor"; done >>go.mod
  # The sums build-components.sh already resolved for the same pin, when present, spare a re-verification.
  [[ -f "$root/.local/gobuild/kubernetes/go.sum" ]] && cp "$root/.local/gobuild/kubernetes/go.sum" go.sum
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)"
  "${NICE[@]}" go build -o "$bin/kubelet.part" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kubelet
)
mv "$bin/kubelet.part" "$bin/kubelet"
printf '%s' "$pin" >"$bin/.kubelet.pin"
echo "[kubelet-build] kubelet $KUBERNETES_VERSION built in $((SECONDS - start)) s, $(stat -c %s "$bin/kubelet") bytes" >&2
"$bin/kubelet" --version
