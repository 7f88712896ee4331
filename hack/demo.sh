#!/usr/bin/env bash
# The main job, run locally: builds the control plane (when the pins changed), starts a hub and two
# spokes with the OCM placement controller, addon manager and work agents, installs the spoke side from
# the hub as the OCM addon in deploy/addon, runs the policy-sync hub controller and spoke agents, applies
# the sample in examples/ and prints the aggregated status. `npm run local-down` stops it all.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash hack/build-components.sh
npx tsx hack/demo.ts
