import assert from 'node:assert/strict';
import { test } from 'node:test';
import { imageNodeFlags } from '../../hack/bench/image.ts';

test('the bench runs the controller with the node flags of the image entrypoint', () => {
  assert.deepEqual(imageNodeFlags(), ['--max-semi-space-size=4']);
  assert.deepEqual(imageNodeFlags('FROM x\nENTRYPOINT ["node", "/app/bin/policy-sync.js"]\n'), []);
  assert.throws(() => imageNodeFlags('FROM x\nENTRYPOINT ["/bin/sh"]\n'), /no ENTRYPOINT/);
});
