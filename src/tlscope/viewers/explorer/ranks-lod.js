// Levels of detail for the Ranks timeline. Zoomed out on a thousand ranks, most slices are far
// under a pixel, and painting 320,000 of them per frame cost ~9 ms of CPU at best. A level joins,
// per rank and depth, slices of one colour (one phase) whose gap is under its bin (`bin` µs) into
// one run; a slice shorter than the bin joins the run before it whatever its colour (it would not
// show), and a run still shorter than the bin takes the colour of its longest slice. Drawn where a
// pixel spans at least `bin` µs, a run is off by under a pixel, and a phase a pixel or more long
// keeps its colour (joining neighbours of any colour, as before 2026-11-27, painted a 2 s phase
// in the colour of the 3 s one before it). Level 0 (bin 0) is the slices themselves. Each level is
// flat typed arrays: per lane position and depth, runs sorted by start, so a window is found by
// binary search.
//
// Where neighbouring ranks share a lane (k ranks, a power of two), the lane is drawn from a level
// whose positions are those groups (`pairLevel`, applied log2 k times): per depth, the k ranks'
// runs joined again by the same rule (one open run per colour: neighbouring ranks run the same
// phases a little apart), as if one rank had run all their slices. They cover the pixels the k
// ranks' runs painted one after another did, where ranks overlap in the colour that started last;
// and a lane paints its merged runs, not each rank's: the whole view of the 1,000-rank job (8 ranks
// a lane) paints 30,524 runs instead of its ranks' 117,672, with 125 window searches per depth
// instead of 1,000 (the whole-view draw was 5-6 ms median, up to 22 ms on a loaded machine: a
// dropped frame at 60 Hz while a wheel zoomed out).

/** @typedef {import('/lib/tlscope.js').Timeline} Timeline */

/**
 * @typedef {object} Level
 * @property {number} bin µs
 * @property {Float64Array} start
 * @property {Float64Array} end
 * @property {Uint8Array} colour each run's colour, an index into `palette`
 * @property {Uint32Array} palette the colours (ImageData words)
 * @property {Uint32Array} at where position p's depth d begins: at[p * (depths + 1) + d]
 * @property {Float64Array} longest the longest run of position p and depth d: longest[p * depths + d]
 * @property {number} depths
 */

/**
 * A level's runs as they are written: per (position, depth), slices or runs fed in start order.
 * The open run of each colour is a slot per palette entry, stamped with the (position, depth) it
 * belongs to, so a slice costs a few array reads (a Map there made a level's build 50-90 ms on the
 * 1,000-rank job, and the first paint builds one and its lanes').
 */
class Runs {
  /**
   * @param {number} cap at most this many runs
   * @param {number} positions
   * @param {number} depths
   * @param {number} bin
   * @param {Uint32Array} palette
   */
  constructor(cap, positions, depths, bin, palette) {
    this.bin = bin;
    this.depths = depths;
    this.palette = palette;
    this.start = new Float64Array(cap);
    this.end = new Float64Array(cap);
    this.colour = new Uint8Array(cap);
    /** Each run's longest slice (µs): the colour of a run joining another colour's. */
    this.most = new Float64Array(cap);
    this.at = new Uint32Array(positions * (depths + 1) + 1);
    this.longest = new Float64Array(positions * depths);
    this.n = 0;
    /** Per colour, the run that may still grow, valid where openCell is this cell. */
    this.open = new Int32Array(palette.length);
    this.openCell = new Int32Array(palette.length).fill(-1);
    this.last = -1;
    this.cell = 0;
  }

  /**
   * Position p's depth d begins (d = depths: p's end).
   * @param {number} p
   * @param {number} d
   */
  begin(p, d) {
    this.at[p * (this.depths + 1) + d] = this.n;
    this.last = -1;
    this.cell = p * this.depths + d;
  }

  /**
   * The next slice (or run) in start order: [s, e] µs, colour c (a palette index), its longest slice w µs.
   * @param {number} s
   * @param {number} e
   * @param {number} c
   * @param {number} w
   */
  add(s, e, c, w) {
    const { bin, start, end, colour, most } = this;
    let k = this.openCell[c] === this.cell ? this.open[c] : -1;
    if (k >= 0 && s > end[k] + bin) k = -1;
    const l = this.last;
    if (k < 0 && l >= 0 && s <= end[l] + bin && (e - s < bin || end[l] - start[l] < bin)) k = l;
    if (k < 0) {
      k = this.n++;
      start[k] = s;
      end[k] = e;
      colour[k] = c;
      most[k] = w;
      this.openAt(c, k);
    } else {
      if (e > end[k]) end[k] = e;
      if (w > most[k] && colour[k] !== c) {
        if (this.openCell[colour[k]] === this.cell && this.open[colour[k]] === k) this.openCell[colour[k]] = -1;
        colour[k] = c;
        this.openAt(c, k);
      }
      if (w > most[k]) most[k] = w;
    }
    this.last = k;
    if (end[k] - start[k] > this.longest[this.cell]) this.longest[this.cell] = end[k] - start[k];
  }

  /**
   * Run k is colour c's open run in this cell.
   * @param {number} c
   * @param {number} k
   */
  openAt(c, k) {
    this.open[c] = k;
    this.openCell[c] = this.cell;
  }

  /**
   * The level written: views of the arrays' first runs (their rest, never written, is never made
   * resident; exact copies and arrays grown by doubling measured no smaller after a GC).
   * @returns {Level}
   */
  level() {
    const n = this.n;
    const { bin, palette, at, longest, depths } = this;
    return { bin, start: this.start.subarray(0, n), end: this.end.subarray(0, n), colour: this.colour.subarray(0, n), palette, at, longest, depths };
  }
}

/**
 * A level from the slices in `lists` (per lane position, event indexes sorted by depth then start).
 * @param {Timeline} t
 * @param {Uint32Array[]} lists
 * @param {{ ids: Uint8Array, palette: Uint32Array }} colours per label an index into the palette
 * @param {number} depths the deepest depth + 1
 * @param {number} bin µs
 * @returns {Level}
 */
export function buildLevel(t, lists, { ids, palette }, depths, bin) {
  const runs = new Runs(lists.reduce((n, l) => n + l.length, 0), lists.length, depths, bin, palette);
  lists.forEach((list, p) => {
    let k = 0;
    for (let d = 0; d < depths; d += 1) {
      runs.begin(p, d);
      for (; k < list.length && t.depth[list[k]] === d; k += 1) {
        const i = list[k];
        runs.add(t.start[i], t.start[i] + t.dur[i], ids[t.label[i]], t.dur[i]);
      }
    }
    runs.begin(p, depths);
  });
  return runs.level();
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
 * @returns {number} the runs painted (the hook's `runs`)
 */
export function paintRuns(level, row, { first, last, from: from0, to: to0, shift }) {
  const w = row.length;
  const scale = w / (to0 - from0);
  const { start, end, colour, palette, at, longest, depths } = level;
  let painted = 0;
  for (let d = 0; d < depths; d += 1) {
    for (let p = first; p < last; p += 1) {
      const from = shift ? from0 + shift[p] : from0;
      const to = shift ? to0 + shift[p] : to0;
      const stop = at[p * (depths + 1) + d + 1];
      for (let k = firstFrom(start, at[p * (depths + 1) + d], stop, from - longest[p * depths + d]); k < stop; k += 1) {
        if (start[k] > to) break;
        painted += 1;
        const s = (start[k] - from) * scale;
        const e = (end[k] - from) * scale;
        if (e < 0) continue;
        const x0 = s > 0 ? Math.floor(s) : 0;
        const x1 = Math.min(w, Math.max(x0 + 1, Math.ceil(e)));
        const c = palette[colour[k]];
        // Most runs are a few pixels wide when zoomed out: a loop beats a fill call there.
        if (x1 - x0 > 8) row.fill(c, x0, x1);
        else for (let x = x0; x < x1; x += 1) row[x] = c;
      }
    }
  }
  return painted;
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

/**
 * A level whose positions are pairs of neighbouring positions of `level` (position g: g * 2 and
 * g * 2 + 1; the last alone when they are odd): per depth, the two positions' runs in start order,
 * joined by the level's rule (a run's length standing for its longest slice), times shifted back
 * by shift[p] when given (the new level has none).
 * @param {Level} level
 * @param {Float64Array} [shift] per position of `level`
 * @returns {Level}
 */
export function pairLevel(level, shift) {
  const { bin, depths } = level;
  const positions = (level.at.length - 1) / (depths + 1);
  const groups = Math.ceil(positions / 2);
  const runs = new Runs(level.start.length, groups, depths, bin, level.palette);
  for (let g = 0; g < groups; g += 1) {
    for (let d = 0; d < depths; d += 1) {
      runs.begin(g, d);
      mergePair(level, runs, { a: 2 * g, b: 2 * g + 1 < positions ? 2 * g + 1 : -1, d, shift });
    }
    runs.begin(g, depths);
  }
  return runs.level();
}

/**
 * Position a's and b's runs at depth d (b = -1: none) into `runs`, in start order.
 * @param {Level} level
 * @param {Runs} runs
 * @param {{ a: number, b: number, d: number, shift?: Float64Array }} which
 */
function mergePair(level, runs, { a, b, d, shift }) {
  const { start, end, colour, at, depths } = level;
  let i = at[a * (depths + 1) + d];
  const iEnd = at[a * (depths + 1) + d + 1];
  let j = b >= 0 ? at[b * (depths + 1) + d] : 0;
  const jEnd = b >= 0 ? at[b * (depths + 1) + d + 1] : 0;
  const shiftA = shift ? shift[a] : 0;
  const shiftB = shift && b >= 0 ? shift[b] : 0;
  while (i < iEnd || j < jEnd) {
    const fromA = j >= jEnd || (i < iEnd && start[i] - shiftA <= start[j] - shiftB);
    const k = fromA ? i++ : j++;
    const by = fromA ? shiftA : shiftB;
    runs.add(start[k] - by, end[k] - by, colour[k], end[k] - start[k]);
  }
}
