import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDns1123Subdomain } from './dns.ts';
import {
  FALLBACK_REASON,
  MAX_EVENT_MESSAGE_BYTES,
  MAX_EVENT_REASON_LENGTH,
  MAX_SPOKE_TEXT_LENGTH,
  MAX_STATUS_MESSAGE_LENGTH,
  cleanText,
  cutCodePoints,
  cutMessage,
  cutUtf8,
  eventMessage,
  eventName,
  eventReason,
  isEventReason,
  spokeText,
} from './sanitize.ts';

test('eventReason keeps a valid reason as it is', () => {
  for (const reason of ['Enforced', 'TargetNotFound', 'Overridden', 'Http2Error', 'A']) assert.equal(eventReason(reason), reason);
  const longest = `R${'x'.repeat(MAX_EVENT_REASON_LENGTH - 1)}`;
  assert.equal(eventReason(longest), longest);
});

test('eventReason makes UpperCamelCase words of anything else, without characters an Event reason cannot hold', () => {
  assert.equal(eventReason('target_not_found'), 'TargetNotFound');
  assert.equal(eventReason('overridden'), 'Overridden');
  assert.equal(eventReason('Some Reason: with punctuation!'), 'SomeReasonWithPunctuation');
  assert.equal(eventReason('404 not found'), 'NotFound');
  assert.equal(eventReason('<script>alert(1)</script>'), 'ScriptAlert1Script');
  assert.equal(eventReason('Überfall\u0000\nX'), 'BerfallX');
});

test('eventReason cuts to 128 characters and falls back when nothing usable is left', () => {
  const cut = eventReason(`R${'x'.repeat(10_000)}`);
  assert.equal(cut.length, MAX_EVENT_REASON_LENGTH);
  assert.equal(isEventReason(cut), true);
  for (const empty of ['', '!!!', '12345', '\u0000', 'ü']) assert.equal(eventReason(empty), FALLBACK_REASON);
  assert.equal(eventReason('', 'Pending'), 'Pending');
  assert.equal(isEventReason(FALLBACK_REASON), true);
});

test('eventReason always returns a valid reason, whatever the input', () => {
  const samples = ['a', 'a-b', '_', 'x'.repeat(5000), '9'.repeat(200) + 'a', 'ﬀ', '\uD800', 'a\uD83D\uDE00b', ' '.repeat(300) + 'z'];
  for (const sample of samples) assert.equal(isEventReason(eventReason(sample)), true, sample.slice(0, 20));
});

test('cutCodePoints keeps short texts, marks a cut, and never splits a surrogate pair', () => {
  assert.equal(cutCodePoints('short', 10), 'short');
  assert.equal(cutCodePoints('x'.repeat(10), 10), 'x'.repeat(10));
  assert.equal(cutCodePoints('x'.repeat(11), 10), `${'x'.repeat(9)}…`);
  // Ten emoji are twenty UTF-16 units but ten code points: no cut.
  const emoji = '😀'.repeat(10);
  assert.equal(cutCodePoints(emoji, 10), emoji);
  assert.equal(cutCodePoints('😀'.repeat(11), 10), `${'😀'.repeat(9)}…`);
});

test('cutUtf8 keeps to a byte budget, marking the cut, without splitting a character', () => {
  assert.equal(cutUtf8('abc', 3), 'abc');
  assert.equal(cutUtf8('abcd', 3), '…'); // the mark is three bytes
  const cut = cutUtf8('é'.repeat(600), MAX_EVENT_MESSAGE_BYTES);
  assert.ok(Buffer.byteLength(cut, 'utf8') <= MAX_EVENT_MESSAGE_BYTES);
  assert.equal(cut, `${'é'.repeat(510)}…`);
  assert.equal(cutUtf8('😀'.repeat(300), 10), '😀…');
});

test('cleanText replaces control characters (but tab and newline) and lone surrogates', () => {
  assert.equal(cleanText('a\tb\nc'), 'a\tb\nc');
  assert.equal(cleanText('\u001b[31mred\u001b[0m\r\u0000\u007f\u0085'), '\uFFFD[31mred\uFFFD[0m\uFFFD\uFFFD\uFFFD\uFFFD');
  assert.equal(cleanText('x\uD800y\uDC00z😀'), 'x\uFFFDy\uFFFDz😀');
});

test('spokeText cuts to 4096 code points by default, cleans, and refuses what is not a string', () => {
  assert.equal(spokeText('fine'), 'fine');
  const cut = spokeText('m'.repeat(1_000_000));
  assert.equal(cut, `${'m'.repeat(MAX_SPOKE_TEXT_LENGTH - 1)}…`);
  assert.equal(spokeText('name'.repeat(100), 253)?.length, 253);
  assert.equal(spokeText('a\u001bb'), 'a\uFFFDb');
  for (const notText of [undefined, null, 1, true, {}, ['x']]) assert.equal(spokeText(notText), undefined);
});

test('eventMessage is at most 1024 bytes of clean text', () => {
  assert.equal(eventMessage('cluster c1: Enforced'), 'cluster c1: Enforced');
  const long = eventMessage(`\u001b${'é'.repeat(5000)}`);
  assert.ok(Buffer.byteLength(long, 'utf8') <= MAX_EVENT_MESSAGE_BYTES);
  assert.ok(long.startsWith('\uFFFDé') && long.endsWith('…'));
});

test('eventName is <object name>.<suffix> and a valid name of at most 253 characters for any object name', () => {
  const suffix = '0123456789abcdef';
  assert.equal(eventName('my-policy', suffix), `my-policy.${suffix}`);
  const long = eventName('p'.repeat(253), suffix);
  assert.equal(long, `${'p'.repeat(253 - 17)}.${suffix}`);
  assert.equal(long.length, 253);
  for (const name of ['p'.repeat(253), `${'a.'.repeat(120)}-b`, 'Upper_Case', `${'x'.repeat(235)}.-y`, '', '...', 'é']) {
    const event = eventName(name, suffix);
    assert.ok(event.length <= 253, name);
    assert.equal(isDns1123Subdomain(event), true, event);
    assert.ok(event.endsWith(`.${suffix}`) || event === suffix, event);
  }
  // A cut right after a dot leaves no separator before the suffix's dot.
  assert.equal(eventName(`${'x'.repeat(235)}.yyy`, suffix), `${'x'.repeat(235)}.${suffix}`);
});

test('cutMessage cuts to 256 characters, marking the cut, without splitting surrogate pairs', () => {
  assert.equal(MAX_STATUS_MESSAGE_LENGTH, 256);
  assert.equal(cutMessage('short'), 'short');
  assert.equal(cutMessage('x'.repeat(256)), 'x'.repeat(256));
  assert.equal(cutMessage('x'.repeat(300)), `${'x'.repeat(255)}…`);
  const emoji = '😀'.repeat(300);
  const cut = cutMessage(emoji);
  assert.equal(Array.from(cut).length, 256);
  assert.equal(cut, `${'😀'.repeat(255)}…`);
  assert.equal(cutMessage('😀'.repeat(256)), '😀'.repeat(256));
});
