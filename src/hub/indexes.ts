// Index functions and key mappings shared by the hub's informers and reconcilers.
import { namespacedKey, type KubeObject } from '../core/k8s/objects.ts';
import { variantTargetKey } from '../core/pipeline/hubview.ts';
import { PLACEMENT_LABEL } from '../core/fleet/placement.ts';
import type { TemplateOfGateway } from '../core/targets/rivals.ts';
import type { Informer } from '../kube/informer.ts';
import type { ClassConfigs } from './classconfigs.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from '../core/targets/targetrefs.ts';

export const BY_GATEWAY = 'gateway';
export const BY_PLACEMENT = 'placement';
export const BY_SOURCE = 'source';
export const BY_NAME = 'name';
export const BY_CLUSTER = 'cluster';
/** Bundles by `cluster/namespace hash` (core/works/bundle.ts BUNDLE_LABEL). */
export const BY_BUNDLE = 'bundle';
/** Mending works by their policy's SOURCE_LABEL value (src/hub/lingeringmender.ts). */
export const BY_MEND = 'mend';
export const BY_NAMESPACE = 'namespace';
export const BY_CLASS = 'class';
/** A PolicyVariant by its target: `namespace/group/kind/name` (core/pipeline/hubview.ts variantTargetKey). */
export const BY_VARIANT_TARGET = 'variant-target';

/** The key BY_VARIANT_TARGET files a PolicyVariant under; none when its targetRef is not an object of strings. */
export function variantTarget(variant: KubeObject): string[] {
  const ref = (variant.spec as { targetRef?: { group?: unknown; kind?: unknown; name?: unknown } } | undefined)?.targetRef;
  if (typeof ref?.kind !== 'string' || typeof ref.name !== 'string') return [];
  return [namespacedKey(variant.metadata.namespace ?? '', variantTargetKey(typeof ref.group === 'string' ? ref.group : '', ref.kind, ref.name))];
}

/** `namespace/name` of every Gateway a policy targets (any namespace: the mapping must see them all). */
export function targetedGateways(policy: KubeObject): string[] {
  return readTargets(policy)
    .filter((t) => t.group === GATEWAY_GROUP && t.kind === GATEWAY_KIND)
    .map((t) => namespacedKey(t.namespace ?? policy.metadata.namespace ?? '', t.name));
}

export function gatewayClassOf(gateway: KubeObject): string[] {
  const cls = (gateway.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
  return typeof cls === 'string' ? [cls] : [];
}

/** `namespace/placement` named by a Gateway's placement label. */
export function placementOfGateway(gateway: KubeObject): string[] {
  const p = gateway.metadata.labels?.[PLACEMENT_LABEL];
  return p ? [`${gateway.metadata.namespace}/${p}`] : [];
}

/** `namespace/placement` a PlacementDecision belongs to. */
export function placementOfDecision(decision: KubeObject): string[] {
  const p = decision.metadata.labels?.[PLACEMENT_LABEL];
  return p ? [`${decision.metadata.namespace}/${p}`] : [];
}


/** The downstream-namespace template of a cached Gateway's class, when the class's params are in force. */
export function gatewayTemplates(gateways: Informer, configs: ClassConfigs): TemplateOfGateway {
  return (namespace, name) => {
    const gateway = gateways.store.get(namespacedKey(namespace, name));
    const [className] = gateway ? gatewayClassOf(gateway) : [];
    return className === undefined ? undefined : configs.get(className)?.params.downstreamNamespace;
  };
}

const WORKS_PATH = /^\/apis\/work\.open-cluster-management\.io\/[^/]+\/namespaces\/([^/]+)\/manifestworks(?:\/|$)/;

/** The write lane of a request path: each cluster's ManifestWorks one lane, every other write of the hub one. */
export function writeLane(path: string): string {
  const cluster = WORKS_PATH.exec(path)?.[1];
  return cluster === undefined ? 'hub' : `cluster/${cluster}`;
}
