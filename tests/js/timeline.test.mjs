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
