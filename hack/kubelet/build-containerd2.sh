#!/usr/bin/env bash
# hack/kubelet/build-containerd2.sh — build containerd v2 (github.com/containerd/containerd/v2: cmd/containerd and
# cmd/containerd-shim-runc-v2) from the Go module proxy into .local/kubelet/bin/containerd2/ (git-ignored).
#
# Why: the kubelet 1.34 runs on Debian's containerd 1.6.20 but marks it with kubelet_cri_losing_support
# {version="1.36.0"} (1.6 lacks the CRI RuntimeConfig call), so a test tier that follows Kubernetes past 1.35 needs
# containerd 2. Built as hack/build-components.sh's build_upstream() builds a module that is not ours: an empty
# consumer module at the module's Go version, its replace lines (module paths only) and its go.sum copied.
# CGO off: no btrfs snapshotter, no seccomp library (runc, not containerd, applies seccomp). VERSION overrides.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"
version="${VERSION:-v2.4.2}"
module=github.com/containerd/containerd/v2
out="$KL_BIN/containerd2"
dir="$KL_ROOT/gobuild/containerd2"
if [[ -z "${FORCE:-}" && -x "$out/containerd" && "$(cat "$out/.pin" 2>/dev/null)" == "$version" ]]; then echo "containerd $version up to date"; exit 0; fi
export GOFLAGS="-mod=mod -buildvcs=false -trimpath" CGO_ENABLED=0
start=$SECONDS
rm -rf "$dir" && mkdir -p "$dir" "$out"
json="$(go mod download -json "$module@$version")"
src="$(sed -n 's/.*"Dir": "\(.*\)",/\1/p' <<<"$json")"
modfile="$(sed -n 's/.*"GoMod": "\(.*\)",/\1/p' <<<"$json")"
(
  cd "$dir"
  printf 'module policysync.local/containerd2\n\n%s\n' "$(grep -m1 '^go ' "$modfile")" >go.mod
  printf 'require %s %s\n' "$module" "$version" >>go.mod
  awk '/^replace \($/ {block=1; next} block && /^\)/ {block=0; next}
       block {print "replace " $0; next} /^replace / {print}' "$modfile" | grep -v '=> \.' >>go.mod || true
  cp "$src/go.sum" go.sum && chmod u+w go.sum
  ld="-s -w -X $module/version.Version=$version -X $module/version.Package=$module"
  for b in containerd containerd-shim-runc-v2; do
    "${NICE[@]}" go build -tags no_btrfs -o "$out/$b" -ldflags "$ld" "$module/cmd/$b"
  done
)
printf '%s' "$version" >"$out/.pin"
echo "containerd $version built in $((SECONDS - start)) s: $(ls -l "$out" | awk 'NR>1 {print $9, $5}' | tr '\n' ' ')"
"$out/containerd" --version
