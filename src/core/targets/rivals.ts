// Which same-named hub policies of a kind can compete for one spoke object (docs/design/works.md#the-spoke-copy). A copy keeps its
// policy's name and lives in the downstream namespace its Gateway's class renders; two policies can
// only collide where they render a common namespace. With `{namespace}` in every template that never
// happens across hub namespaces, and neither re-enqueueing nor recomputing the others is needed.
import type { KubeObject } from '../k8s/objects.ts';
import { NAMESPACE_PLACEHOLDER, renderDownstreamNamespace } from '../params/params.ts';
import { GATEWAY_GROUP, GATEWAY_KIND, readTargets } from './targetrefs.ts';

/** The downstream-namespace template of the class of Gateway `namespace/name`, if it is one of ours. */
export type TemplateOfGateway = (namespace: string, name: string) => string | undefined;

/** Every downstream namespace a copy of the policy could be placed in, sorted. */
export function copyNamespaces(policy: KubeObject, templateOf: TemplateOfGateway): string[] {
  const namespaces = new Set<string>();
  for (const target of readTargets(policy)) {
    if (target.group !== GATEWAY_GROUP || target.kind !== GATEWAY_KIND) continue;
    const namespace = target.namespace ?? policy.metadata.namespace ?? '';
    const template = templateOf(namespace, target.name);
    if (template !== undefined) namespaces.add(renderDownstreamNamespace(template, namespace));
  }
  return [...namespaces].sort();
}

/**
 * The policies among `sameName` (same kind and name as `policy`, any namespace) whose copies could be
 * the same spoke object as one of `policy`'s: those rendering a downstream namespace in common.
 */
export function possibleRivals(policy: KubeObject, sameName: readonly KubeObject[], templateOf: TemplateOfGateway): KubeObject[] {
  const others = sameName.filter((p) => p !== policy && !(p.metadata.namespace === policy.metadata.namespace && p.metadata.name === policy.metadata.name));
  if (others.length === 0) return [];
  const mine = new Set(copyNamespaces(policy, templateOf));
  if (mine.size === 0) return [];
  return others.filter((p) => copyNamespaces(p, templateOf).some((ns) => mine.has(ns)));
}

/**
 * The hub namespaces whose Gateways a template renders into `downstreamNamespace`: `any` when the template
 * has no `{namespace}` and renders it (every hub namespace shares it), none when it cannot render it.
 */
export function hubNamespacesRendering(template: string, downstreamNamespace: string): 'any' | string[] {
  const parts = template.split(NAMESPACE_PLACEHOLDER);
  if (parts.length === 1) return template === downstreamNamespace ? 'any' : [];
  const escaped = parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // `p0{namespace}p1{namespace}p2` → ^p0(?<ns>…)p1\k<ns>p2$: every occurrence is the same namespace.
  const match = new RegExp(`^${escaped[0]}(?<ns>[a-z0-9-]+)${escaped.slice(1).join('\\k<ns>')}$`).exec(downstreamNamespace);
  return match?.groups?.ns ? [match.groups.ns] : [];
}
