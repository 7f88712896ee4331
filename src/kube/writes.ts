// The writes the controllers make: creates, server-side apply, merge patches (object or status
// subresource) and deletes, each against a path and with our field manager.
import type { KubeObject } from '../core/objects.ts';
import { isNotFound, type KubeHttp, type RequestOptionsLite } from './http.ts';
import { collectionPath, objectPath, type ResourceRef } from './resource.ts';

export const FIELD_MANAGER = 'policy-sync';

export interface WriteOptions {
  fieldManager?: string;
  subresource?: string;
  /** The answer is not needed (the caches will show the object): it is not parsed, and undefined is returned. */
  discardResponse?: boolean;
}

function write<T>(http: KubeHttp, method: string, path: string, o: RequestOptionsLite, discard: boolean | undefined): Promise<T> {
  return discard ? (http.send(method, path, o) as Promise<unknown> as Promise<T>) : http.request<T>(method, path, o);
}

export function serverSideApply<T extends KubeObject>(
  http: KubeHttp,
  resource: ResourceRef,
  object: KubeObject,
  options: WriteOptions & { force?: boolean } = {},
): Promise<T> {
  const path = objectPath(resource, object.metadata.namespace, object.metadata.name, options.subresource);
  const query = { fieldManager: options.fieldManager ?? FIELD_MANAGER, force: options.force ?? true };
  return write<T>(http, 'PATCH', path, { query, body: object, contentType: 'application/apply-patch+yaml' }, options.discardResponse);
}

/** POST: the object must not exist (409 AlreadyExists otherwise). */
export function createObject<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, object: KubeObject, options: Omit<WriteOptions, 'subresource'> = {}): Promise<T> {
  const query = { fieldManager: options.fieldManager ?? FIELD_MANAGER };
  return write<T>(http, 'POST', collectionPath(resource, object.metadata.namespace), { query, body: object }, options.discardResponse);
}

export function mergePatch<T extends KubeObject>(
  http: KubeHttp,
  resource: ResourceRef,
  namespace: string | undefined,
  name: string,
  patch: unknown,
  options: WriteOptions = {},
): Promise<T> {
  const path = objectPath(resource, namespace, name, options.subresource);
  const query = { fieldManager: options.fieldManager ?? FIELD_MANAGER };
  return write<T>(http, 'PATCH', path, { query, body: patch, contentType: 'application/merge-patch+json' }, options.discardResponse);
}

export async function deleteObject(
  http: KubeHttp,
  resource: ResourceRef,
  namespace: string | undefined,
  name: string,
  preconditions?: { uid?: string; resourceVersion?: string },
): Promise<boolean> {
  try {
    await http.request('DELETE', objectPath(resource, namespace, name), {
      body: preconditions ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions } : undefined,
    });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

export async function getObject<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, namespace: string | undefined, name: string): Promise<T | undefined> {
  try {
    return await http.request<T>('GET', objectPath(resource, namespace, name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
