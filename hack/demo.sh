#!/usr/bin/env bash
# The main job, run locally: builds the control plane and the Kuadrant operator v1.2.0 (when their pins
# changed; Envoy Gateway, which the demo does not run, is not built), starts a hub and two spokes with the OCM
# placement controller, addon manager and work agents and the Kuadrant operator on every spoke, installs the
# spoke side from the hub as the OCM addon in deploy/addon, runs the policy-sync hub controller and spoke agents,
# applies the sample in examples/ and prints, per cluster, the status the Kuadrant operator wrote on each copy as
# the hub shows it (its own reason and message); then a local AuthPolicy on spoke-2 (the hub shows spoke-2
# Overridden, naming it, and the copy leaves spoke-2) and its deletion (the copy and the operator's status come
# back). `npm run local-down -- --purge` stops it all and deletes the clusters' data. Arguments go to hack/demo.ts
# (--root DIR: a sandbox there instead of .local).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
for component in modules etcd ocm kubernetes kuadrant-operator; do
  bash hack/build-components.sh "$component"
done
npx tsx hack/demo.ts "$@"
