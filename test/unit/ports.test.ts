import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { ephemeralRange, freePort } from '../../testkit/sandbox/ports.ts';

test('freePort picks a bindable loopback port below the ephemeral range, which outgoing connections cannot take', async () => {
  const [low] = ephemeralRange();
  const seen = new Set<number>();
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    assert.ok(port >= 20000 && port < low, `port ${port} lies below the ephemeral range starting at ${low}`);
    seen.add(port);
  }
  assert.ok(seen.size > 1, 'ports are drawn at random, so two sandboxes laid out at once do not pick the same ones');
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    const srv = createServer().once('error', reject);
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
  });
});

test('freePort never hands out a port twice in one process, though none of them is bound yet (a sandbox lays out all its ports first)', async () => {
  const [low] = ephemeralRange();
  const span = Math.max(21000, low) - 20000;
  // A tenth of the range: drawn at random without the memory, a repeat would be near certain (birthday bound).
  const count = Math.min(1000, Math.floor(span / 10));
  const ports = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  assert.equal(new Set(ports).size, ports.length);
});
