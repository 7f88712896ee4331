// What the write helpers put on the wire, against a local server that records each request.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError, KubeHttp } from './http.ts';
import { RESOURCES } from './resource.ts';
import { deleteObject } from './writes.ts';

const servers: Server[] = [];
after(() => servers.forEach((s) => (s.closeAllConnections(), s.close())));

async function recording(status: number): Promise<{ http: KubeHttp; seen: { method: string; url: string; body: string }[] }> {
  const seen: { method: string; url: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      res.statusCode = status;
      res.end(JSON.stringify({ kind: 'Status', code: status, reason: status === 409 ? 'Conflict' : 'NotFound', message: 'm' }));
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
  return { http: new KubeHttp(kc), seen };
}

test('deleteObject sends its preconditions as DeleteOptions; a refusal is a 409 ApiError, a missing object false', async () => {
  const refused = await recording(409);
  const preconditions = { uid: 'u-1', resourceVersion: '42' };
  await assert.rejects(deleteObject(refused.http, RESOURCES.manifestWorks, 'c1', 'w', preconditions), (err: unknown) => err instanceof ApiError && err.status === 409);
  assert.equal(refused.seen[0]?.method, 'DELETE');
  assert.equal(refused.seen[0]?.url, '/apis/work.open-cluster-management.io/v1/namespaces/c1/manifestworks/w');
  assert.deepEqual(JSON.parse(refused.seen[0]?.body ?? ''), { apiVersion: 'v1', kind: 'DeleteOptions', preconditions });
  const missing = await recording(404);
  assert.equal(await deleteObject(missing.http, RESOURCES.manifestWorks, 'c1', 'w', preconditions), false);
  assert.equal(await deleteObject(missing.http, RESOURCES.manifestWorks, 'c1', 'w'), false);
  assert.equal(missing.seen[1]?.body, '', 'without preconditions no body');
  refused.http.destroy();
  missing.http.destroy();
});
