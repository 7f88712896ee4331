// Kubernetes Events on the objects the controllers act for (core/v1 Events, which `kubectl describe`
// shows). A repeat of the same reason and message on the same object bumps the count of the existing
// Event instead of creating another. Best effort: a failed Event write is logged, never fatal.
// Reason, message and name are made valid here whatever the caller passes (spoke text reaches some
// messages): the apiserver refuses an invalid name, and events.k8s.io readers an invalid reason.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeObject } from '../core/k8s/objects.ts';
import { eventMessage, eventName, eventReason } from '../core/k8s/sanitize.ts';
import type { KubeHttp } from './http.ts';
import { RESOURCES, collectionPath, objectPath } from './resource.ts';

export type EventType = 'Normal' | 'Warning';

interface Recorded {
  name: string;
  namespace: string;
  count: number;
}

const MAX_REMEMBERED = 4096;

export class EventRecorder {
  private readonly recent = new Map<string, Recorded>();

  constructor(
    private readonly http: KubeHttp,
    private readonly component: string,
    private readonly logger?: Logger,
    private readonly instance = process.env.HOSTNAME ?? 'policy-sync',
  ) {}

  async record(object: KubeObject, type: EventType, rawReason: string, rawMessage: string): Promise<void> {
    const reason = eventReason(rawReason);
    const message = eventMessage(rawMessage);
    const namespace = object.metadata.namespace ?? 'default';
    const key = `${object.metadata.uid ?? `${namespace}/${object.metadata.name}`}|${reason}|${message}`;
    const now = new Date().toISOString();
    const seen = this.recent.get(key);
    try {
      if (seen) {
        seen.count++;
        await this.http.request('PATCH', objectPath(RESOURCES.coreEvents, seen.namespace, seen.name), {
          body: { count: seen.count, lastTimestamp: now },
          contentType: 'application/merge-patch+json',
        });
        return;
      }
      const name = eventName(object.metadata.name, randomBytes(8).toString('hex'));
      await this.http.request('POST', collectionPath(RESOURCES.coreEvents, namespace), {
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace },
          involvedObject: {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.metadata.name,
            namespace: object.metadata.namespace,
            uid: object.metadata.uid,
            resourceVersion: object.metadata.resourceVersion,
          },
          reason,
          message,
          type,
          source: { component: this.component },
          reportingComponent: this.component,
          reportingInstance: this.instance,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
      if (this.recent.size >= MAX_REMEMBERED) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(key, { name, namespace, count: 1 });
    } catch (err) {
      if (seen) this.recent.delete(key);
      this.logger?.warn({ object: `${namespace}/${object.metadata.name}`, reason, err: String(err) }, 'could not record event');
    }
  }
}
