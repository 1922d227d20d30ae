// timeline.bin's JS decoder against the Python reference decoder: every event of every corpus
// trace's timeline.bin (and of a file of corner cases), field for field. TLSCOPE_TIMELINE_CASES
// (set by tests/test_js.py) lists the files and the events Python read from each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decodeTimeline, TimelineError } from '../../src/tlscope/viewers/lib/tlscope.js';

const CASES = process.env.TLSCOPE_TIMELINE_CASES ? JSON.parse(process.env.TLSCOPE_TIMELINE_CASES) : null;

test('the JS decoder reads what the Python decoder reads, event for event', { skip: !CASES && 'TLSCOPE_TIMELINE_CASES not set (run through pytest)' }, () => {
  assert.ok(CASES.length > 16, 'every corpus trace and the corner cases');
  let events = 0;
  for (const c of CASES) {
    const timeline = decodeTimeline(readFileSync(c.bin));
    const expected = JSON.parse(readFileSync(c.expected, 'utf8'));
    assert.equal(timeline.count, expected.length, c.bin);
    const got = timeline.events();
    for (let i = 0; i < got.length; i += 1) assert.deepEqual(got[i], expected[i], `${c.bin} event ${i}`);
    events += got.length;
  }
  assert.ok(events > 1000);
});

test('a file that is not a timeline.bin, or is cut short, is refused', { skip: !CASES && 'TLSCOPE_TIMELINE_CASES not set (run through pytest)' }, () => {
  const data = readFileSync(CASES[0].bin);
  assert.throws(() => decodeTimeline(new Uint8Array(10)), TimelineError);
  assert.throws(() => decodeTimeline(Buffer.concat([Buffer.from('NOTATIME'), data.subarray(8)])), /bad magic/);
  assert.throws(() => decodeTimeline(data.subarray(0, data.length - 3)), TimelineError);
});

/**
 * A version-2 file by hand: one block of rank 0 at base 1000 whose own tables map label 0 and
 * compile id 1 to the file's first ones, `records` its records' bytes; tables: strings "a" and
 * "[0/0]", label ("a", "a"), compile id "[0/0]".
 * @param {number[]} records
 * @param {{ events?: number, n?: number, tables?: number[] }} [options]
 */
function handMade(records, options = {}) {
  const body = [1, 0, 1, 0, ...records];
  const tables = options.tables ?? [2, 1, 0x61, 5, ...Buffer.from('[0/0]'), 1, 0, 0, 1, 1];
  const out = Buffer.alloc(40 + 20 + body.length + tables.length);
  out.write('TLSTIME\0', 0, 'latin1');
  out.writeUInt16LE(2, 8);
  out.writeBigUInt64LE(BigInt(60 + body.length), 16);
  out.writeBigUInt64LE(BigInt(options.events ?? 1), 24);
  out.writeUInt32LE(0, 40);
  out.writeUInt32LE(options.n ?? 1, 44);
  out.writeUInt32LE(body.length, 48);
  out.writeBigInt64LE(1000n, 52);
  Buffer.from(body).copy(out, 60);
  Buffer.from(tables).copy(out, 60 + body.length);
  return new Uint8Array(out);
}

test('version 2 by hand: a record read, damaged ones refused with TimelineError', () => {
  // kind 1 (complete) at depth 2; start +300 (zigzag 600 = 0xd8 0x04); duration 5; label 0; compile id 1
  const event = decodeTimeline(handMade([1 | (2 << 3), 0xd8, 0x04, 5, 0, 1])).event(0);
  assert.deepEqual(event, { rank: 0, name: 'a', cat: 'a', start_us: 1300, dur_us: 5, compile_id: '[0/0]', depth: 2, kind: 'complete' });
  // depth 31 escapes to the next byte; an instant has no duration; zigzag 1 = -1
  const deep = decodeTimeline(handMade([2 | (31 << 3), 200, 1, 0, 0])).event(0);
  assert.deepEqual([deep.depth, deep.start_us, deep.dur_us, deep.compile_id], [200, 999, 0, null]);
  assert.throws(() => decodeTimeline(handMade([5, 0, 0, 0])), /kind 5/);
  assert.throws(() => decodeTimeline(handMade([2, 0, 1, 0])), TimelineError, 'a label the block does not have');
  assert.throws(() => decodeTimeline(handMade([2, 0, 0, 2])), TimelineError, 'a compile id the block does not have');
  assert.throws(() => decodeTimeline(handMade([2, 0, 0, 0, 0])), TimelineError, 'a byte after the last record');
  assert.throws(() => decodeTimeline(handMade([2, 0, 0, 0], { events: 2 ** 40 })), TimelineError);
  assert.throws(() => decodeTimeline(handMade([2, 0, 0, 0], { n: 2, events: 2 })), TimelineError);
  assert.throws(() => decodeTimeline(handMade([2, 0, 0, 0], { tables: [0xff, 0xff, 0xff, 0xff, 0x0f] })), TimelineError);
});
