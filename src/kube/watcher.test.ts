// Which answers to a watch-list make the watcher fall back to paged lists: only an apiserver's refusal of
// the request's parameters, never an outage, a missing kind or a permission.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from './http.ts';
import { refusesWatchList } from './watcher.ts';

const answer = (status: number, reason: string): ApiError => new ApiError(status, reason, '', 'WATCH', '/api/v1/configmaps');

test('a 422 Invalid or a 400 BadRequest is a refusal of watch-list', () => {
  assert.equal(refusesWatchList(answer(422, 'Invalid')), true);
  assert.equal(refusesWatchList(answer(400, 'BadRequest')), true);
});

test('a 403, 404, 410, 429, 5xx, a transport error or a non-API error is not', () => {
  for (const [status, reason] of [[403, 'Forbidden'], [404, 'NotFound'], [410, 'Expired'], [429, 'TooManyRequests'], [500, 'InternalError'], [503, 'ServiceUnavailable'], [0, 'TransportError']] as const) {
    assert.equal(refusesWatchList(answer(status, reason)), false, `${status} ${reason}`);
  }
  assert.equal(refusesWatchList(new Error('boom')), false);
});
