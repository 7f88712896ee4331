// A GroupVersionResource names one served API resource; the core group is the empty string.
import { isDns1123Label, isDns1123Subdomain } from './dns.ts';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** `resource.version.group` (core group: `resource.version`), the `--policies` flag format. */
export function gvrKey(gvr: GroupVersionResource): string {
  return gvr.group === '' ? `${gvr.resource}.${gvr.version}` : `${gvr.resource}.${gvr.version}.${gvr.group}`;
}

/** Parses `authpolicies.v1.kuadrant.io` (or `configmaps.v1` for the core group). */
export function parseGvrKey(key: string): GroupVersionResource {
  const [resource, version, ...groupParts] = key.split('.');
  const group = groupParts.join('.');
  const malformed =
    resource === undefined ||
    version === undefined ||
    !isDns1123Label(resource) ||
    !isDns1123Label(version) ||
    (groupParts.length > 0 && !isDns1123Subdomain(group));
  if (malformed) {
    throw new Error(`invalid policy kind "${key}": expected <resource>.<version>.<group>, e.g. authpolicies.v1.kuadrant.io`);
  }
  return { group, version, resource };
}

export function gvrEquals(a: GroupVersionResource, b: GroupVersionResource): boolean {
  return a.group === b.group && a.version === b.version && a.resource === b.resource;
}

/** The apiVersion of the resource: `group/version`, or `version` for the core group. */
export function groupVersion(gvr: Pick<GroupVersionResource, 'group' | 'version'>): string {
  return gvr.group === '' ? gvr.version : `${gvr.group}/${gvr.version}`;
}

export type GroupResource = Pick<GroupVersionResource, 'group' | 'resource'>;

/**
 * `resource.group` (core group: `resource`): the identity of a policy kind. Policies, their works and
 * their watches are keyed by it, never by version — a version switch in params re-applies in place.
 */
export function groupResourceKey(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** Parses `authpolicies.kuadrant.io` (or `configmaps` for the core group). */
export function parseGroupResourceKey(key: string): GroupResource {
  const dot = key.indexOf('.');
  return dot < 0 ? { group: '', resource: key } : { group: key.slice(dot + 1), resource: key.slice(0, dot) };
}
