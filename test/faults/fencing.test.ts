// Fault m (docs/reliability.md): a deposed leader with a delete in flight, against the real hub apiserver. A
// leader plans the deletion of a work (it observed it, with its uid and resourceVersion); before its delete
// lands, it loses the lease and the new leader deletes and re-creates that work (or changes it). The late
// delete must not remove what the new leader wrote: it carries the observed uid and resourceVersion as
// preconditions, and the apiserver refuses it (409), which the old applier takes as done, not as a failure.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { workKey } from '../../src/core/keys.ts';
import { WorkApplier } from '../../src/hub/workapplier.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { RESOURCES } from '../../src/kube/resource.ts';
import { createObject, deleteObject, mergePatch } from '../../src/kube/writes.ts';
import { createNamespace, get, removeNamespace } from '../../testkit/fixtures.ts';
import { hubHttp, uniqueName } from '../../testkit/hub.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';
import { createLogger } from '../../src/runtime/logging.ts';

const cluster = uniqueName('faults-fencing');
let http: KubeHttp;

before(async () => {
  http = hubHttp(await testSandbox());
  await createNamespace(http, cluster);
});

after(async () => {
  await removeNamespace(http, cluster);
  http.destroy();
});

function work(name: string): KubeObject {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name, namespace: cluster },
    spec: { workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { v: '1' } }] } },
  };
}

function applier(): { applier: WorkApplier; logs: Record<string, unknown>[] } {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) } });
  return { applier: new WorkApplier({ http, logger }), logs };
}

async function read(name: string): Promise<KubeObject> {
  const w = await get(http, RESOURCES.manifestWorks, cluster, name);
  assert.ok(w, `work ${name} exists`);
  return w;
}

test('m. a deposed leader\'s delete that lands after the new leader re-created the work is refused; the new work stays', async () => {
  await createObject(http, RESOURCES.manifestWorks, work('recreated'));
  const { applier: old, logs } = applier();
  // The old leader's plan: it observed the work as it was.
  const plan = old.plan([], [await read('recreated')]);
  assert.deepEqual(plan.delete, [`${cluster}/recreated`]);
  // The new leader deleted it and wrote it again: same name, new uid.
  assert.equal(await deleteObject(http, RESOURCES.manifestWorks, cluster, 'recreated'), true);
  await createObject(http, RESOURCES.manifestWorks, work('recreated'));
  const current = await read('recreated');
  // The old leader's delete arrives late.
  await old.execute('old-leader', plan);
  const after = await read('recreated');
  assert.equal(after.metadata.uid, current.metadata.uid, 'the work the new leader wrote is still there');
  assert.deepEqual(logs.filter((l) => ['warn', 'error', 'fatal'].includes(String(l.level))), [], 'a refused delete is no failure');
  assert.ok(logs.some((l) => l.work === 'recreated' && String(l.msg).includes('not deleted')), 'the refusal is logged');
});

test('m. a late delete of a work changed since it was observed is refused too; one of the work as observed deletes it; one of a work already gone is done', async () => {
  await createObject(http, RESOURCES.manifestWorks, work('changed'));
  await createObject(http, RESOURCES.manifestWorks, work('unchanged'));
  await createObject(http, RESOURCES.manifestWorks, work('gone'));
  const { applier: old } = applier();
  const plan = old.plan([], [await read('changed'), await read('unchanged'), await read('gone')]);
  await mergePatch(http, RESOURCES.manifestWorks, cluster, 'changed', { metadata: { labels: { touched: 'by-the-new-leader' } } });
  await deleteObject(http, RESOURCES.manifestWorks, cluster, 'gone');
  await old.execute('old-leader', plan);
  assert.ok(await get(http, RESOURCES.manifestWorks, cluster, 'changed'), 'the changed work stays');
  assert.equal(await get(http, RESOURCES.manifestWorks, cluster, 'unchanged'), undefined, 'the work as observed is deleted');
});

test('m. a delete with nothing observed of the work is never sent', async () => {
  await createObject(http, RESOURCES.manifestWorks, work('unobserved'));
  const { applier: old } = applier();
  const plan = old.plan([], []);
  await assert.rejects(old.execute('old-leader', { ...plan, delete: [workKey(cluster, 'unobserved')] }), /not deleted: its uid and resourceVersion were not observed/);
  assert.ok(await get(http, RESOURCES.manifestWorks, cluster, 'unobserved'), 'still there');
});
