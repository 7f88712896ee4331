// What the status report's unit tests (src/core/status/report.test.ts) and the planner's, as that report shows its
// plans (src/core/rollout/plan.report.test.ts), share: a hub policy, its desired works, and a work as the agent
// reports it.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { desiredWorksForPolicy } from '../src/core/works/desiredworks.ts';
import type { ManifestWork } from '../src/core/works/manifestwork.ts';

const GW = 'gateway.networking.k8s.io';
/** A BackendTrafficPolicy of the Gateway shop. */
export const policy: KubeObject = {
  apiVersion: 'gateway.envoyproxy.io/v1alpha1',
  kind: 'BackendTrafficPolicy',
  metadata: { name: 'p', namespace: 'shop', uid: 'u1' },
  spec: { targetRefs: [{ group: GW, kind: 'Gateway', name: 'shop' }] },
};

/** Its desired works, one per cluster given, each with the policy's copy. */
export function desired(clusters: string[]) {
  return desiredWorksForPolicy({
    gvr: { group: 'gateway.envoyproxy.io', version: 'v1alpha1', resource: 'backendtrafficpolicies' },
    policy,
    gateways: () => ({ managed: true, downstreamNamespaceTemplate: '{namespace}', clusters, kindAllowed: true }),
    rawFeedback: false,
    statusFeedback: [],
    maxWorkBytes: 500 * 1024,
  });
}

/** The work as the agent reports it: applied at `appliedAt`, its copy Accepted for the Gateway or silent. */
export function live(work: ManifestWork, appliedAt: number, accepted: boolean): KubeObject {
  const applied = { type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', message: '', observedGeneration: 1, lastTransitionTime: new Date(appliedAt).toISOString() };
  const values = accepted ? [{ name: 'ancestor0Status', fieldValue: { type: 'String', string: 'True' } }] : [];
  return {
    ...work,
    metadata: { ...work.metadata, generation: 1 },
    status: { conditions: [applied], resourceStatus: { manifests: [{ resourceMeta: { ordinal: 0 }, statusFeedback: { values }, conditions: [] }] } },
  };
}
