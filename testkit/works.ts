// The ManifestWorks a policy-sync controller wrote on the hub, as the tests look them up.
import type { KubeObject } from '../src/core/k8s/objects.ts';
import { CONTROLLER_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SOURCE_REF_ANNOTATION } from '../src/core/metadatakeys.ts';
import { copyWorks } from '../src/core/works/bundle.ts';
import { controllerLabelValue } from '../src/core/works/manifestwork.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { RESOURCES } from '../src/kube/resource.ts';
import { list } from './fixtures.ts';

/** The label every policy-sync controller puts on its works, whatever its controller name. */
const MANAGED_BY_POLICY_SYNC = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/** The label selector of the works controller `controllerName` writes. */
export function controllerWorksSelector(controllerName: string): string {
  return `${CONTROLLER_LABEL}=${controllerLabelValue(controllerName)}`;
}

/** The hub's ManifestWorks as stored, bundles whole: those of controller `controllerName` (of any when not given). */
export async function ourWorkObjects(http: KubeHttp, of: { controllerName?: string; namespace?: string }): Promise<KubeObject[]> {
  const selector = of.controllerName === undefined ? MANAGED_BY_POLICY_SYNC : controllerWorksSelector(of.controllerName);
  return list(http, RESOURCES.manifestWorks, of.namespace, selector);
}

/**
 * The hub's copy works, as the hub reads them (bundles unpacked: core/works/bundle.ts copyWorks): those of
 * controller `controllerName` (of any policy-sync controller when not given), only those whose source-ref names a
 * policy in `sourceNamespace` when given, and only those of cluster namespace `namespace` when given.
 */
export async function ourWorks(http: KubeHttp, of: { controllerName?: string; sourceNamespace?: string; namespace?: string }): Promise<KubeObject[]> {
  const works = copyWorks(await ourWorkObjects(http, of));
  if (of.sourceNamespace === undefined) return works;
  return works.filter((w) => {
    const ref = w.metadata.annotations?.[SOURCE_REF_ANNOTATION];
    return ref !== undefined && (JSON.parse(ref) as { namespace?: string }).namespace === of.sourceNamespace;
  });
}
