// Levels of detail for the Ranks timeline. Zoomed out on a thousand ranks, most slices are far
// under a pixel, and painting 320,000 of them per frame cost ~9 ms of CPU at best. A level merges,
// per rank and depth, slices whose gap is under its bin (`bin` µs) into one run coloured as its
// longest slice; drawn where a pixel spans at least `bin` µs, a run is off by under a pixel. Level
// 0 (bin 0) is the slices themselves. Each level is flat typed arrays: per lane position and depth,
// runs sorted by start, so a window is found by binary search.

/** @typedef {import('/lib/tlscope.js').Timeline} Timeline */

/**
 * @typedef {object} Level
 * @property {number} bin µs
 * @property {Float64Array} start
 * @property {Float64Array} end
 * @property {Uint32Array} colour
 * @property {Uint32Array} at where position p's depth d begins: at[p * (depths + 1) + d]
 * @property {Float64Array} longest the longest run of position p and depth d: longest[p * depths + d]
 * @property {number} depths
 */

/**
 * A level from the slices in `lists` (per lane position, event indexes sorted by depth then start).
 * @param {Timeline} t
 * @param {Uint32Array[]} lists
 * @param {Uint32Array} colours per label
 * @param {number} depths the deepest depth + 1
 * @param {number} bin µs
 * @returns {Level}
 */
export function buildLevel(t, lists, colours, depths, bin) {
  const total = lists.reduce((n, l) => n + l.length, 0);
  const start = new Float64Array(total);
  const end = new Float64Array(total);
  const colour = new Uint32Array(total);
  const at = new Uint32Array(lists.length * (depths + 1) + 1);
  const longest = new Float64Array(lists.length * depths);
  let n = 0;
  lists.forEach((list, p) => {
    let k = 0;
    for (let d = 0; d < depths; d += 1) {
      at[p * (depths + 1) + d] = n;
      let most = -1;
      for (; k < list.length && t.depth[list[k]] === d; k += 1) {
        const i = list[k];
        const s = t.start[i];
        const e = s + t.dur[i];
        if (most >= 0 && s <= end[n - 1] + bin) {
          if (e > end[n - 1]) end[n - 1] = e;
          if (t.dur[i] > most) {
            most = t.dur[i];
            colour[n - 1] = colours[t.label[i]];
          }
        } else {
          start[n] = s;
          end[n] = e;
          colour[n] = colours[t.label[i]];
          most = t.dur[i];
          n += 1;
        }
        const span = end[n - 1] - start[n - 1];
        if (span > longest[p * depths + d]) longest[p * depths + d] = span;
      }
    }
    at[p * (depths + 1) + depths] = n;
  });
  return { bin, start: start.subarray(0, n), end: end.subarray(0, n), colour: colour.subarray(0, n), at, longest, depths };
}

/**
 * The first run in [lo, hi) starting at or after `time`.
 * @param {Float64Array} start
 * @param {number} lo
 * @param {number} hi
 * @param {number} time
 */
function firstFrom(start, lo, hi, time) {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (start[mid] < time) a = mid + 1;
    else b = mid;
  }
  return a;
}

/**
 * Paint lane positions [first, last) of `level` into `row` (w px, window [from, to] µs, position p's
 * times shifted back by shift[p] when given), outermost depth first across the lane's ranks, so
 * the innermost phase running shows.
 * @param {Level} level
 * @param {Uint32Array} row
 * @param {{ first: number, last: number, from: number, to: number, shift?: Float64Array }} lane
 */
export function paintRuns(level, row, { first, last, from: from0, to: to0, shift }) {
  const w = row.length;
  const scale = w / (to0 - from0);
  const { start, end, colour, at, longest, depths } = level;
  for (let d = 0; d < depths; d += 1) {
    for (let p = first; p < last; p += 1) {
      const from = shift ? from0 + shift[p] : from0;
      const to = shift ? to0 + shift[p] : to0;
      const stop = at[p * (depths + 1) + d + 1];
      for (let k = firstFrom(start, at[p * (depths + 1) + d], stop, from - longest[p * depths + d]); k < stop; k += 1) {
        if (start[k] > to) break;
        const s = (start[k] - from) * scale;
        const e = (end[k] - from) * scale;
        if (e < 0) continue;
        const x0 = s > 0 ? Math.floor(s) : 0;
        const x1 = Math.min(w, Math.max(x0 + 1, Math.ceil(e)));
        const c = colour[k];
        // Most runs are a few pixels wide when zoomed out: a loop beats a fill call there.
        if (x1 - x0 > 8) row.fill(c, x0, x1);
        else for (let x = x0; x < x1; x += 1) row[x] = c;
      }
    }
  }
}

/**
 * The bin of the level to draw with `usPerPx` µs per pixel: the largest power of 4 (from 1,024 µs)
 * not above it, or 0 (the slices themselves) when a pixel is under a millisecond.
 * @param {number} usPerPx
 */
export function binFor(usPerPx) {
  if (usPerPx < 1024) return 0;
  return 4 ** Math.floor(Math.log(usPerPx) / Math.log(4));
}
