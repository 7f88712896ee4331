#!/usr/bin/env bash
# The main job, run locally: builds the control plane (when the pins changed) and starts a hub and two
# spokes with their OCM work agents. `npm run local-down` stops it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash hack/build-components.sh
npx tsx hack/sandbox/cli.ts up
echo
echo "kubectl --kubeconfig .local/kubeconfigs/hub.kubeconfig get managedclusters"
