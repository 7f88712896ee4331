// The labels of rest_client_request_duration_seconds, from a request's method, path and status: the
// Kubernetes verb, the resource (with subresource) and the status class. Bounded on purpose: no object
// names, no namespaces, no exact codes — a series per (verb, resource, class) whatever the fleet's size.

/** Paths that name no resource: discovery, /version, /openapi, /healthz, … */
export const NON_RESOURCE = 'nonresource';

/** The resource path after `/api/v1` or `/apis/<group>/<version>`, without the namespace part; undefined: not a resource path. */
function resourceParts(path: string): string[] | undefined {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  let rest: string[];
  if (parts[0] === 'api' && parts.length > 2) rest = parts.slice(2);
  else if (parts[0] === 'apis' && parts.length > 3) rest = parts.slice(3);
  else return undefined;
  // /namespaces/<ns>/<resource>…: a namespaced resource; /namespaces and /namespaces/<ns> name Namespaces.
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  return rest;
}

/** `resource` or `resource/subresource`; NON_RESOURCE for discovery and other non-resource paths. */
export function requestResource(path: string): string {
  const rest = resourceParts(path);
  if (!rest || rest.length === 0) return NON_RESOURCE;
  const [resource, , sub] = rest;
  return sub ? `${resource}/${sub}` : resource!;
}

/**
 * The Kubernetes verb of a request: get or list (a GET of one object or of a collection), create, update,
 * patch, delete or deletecollection; the lower-cased method for non-resource paths.
 */
export function requestVerb(method: string, path: string): string {
  const parts = resourceParts(path);
  // A non-resource path (discovery) is a get; a resource path names one object when it has a name.
  const named = parts === undefined || parts.length >= 2;
  switch (method.toUpperCase()) {
    case 'GET':
      return named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

/** `2xx`, `3xx`, `4xx`, `5xx`; `other` for anything else. */
export function codeClass(code: number): string {
  return code >= 200 && code <= 599 ? `${Math.floor(code / 100)}xx` : 'other';
}
