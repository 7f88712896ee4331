// The world every workload works on: the bench's clusters and its hub policies, and the works the core builds
// for them.
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import type { ManifestWork } from '../../../src/core/works/manifestwork.ts';
import { worksFor } from '../../../testkit/world.ts';

export interface World {
  clusters: string[];
  policies: KubeObject[];
  /**
   * The works the controller `controllerName` writes for the policies (`crdUid`: the policy CRD's, recorded in
   * their source-ref). Absent: testkit's worksFor, every cluster getting the policy's own copy.
   */
  works?: (controllerName: string, crdUid?: string) => ManifestWork[];
  /** How many PolicyVariants the policies have: a fan-out writes each one's status once. */
  variants?: number;
}

/** The works of `world` for controller `controllerName`, with Gateway `gw` in `namespace`. */
export function worldWorks(world: World, namespace: string, controllerName: string, crdUid?: string): ManifestWork[] {
  return world.works ? world.works(controllerName, crdUid) : worksFor(world.policies, namespace, world.clusters, controllerName, crdUid);
}
