#!/usr/bin/env bash
# The whole test suite: type-check, lint, then every tier in one run of node's test runner, against a
# sandbox of real etcd, kube-apiservers and OCM work agents that this script builds (when the pins
# changed), starts, and stops again whatever the outcome.
#   hack/test.sh              all tiers (npm test)
#   hack/test.sh unit         unit tests only: no sandbox, no type-check or lint
#   hack/test.sh integration  (or faults, or e2e) that tier only, with the sandbox
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
shopt -s globstar nullglob # node 20's test runner does not expand globs itself

tier="${1:-all}"
unit=(src/**/*.test.ts test/unit/**/*.test.ts)
integration=(test/integration/**/*.test.ts)
faults=(test/faults/**/*.test.ts)
e2e=(test/e2e/**/*.test.ts)
case "$tier" in
  all) files=("${unit[@]}" "${integration[@]}" "${faults[@]}" "${e2e[@]}") ;;
  unit) files=("${unit[@]}") ;;
  integration) files=("${integration[@]}") ;;
  faults) files=("${faults[@]}") ;;
  e2e) files=("${e2e[@]}") ;;
  *) echo "usage: $0 [all|unit|integration|faults|e2e]" >&2; exit 2 ;;
esac

if [ "$tier" = all ]; then
  echo "== type-check"; npx tsc --noEmit
  echo "== lint"; npx eslint . && npm run -s lint:cycles
  # What the container image runs: the compiled CLI, with no TypeScript loader.
  echo "== build"; rm -rf .local/dist-check
  npx tsc -p tsconfig.build.json --outDir .local/dist-check
  node .local/dist-check/cli/main.js --help >/dev/null
fi
if [ "$tier" != unit ]; then
  echo "== build the test control plane"; bash hack/build-components.sh
  export POLICY_SYNC_SANDBOX_ROOT="$root/.local/test-sandbox"
  stop_sandbox() { npx tsx testkit/sandbox/cli.ts down --root "$POLICY_SYNC_SANDBOX_ROOT" || true; }
  trap stop_sandbox EXIT
  echo "== start the test sandbox"; npx tsx testkit/sandbox/cli.ts up --root "$POLICY_SYNC_SANDBOX_ROOT"
fi

echo "== tests ($tier)"
# Files run one at a time: the integration and e2e tiers share one sandbox.
node --import tsx --test --test-concurrency=1 --test-reporter=spec "${files[@]}"
