// The world every workload works on: the bench's clusters and its hub policies.
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

export interface World {
  clusters: string[];
  policies: KubeObject[];
}
