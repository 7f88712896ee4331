// WorkApplier's deletes, against a local server that answers each DELETE as the test says: they carry the
// observed uid and resourceVersion, and a refusal by those preconditions (409) or a 404 is no failure.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { KubeObject } from '../core/objects.ts';
import { KubeHttp } from '../kube/http.ts';
import { WorkApplier } from './workapplier.ts';

const servers: Server[] = [];
after(() => servers.forEach((s) => (s.closeAllConnections(), s.close())));

/** Answers a DELETE of work `<name>` with the status `codes[name]`; records each DELETE's body. */
async function apiserver(codes: Record<string, number>): Promise<{ http: KubeHttp; deletes: Map<string, unknown> }> {
  const deletes = new Map<string, unknown>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const name = (req.url ?? '').split('/').pop() ?? '';
      if (req.method === 'DELETE') deletes.set(name, body ? JSON.parse(body) : undefined);
      res.statusCode = codes[name] ?? 200;
      res.end(JSON.stringify({ kind: 'Status', code: res.statusCode, message: name }));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { http: new KubeHttp(kc), deletes };
}

function work(name: string, resourceVersion: string): KubeObject {
  return { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { namespace: 'c1', name, uid: `uid-${name}`, resourceVersion, annotations: {} } };
}

function applier(http: KubeHttp): { applier: WorkApplier; logs: Record<string, unknown>[] } {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  return { applier: new WorkApplier({ http, logger }), logs };
}

test('the plan carries the uid and resourceVersion observed of each work it may delete, and its deletes send them', async () => {
  const { http, deletes } = await apiserver({});
  const { applier: a } = applier(http);
  const plan = a.plan([], [work('w1', '7'), work('w2', '9')]);
  assert.deepEqual(plan.delete, ['c1/w1', 'c1/w2']);
  assert.deepEqual(plan.observed.get('c1/w1'), { uid: 'uid-w1', resourceVersion: '7' });
  await a.execute('owner', plan);
  assert.deepEqual(deletes.get('w1'), { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'uid-w1', resourceVersion: '7' } });
  assert.deepEqual(deletes.get('w2'), { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'uid-w2', resourceVersion: '9' } });
  http.destroy();
});

test('a delete refused by its preconditions (409) or answered 404 is done, logged at info; the refused work is seen again at once', async () => {
  const { http } = await apiserver({ changed: 409, gone: 404 });
  const { applier: a, logs } = applier(http);
  const observed = [work('changed', '3'), work('gone', '4'), work('deleted', '5')];
  await a.execute('owner', a.plan([], observed));
  assert.deepEqual(logs.filter((l) => (l.level as number) >= 40), [], 'no warning, no error');
  assert.deepEqual(
    logs.map((l) => `${String(l.work)}: ${String(l.msg)}`).sort(),
    ['changed: ManifestWork not deleted: it changed or was re-created since it was observed; its next reconcile sees it as it is', 'deleted: ManifestWork deleted', 'gone: ManifestWork already gone'],
  );
  // The cache still shows all three: the deleted and the gone ones are expected to vanish from it; the
  // refused one is not, and is a delete candidate again (with what the cache shows of it by then).
  assert.deepEqual(a.plan([], [work('changed', '8'), work('gone', '4'), work('deleted', '5')]).observed, new Map([['c1/changed', { uid: 'uid-changed', resourceVersion: '8' }]]));
  http.destroy();
});

test('another failure of a delete is thrown after every write was attempted; a key with nothing observed is never deleted', async () => {
  const { http, deletes } = await apiserver({ broken: 500 });
  const { applier: a } = applier(http);
  const plan = a.plan([], [work('broken', '1'), work('fine', '2')]);
  await assert.rejects(a.execute('owner', plan), /500/);
  assert.deepEqual([...deletes.keys()].sort(), ['broken', 'fine']);
  deletes.clear();
  await assert.rejects(a.execute('owner', { ...plan, delete: ['c1/unobserved'] }), /not deleted: its uid and resourceVersion were not observed/);
  assert.equal(deletes.size, 0);
  http.destroy();
});
