#!/usr/bin/env bash
# Builds the real test control plane from Go modules into .local/bin (git-ignored):
# kube-apiserver, kube-controller-manager and kubectl (k8s.io/kubernetes), etcd (go.etcd.io/etcd/server/v3) and the OCM `work` binary
# (agent + manager), `placement`, `addon` (manager) and `registration` (hub controller + agent), and the spoke
# policy controllers kuadrant-operator and envoy-gateway, and promtool and helm, which test the monitoring pack and the chart. Each is rebuilt only when its pin in hack/versions.env changes.
# Also resolves the modules whose CRDs the sandbox installs and records their folders in
# .local/modules.json.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=versions.env
source "$root/hack/versions.env"

if ! command -v go >/dev/null 2>&1; then
  for candidate in /usr/local/go/bin /usr/lib/go/bin; do
    [ -x "$candidate/go" ] && export PATH="$candidate:$PATH" && break
  done
fi
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain (go >= 1.26: promtool and helm need it) is required to build the test control plane; install it (e.g. apt-get install golang-go, or Go at /usr/local/go) and retry" >&2
  exit 1
fi

bin="$root/.local/bin"
work="$root/.local/gobuild"
mkdir -p "$bin" "$work"
# OCM's and Kuadrant's modules are served by the module proxy here, but its checksum-database mirror
# answers 404 for them; verification is skipped for those two module prefixes only.
export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}open-cluster-management.io,github.com/kuadrant"
export GOFLAGS="-mod=mod -buildvcs=false -trimpath"
export CGO_ENABLED=0

log() { printf '[build-components] %s\n' "$*" >&2; }

# up_to_date NAME STAMP: the binary exists and was built from the same pin.
up_to_date() { [ -x "$bin/$1" ] && [ "$(cat "$bin/.$1.pin" 2>/dev/null)" = "$2" ]; }
mark_built() { printf '%s' "$2" >"$bin/.$1.pin"; }

# new_module DIR MODULE: an empty consumer module that the builds below resolve into.
new_module() {
  rm -rf "$1" && mkdir -p "$1"
  printf 'module %s\n\ngo 1.24\n' "$2" >"$1/go.mod"
}

# kube-apiserver; kube-controller-manager, of which the sandbox runs only the ClusterRole aggregation and
# namespace controllers (aggregated RBAC as deploy/ uses it, namespace deletion that completes), and on the hub
# the garbage collector and the CSR signer (OCM registration agents get their hub certificates by CSR); and
# kubectl (with kustomize) for the tests that render and dry-run deploy/.
build_kubernetes() {
  local pin="kubernetes=$KUBERNETES_VERSION"
  if up_to_date kube-apiserver "$pin" && up_to_date kube-controller-manager "$pin" && up_to_date kubectl "$pin"; then
    log "kube-apiserver, kube-controller-manager and kubectl $KUBERNETES_VERSION up to date"
    return
  fi
  log "building kube-apiserver, kube-controller-manager and kubectl $KUBERNETES_VERSION (several minutes when cold)"
  local dir="$work/kubernetes" minor="v0.${KUBERNETES_VERSION#v1.}"
  new_module "$dir" policysync.local/kubernetes
  local modfile
  modfile="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
  # k8s.io/kubernetes requires its staging modules at v0.0.0 with local replaces; pin each to the release.
  (
    cd "$dir"
    printf 'require k8s.io/kubernetes %s\n' "$KUBERNETES_VERSION" >>go.mod
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$modfile" | awk '{print $1}' | sort -u |
      while read -r m; do printf 'replace %s => %s %s\n' "$m" "$m" "$minor"; done >>go.mod
    local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)"
    go build -o "$bin/kube-apiserver" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kube-apiserver
    go build -o "$bin/kube-controller-manager" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kube-controller-manager
    go build -o "$bin/kubectl" -ldflags "${ldflags//component-base\/version/client-go\/pkg\/version} $ldflags" k8s.io/kubernetes/cmd/kubectl
  )
  mark_built kube-apiserver "$pin"
  mark_built kube-controller-manager "$pin"
  mark_built kubectl "$pin"
}

build_etcd() {
  local pin="etcd=$ETCD_VERSION"
  up_to_date etcd "$pin" && { log "etcd $ETCD_VERSION up to date"; return; }
  log "building etcd $ETCD_VERSION"
  local dir="$work/etcd"
  new_module "$dir" policysync.local/etcd
  (
    cd "$dir"
    printf 'require go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >>go.mod
    go build -o "$bin/etcd" -ldflags "-s -w" go.etcd.io/etcd/server/v3
  )
  mark_built etcd "$pin"
}

# OCM, one module: `work` (agent, and the hub manager the benchmark runs), `placement` (controller),
# `addon` (manager: ClusterManagementAddOn install strategies and AddOnTemplate addons) and `registration`
# (hub controller and spoke agent: cluster leases, availability and taints). Each binary is checked on its own,
# so that one added here is built into an existing .local/bin without rebuilding the rest.
build_ocm() {
  local pin="ocm=$OCM_VERSION" wanted=(work placement addon registration) missing=() b
  for b in "${wanted[@]}"; do up_to_date "$b" "$pin" || missing+=("$b"); done
  if [ "${#missing[@]}" -eq 0 ]; then log "OCM $OCM_VERSION (${wanted[*]}) up to date"; return; fi
  log "building OCM $OCM_VERSION: ${missing[*]}"
  local dir="$work/ocm"
  new_module "$dir" policysync.local/ocm
  local src
  src="$(go mod download -json "open-cluster-management.io/ocm@$OCM_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')"
  (
    cd "$dir"
    printf 'require open-cluster-management.io/ocm %s\n' "$OCM_VERSION" >>go.mod
    # OCM's own go.sum vouches for its dependencies, some of which the checksum-database mirror lacks.
    cp "$src/go.sum" go.sum && chmod u+w go.sum
    for b in "${missing[@]}"; do
      go build -o "$bin/$b" -ldflags "-s -w" "open-cluster-management.io/ocm/cmd/$b"
    done
  )
  for b in "${missing[@]}"; do mark_built "$b" "$pin"; done
}

# build_upstream NAME MODULE VERSION MAIN [TAGS]: a binary from a module that is not ours to change, built the
# way its own repository builds it: a consumer module requiring MODULE@VERSION at its Go version, with its
# `replace` lines (module paths only; local ones cannot apply outside its tree) and its go.sum copied.
build_upstream() {
  local name="$1" module="$2" version="$3" main="$4" tags="${5:-}" pin="$1=$3${5:+ tags=$5}"
  up_to_date "$name" "$pin" && { log "$name $version up to date"; return; }
  log "building $name $version (minutes when cold)"
  local dir="$work/$name" json src modfile
  new_module "$dir" "policysync.local/$name"
  json="$(go mod download -json "$module@$version")"
  src="$(sed -n 's/.*"Dir": "\(.*\)",/\1/p' <<<"$json")"
  modfile="$(sed -n 's/.*"GoMod": "\(.*\)",/\1/p' <<<"$json")"
  (
    cd "$dir"
    sed -i "s/^go .*/$(grep -m1 '^go ' "$modfile")/" go.mod
    printf 'require %s %s\n' "$module" "$version" >>go.mod
    awk '/^replace \($/ {block=1; next} block && /^\)/ {block=0; next}
         block {print "replace " $0; next} /^replace / {print}' "$modfile" | grep -v '=> \.' >>go.mod || true
    cp "$src/go.sum" go.sum && chmod u+w go.sum
    go build -o "$bin/$name" -ldflags "-s -w" ${tags:+-tags "$tags"} "$main"
  )
  mark_built "$name" "$pin"
}

# The spoke policy controllers the opt-in sandbox runs (`--spoke-controllers`): Kuadrant's operator and
# Envoy Gateway (its Go build peaks at about 2.4 GB: `all` builds the two one after the other).
build_kuadrant_operator() {
  build_upstream kuadrant-operator github.com/kuadrant/kuadrant-operator "$KUADRANT_OPERATOR_VERSION" \
    github.com/kuadrant/kuadrant-operator/cmd
}
build_envoy_gateway() {
  build_upstream envoy-gateway github.com/envoyproxy/gateway "$ENVOY_GATEWAY_VERSION" \
    github.com/envoyproxy/gateway/cmd/envoy-gateway
}

# Tools the tests run on what we ship: promtool (deploy/monitoring's alert rules, `promtool test rules`)
# and helm (the chart: lint, template, install on the sandbox hub).
# promtool without Prometheus's service discovery plugins (its own build tag): rule tests need none, and
# the cloud SDKs would double the build.
build_promtool() {
  build_upstream promtool github.com/prometheus/prometheus "$PROMETHEUS_VERSION" \
    github.com/prometheus/prometheus/cmd/promtool remove_all_sd
}
build_helm() {
  build_upstream helm helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm
}

# Module folders holding the upstream CRDs, read at sandbox start (never copied into the repo).
record_modules() {
  local out="$root/.local/modules.json" entries=() m dir json
  for m in "open-cluster-management.io/api@$OCM_API_VERSION" "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" \
    "github.com/kuadrant/kuadrant-operator@$KUADRANT_OPERATOR_VERSION" \
    "github.com/kuadrant/authorino-operator@$AUTHORINO_OPERATOR_VERSION" "github.com/kuadrant/authorino@$AUTHORINO_VERSION" \
    "github.com/kuadrant/limitador-operator@$LIMITADOR_OPERATOR_VERSION" "github.com/envoyproxy/gateway@$ENVOY_GATEWAY_VERSION" \
    "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION"; do
    json="$(go mod download -json "$m" || true)"
    dir="$(sed -n 's/.*"Dir": "\(.*\)",/\1/p' <<<"$json")"
    [ -d "$dir" ] || { echo "error: could not download $m from the Go module proxy: $json" >&2; exit 1; }
    entries+=("\"${m%@*}\": \"$dir\"")
  done
  (IFS=,; printf '{%s}\n' "${entries[*]}") >"$out"
  log "module folders recorded in ${out#"$root"/}"
}

start=$SECONDS
case "${1:-all}" in
  all) record_modules; build_etcd; build_ocm; build_kubernetes; build_kuadrant_operator; build_envoy_gateway; build_promtool; build_helm ;;
  modules) record_modules ;;
  kuadrant-operator) build_kuadrant_operator ;;
  envoy-gateway) build_envoy_gateway ;;
  promtool) build_promtool ;;
  helm) build_helm ;;
  etcd) build_etcd ;;
  ocm) build_ocm ;;
  kubernetes) build_kubernetes ;;
  *) echo "usage: $0 [all|modules|etcd|ocm|kubernetes|kuadrant-operator|envoy-gateway|promtool|helm]" >&2; exit 2 ;;
esac
log "done in $((SECONDS - start)) s"
