// The writes the controllers make: creates, server-side apply, merge patches (object or status
// subresource) and deletes, each against a path and with our field manager.
import type { KubeObject } from '../core/objects.ts';
import { isNotFound, type KubeHttp } from './http.ts';
import { collectionPath, objectPath, type ResourceRef } from './resource.ts';

export const FIELD_MANAGER = 'policy-sync';

export function serverSideApply<T extends KubeObject>(
  http: KubeHttp,
  resource: ResourceRef,
  object: KubeObject,
  options: { fieldManager?: string; force?: boolean; subresource?: string } = {},
): Promise<T> {
  return http.request<T>('PATCH', objectPath(resource, object.metadata.namespace, object.metadata.name, options.subresource), {
    query: { fieldManager: options.fieldManager ?? FIELD_MANAGER, force: options.force ?? true },
    body: object,
    contentType: 'application/apply-patch+yaml',
  });
}

/** POST: the object must not exist (409 AlreadyExists otherwise). */
export function createObject<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, object: KubeObject, options: { fieldManager?: string } = {}): Promise<T> {
  return http.request<T>('POST', collectionPath(resource, object.metadata.namespace), {
    query: { fieldManager: options.fieldManager ?? FIELD_MANAGER },
    body: object,
  });
}

export function mergePatch<T extends KubeObject>(
  http: KubeHttp,
  resource: ResourceRef,
  namespace: string | undefined,
  name: string,
  patch: unknown,
  options: { fieldManager?: string; subresource?: string } = {},
): Promise<T> {
  return http.request<T>('PATCH', objectPath(resource, namespace, name, options.subresource), {
    query: { fieldManager: options.fieldManager ?? FIELD_MANAGER },
    body: patch,
    contentType: 'application/merge-patch+json',
  });
}

/** Deletes; a missing object counts as deleted. `resourceVersion` guards against deleting a newer object. */
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
