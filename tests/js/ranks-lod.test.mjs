// The Ranks timeline's levels of detail (explorer/ranks-lod.js) on every corpus trace's
// timeline.bin (TLSCOPE_TIMELINE_CASES, set by tests/test_js.py): level 0 paints exactly what a
// plain painter of every slice paints, and a coarser level, drawn where a pixel spans at least its
// bin, paints the same pixels to within one (a merged run only bridges gaps under a pixel).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decodeTimeline } from '../../src/tlscope/viewers/lib/tlscope.js';
import { binFor, buildLevel, paintRuns } from '../../src/tlscope/viewers/explorer/ranks-lod.js';

const CASES = process.env.TLSCOPE_TIMELINE_CASES ? JSON.parse(process.env.TLSCOPE_TIMELINE_CASES) : null;
const BG = 0;
const W = 700;

/** Each rank's (lane's) event indexes sorted by depth then start, as ranks-timeline.js makes them. */
function lanes(t) {
  const ranks = [...new Set(t.rank)].sort((a, b) => a - b);
  const lists = ranks.map((r) => {
    const list = [];
    for (let i = 0; i < t.count; i += 1) if (t.rank[i] === r) list.push(i);
    return Uint32Array.from(list.sort((a, b) => t.depth[a] - t.depth[b] || t.start[a] - t.start[b]));
  });
  let depth = 0;
  for (let i = 0; i < t.count; i += 1) depth = Math.max(depth, t.depth[i]);
  return { lists, depths: depth + 1 };
}

/** Every slice of lane p painted outermost first, one by one. */
function plainPaint(t, list, { ids, palette }, from, to) {
  const row = new Uint32Array(W);
  const scale = W / (to - from);
  const order = [...list].sort((a, b) => t.depth[a] - t.depth[b]);
  for (const i of order) {
    const s = (t.start[i] - from) * scale;
    const e = s + t.dur[i] * scale;
    if (e < 0 || t.start[i] > to) continue;
    const x0 = s > 0 ? Math.floor(s) : 0;
    row.fill(palette[ids[t.label[i]]], x0, Math.min(W, Math.max(x0 + 1, Math.ceil(e))));
  }
  return row;
}

test('levels paint the slices: exactly at level 0, to within a pixel above', { skip: !CASES && 'TLSCOPE_TIMELINE_CASES not set (run through pytest)' }, () => {
  let compared = 0;
  for (const c of CASES) {
    const t = decodeTimeline(readFileSync(c.bin));
    if (t.count === 0) continue;
    const { lists, depths } = lanes(t);
    // As ranks-timeline.js gives them: each label an index into a palette of at most 255 colours
    // (phases share colours there; here labels past the palette's size share too).
    const palette = Uint32Array.from({ length: 255 }, (_, c) => c + 1);
    const colours = { ids: Uint8Array.from({ length: t.labels.length / 2 }, (_, l) => l % 255), palette };
    let first = Infinity;
    let last = -Infinity;
    for (let i = 0; i < t.count; i += 1) {
      first = Math.min(first, t.start[i]);
      last = Math.max(last, t.start[i] + t.dur[i]);
    }
    const zero = buildLevel(t, lists, colours, depths, 0);
    // The whole trace, and its middle tenth.
    for (const [from, to] of [[first, last + 1], [first + (last - first) * 0.45, first + (last - first) * 0.55 + 1]]) {
      const bin = binFor((to - from) / W);
      const level = buildLevel(t, lists, colours, depths, bin);
      lists.forEach((list, p) => {
        const plain = plainPaint(t, list, colours, from, to);
        const row0 = new Uint32Array(W);
        paintRuns(zero, row0, { first: p, last: p + 1, from, to });
        assert.deepEqual(row0, plain, `${c.bin} lane ${p}: level 0`);
        const row = new Uint32Array(W);
        paintRuns(level, row, { first: p, last: p + 1, from, to });
        for (let x = 0; x < W; x += 1) {
          if (plain[x] !== BG) assert.notEqual(row[x], BG, `${c.bin} lane ${p} bin ${bin}: pixel ${x} lost`);
          if (row[x] !== BG) assert.ok(plain[x] !== BG || plain[x - 1] || plain[x + 1], `${c.bin} lane ${p} bin ${bin}: pixel ${x} added`);
        }
        compared += 1;
      });
    }
  }
  assert.ok(compared > 40, `lanes compared: ${compared}`);
});

test('a level merges runs: fewer than the slices once a pixel spans seconds', { skip: !CASES && 'TLSCOPE_TIMELINE_CASES not set (run through pytest)' }, () => {
  const biggest = CASES.map((c) => decodeTimeline(readFileSync(c.bin))).sort((a, b) => b.count - a.count)[0];
  const { lists, depths } = lanes(biggest);
  const colours = { ids: new Uint8Array(biggest.labels.length / 2), palette: Uint32Array.of(1) };
  const slices = buildLevel(biggest, lists, colours, depths, 0);
  const coarse = buildLevel(biggest, lists, colours, depths, 4 ** 10);
  assert.equal(slices.start.length, biggest.count);
  assert.ok(coarse.start.length < slices.start.length / 2, `${coarse.start.length} runs of ${slices.start.length} slices`);
});
