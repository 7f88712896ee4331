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
