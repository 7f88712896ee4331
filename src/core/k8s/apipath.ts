// What an apiserver request path names: the resource (and subresource) a write is to, for the
// rest_client_writes_total metric.
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Not persisted objects (reviews) and the lease heartbeat: not what "writes" means to an operator. */
const NOT_WRITES = new Set(['selfsubjectaccessreviews', 'subjectaccessreviews', 'tokenreviews', 'leases']);

/** The resource (with subresource) a mutating request writes, from its path; undefined for reads. */
export function writtenResource(method: string, path: string): string | undefined {
  if (!WRITES.has(method)) return undefined;
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  // /api/v1[/namespaces/ns]/resource[/name[/sub]] or /apis/group/version[/namespaces/ns]/resource[/name[/sub]]
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [resource, , sub] = rest;
  if (!resource || NOT_WRITES.has(resource)) return undefined;
  return sub ? `${resource}/${sub}` : resource;
}
