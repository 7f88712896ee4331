#!/usr/bin/env bash
# The main job, run locally: builds the control plane, the Kuadrant operator v1.2.0 and Envoy Gateway v1.5.0
# (when their pins changed), starts a hub and two spokes with the OCM placement controller, addon manager and
# work agents, the Kuadrant operator on every spoke and Envoy Gateway on spoke-1 (as root: it runs in a mount
# namespace of its own, on fixed ports, one per machine), installs the spoke side from the hub as the OCM addon
# in deploy/addon, runs the policy-sync hub controller and spoke agents, applies the sample in examples/ and
# prints, per cluster, each controller's verdict on its copy as the hub shows it: Envoy Gateway accepting the
# BackendTrafficPolicy (Enforced), the Kuadrant operator's own reason and message for the AuthPolicy; then a
# local AuthPolicy on spoke-2 (the hub shows spoke-2 Overridden, naming it, and the copy leaves spoke-2) and its
# deletion (the copy comes back); last `kubectl get gateway -A` and `policy-sync status -o wide` on the hub.
# `npm run local-down -- --purge` stops it all and deletes the clusters' data. Arguments go to hack/demo.ts
# (--root DIR: a sandbox there instead of .local).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
for component in modules etcd ocm kubernetes kuadrant-operator envoy-gateway; do
  bash hack/build-components.sh "$component"
done
npx tsx hack/demo.ts "$@"
