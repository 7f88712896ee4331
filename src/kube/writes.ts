// The writes the controllers make: creates, server-side apply, whole replaces fenced on a resourceVersion, merge
// patches (object or status subresource) and deletes, each against a path and with our field manager.
import type { KubeObject } from '../core/k8s/objects.ts';
import { isNotFound, type KubeHttp, type RequestOptionsLite } from './http.ts';
import { collectionPath, objectPath, type ResourceRef } from './resource.ts';

export const FIELD_MANAGER = 'policy-sync';

export interface WriteOptions {
  fieldManager?: string;
  subresource?: string;
}

/** The answer is not needed (the caches will show the object): it is drained unparsed, and nothing is returned. */
export interface Discarding {
  discardResponse: true;
}

function write<T>(http: KubeHttp, method: string, path: string, o: RequestOptionsLite, options: object): Promise<T | void> {
  return 'discardResponse' in options && options.discardResponse === true ? http.send(method, path, o) : http.request<T>(method, path, o);
}

type ApplyOptions = WriteOptions & { force?: boolean };

export function serverSideApply(http: KubeHttp, resource: ResourceRef, object: KubeObject, options: ApplyOptions & Discarding): Promise<void>;
export function serverSideApply<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, object: KubeObject, options?: ApplyOptions): Promise<T>;
export function serverSideApply<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, object: KubeObject, options: ApplyOptions = {}): Promise<T | void> {
  const path = objectPath(resource, object.metadata.namespace, object.metadata.name, options.subresource);
  const query = { fieldManager: options.fieldManager ?? FIELD_MANAGER, force: options.force ?? true };
  return write<T>(http, 'PATCH', path, { query, body: object, contentType: 'application/apply-patch+yaml' }, options);
}

type CreateOptions = Omit<WriteOptions, 'subresource'>;

/** POST: the object must not exist (409 AlreadyExists otherwise). */
export function createObject(http: KubeHttp, resource: ResourceRef, object: KubeObject, options: CreateOptions & Discarding): Promise<void>;
export function createObject<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, object: KubeObject, options?: CreateOptions): Promise<T>;
export function createObject<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, object: KubeObject, options: CreateOptions = {}): Promise<T | void> {
  const query = { fieldManager: options.fieldManager ?? FIELD_MANAGER };
  return write<T>(http, 'POST', collectionPath(resource, object.metadata.namespace), { query, body: object }, options);
}

export function mergePatch(http: KubeHttp, resource: ResourceRef, namespace: string | undefined, name: string, patch: unknown, options: WriteOptions & Discarding): Promise<void>;
export function mergePatch<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, namespace: string | undefined, name: string, patch: unknown, options?: WriteOptions): Promise<T>;
export function mergePatch<T extends KubeObject>(
  http: KubeHttp,
  resource: ResourceRef,
  namespace: string | undefined,
  name: string,
  patch: unknown,
  options: WriteOptions = {},
): Promise<T | void> {
  const path = objectPath(resource, namespace, name, options.subresource);
  const query = { fieldManager: options.fieldManager ?? FIELD_MANAGER };
  return write<T>(http, 'PATCH', path, { query, body: patch, contentType: 'application/merge-patch+json' }, options);
}

/** PUT: the whole object, fenced on its metadata.resourceVersion (409 Conflict when it changed since). */
export function replaceObject<T extends KubeObject>(http: KubeHttp, resource: ResourceRef, object: KubeObject, options: CreateOptions = {}): Promise<T> {
  if (!object.metadata.resourceVersion) throw new Error(`replace of ${object.metadata.namespace ?? ''}/${object.metadata.name}: no resourceVersion to fence on`);
  const query = { fieldManager: options.fieldManager ?? FIELD_MANAGER };
  return http.request<T>('PUT', objectPath(resource, object.metadata.namespace, object.metadata.name), { query, body: object });
}

/** What a delete requires of the object still there: the apiserver refuses it (409 Conflict) otherwise. */
export interface Preconditions {
  /** Not another object of the same name, created since. */
  uid?: string;
  /** Not changed since (by anyone: a spec, metadata or status write). */
  resourceVersion?: string;
}

/**
 * Deletes; false when the object is missing (it counts as deleted). With `preconditions` (sent as
 * DeleteOptions) an object that was re-created or changed since is not deleted: an ApiError 409 is thrown.
 */
export async function deleteObject(
  http: KubeHttp,
  resource: ResourceRef,
  namespace: string | undefined,
  name: string,
  preconditions?: Preconditions,
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
