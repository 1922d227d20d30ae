// The Ranks view's timeline: timeline.bin (docs/FORMAT.md section 17) on a canvas, one lane per
// rank. Built for a thousand ranks and hundreds of thousands of events: each frame paints one row
// of pixels per lane into an ImageData (a typed-array fill per slice, a copy per pixel line), so
// its cost is bounded by the lanes and the canvas, not by canvas calls per slice. When the lanes
// do not fit (under MIN_LANE px each) neighbouring ranks share a lane, by powers of two so the
// groupings stay put while zooming; zooming in expands them back to one rank per lane.
//
// Wheel: zoom time and lanes around the pointer (Alt: time only, Shift: lanes only; a sideways
// wheel pans). Drag: pan. Keys: W/S or +/- zoom, A/D or ←/→ pan time, ↑/↓ pan lanes, 0 resets.
// Hover: the innermost slice under the pointer; click: that slice's compile on its rank.

import { setTestHook } from '/lib/tlscope.js';
import { binFor, buildLevel, pairLevel, paintRuns } from './ranks-lod.js';

/** @typedef {import('/lib/tlscope.js').Timeline} Timeline */

export const GUTTER = 72;
/** Ranks whose first events are further apart than this (µs: an hour) get a clock each. */
const ALIGN_AFTER = 3600e6;
export const AXIS = 18;
const MIN_LANE = 3;
const BG = 0xfffafafa; // ImageData words are little-endian RGBA: 0xAABBGGRR
/** Phases by their colour (FORMAT.md section 14's phases first). */
const PHASE_COLOURS = /** @type {Record<string, string>} */ ({
  dynamo: '#9db7e0', compile_attempt: '#7fa6dd', bytecode_tracing: '#5b8fd6', build_guards: '#e0a64f',
  backend_compile: '#b48ad6', aot_collect_metadata: '#c99be0', create_aot_dispatcher_function: '#9f7bd0',
  inductor_compile: '#5fb88a', compile_fx_inner: '#4aa57a', fx_codegen_and_compile: '#3e9a6d',
  async_compile: '#8bc34a', TritonBundler: '#c0ca33', entire_backward_compile: '#f08f6f', compile_file: '#26a69a',
});
const SPARE = ['#e57373', '#64b5f6', '#ffb74d', '#a1887f', '#90a4ae', '#f06292', '#4db6ac', '#dce775', '#ba68c8', '#7986cb'];

/**
 * A phase's colour: an event name without its attempt number (`compile_attempt_2`), by table or by hash.
 * @param {string} name
 * @returns {string}
 */
export function phaseColour(name) {
  const phase = name.replace(/_\d+$/, '');
  if (PHASE_COLOURS[phase]) return PHASE_COLOURS[phase];
  let h = 0;
  for (let i = 0; i < phase.length; i += 1) h = (h * 31 + phase.charCodeAt(i)) >>> 0;
  return SPARE[h % SPARE.length];
}

/**
 * '#rrggbb' as an ImageData word.
 * @param {string} hex
 */
function word(hex) {
  const v = parseInt(hex.slice(1), 16);
  return (0xff000000 | ((v & 0xff) << 16) | (v & 0xff00) | ((v >> 16) & 0xff)) >>> 0;
}

/**
 * Per lane position (a rank, ranks ascending), its events' indexes sorted by depth then start
 * (what ranks-lod.js's levels are built from; a hover searches them). One counting sort of every
 * event by (position, depth), stable, so file order (start order, almost always) stays within a
 * bucket; each list is a view of one array (a thousand ranks' lists were 2,000 arrays and five
 * passes over the events, a tenth of the first paint).
 * @param {Timeline} t
 * @param {number[]} ranks
 */
function indexByRank(t, ranks) {
  const pos = new Map(ranks.map((r, i) => [r, i]));
  let maxDepth = 0;
  for (let i = 0; i < t.count; i += 1) if (t.depth[i] > maxDepth) maxDepth = t.depth[i];
  const depths = maxDepth + 1;
  const at = new Uint32Array(ranks.length * depths + 1);
  // Events come in blocks of one rank: the map is asked again only when the rank changes.
  const bucket = new Int32Array(t.count);
  for (let i = 0, last = NaN, p = -1; i < t.count; i += 1) {
    if (t.rank[i] !== last) {
      last = t.rank[i];
      p = pos.get(last) ?? -1;
    }
    bucket[i] = p < 0 ? -1 : p * depths + t.depth[i];
    if (p >= 0) at[bucket[i] + 1] += 1;
  }
  for (let k = 1; k < at.length; k += 1) at[k] += at[k - 1];
  const order = new Uint32Array(at[at.length - 1]);
  const fill = at.slice(0, -1);
  for (let i = 0; i < t.count; i += 1) if (bucket[i] >= 0) order[fill[bucket[i]]++] = i;
  for (let k = 0; k + 1 < at.length; k += 1) byStart(t, order.subarray(at[k], at[k + 1]));
  const lists = ranks.map((_, p) => order.subarray(at[p * depths], at[(p + 1) * depths]));
  return { pos, lists, maxDepth };
}

/**
 * One (position, depth) bucket sorted by start, where file order is not already.
 * @param {Timeline} t
 * @param {Uint32Array} bucket
 */
function byStart(t, bucket) {
  for (let k = 1; k < bucket.length; k += 1) {
    if (t.start[bucket[k - 1]] > t.start[bucket[k]]) {
      bucket.sort((a, b) => t.start[a] - t.start[b]);
      return;
    }
  }
}

/**
 * A round step for about `target` µs between ticks.
 * @param {number} target
 */
function niceStep(target) {
  const p = 10 ** Math.floor(Math.log10(Math.max(target, 1)));
  for (const m of [1, 2, 5, 10]) if (m * p >= target) return m * p;
  return 10 * p;
}

/**
 * A tick at `t` µs, in the unit of the window's end, with the decimals its step needs (ticks 0.1 s
 * apart at 12 s read 12.3 s, 12.4 s, not 12 s twice).
 * @param {number} t
 * @param {number} step
 * @param {number} end
 */
function tickLabel(t, step, end) {
  const [unit, name] = end >= 1e6 ? [1e6, 's'] : end >= 1e3 ? [1e3, 'ms'] : [1, 'µs'];
  const decimals = Math.max(0, Math.ceil(Math.log10(unit / step) - 1e-9));
  return `${(t / unit).toFixed(decimals)} ${name}`;
}

/**
 * µs as short text.
 * @param {number} us
 */
export function formatUs(us) {
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(a >= 1e7 ? 1 : 2)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(a >= 1e4 ? 0 : 1)} ms`;
  return `${Math.round(us)} µs`;
}

/**
 * @typedef {object} TimelineOptions
 * @property {number[]} ranks the lanes' ranks, ascending
 * @property {Set<number>} stragglers ranks marked in the gutter
 * @property {HTMLElement} tip the hover box
 * @property {(rank: number, cid: string) => void} onOpen a slice clicked
 */

export class RankTimeline {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {Timeline} timeline
   * @param {TimelineOptions} options
   */
  constructor(canvas, timeline, options) {
    this.canvas = canvas;
    this.ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d', { alpha: false }));
    this.t = timeline;
    this.options = options;
    this.ranks = options.ranks;
    this.index = indexByRank(timeline, this.ranks);
    const names = Array.from({ length: timeline.labels.length / 2 }, (_, l) => timeline.strings[timeline.labels[2 * l]]);
    const palette = [...new Set(names.map(phaseColour))];
    /** Each label's colour as an index into the palette (ImageData words). */
    this.colours = { ids: Uint8Array.from(names, (n) => palette.indexOf(phaseColour(n))), palette: Uint32Array.from(palette, word) };
    // Each event name's colour, for the tests reading the canvas's pixels.
    setTestHook({ timelineColours: Object.fromEntries(names.map((n) => [n, phaseColour(n)])) });
    /** Levels of detail by bin (µs), built on first use. @type {Map<number, import('./ranks-lod.js').Level>} */
    this.levels = new Map();
    /** The same over lanes of k ranks, by `${bin}/${k}`, built on first use. @type {Map<string, import('./ranks-lod.js').Level>} */
    this.laneLevels = new Map();
    /** Drawings so far (the hook's `draws`: at most one a frame however many inputs arrive). */
    this.draws = 0;
    /** prepareLevels is done: a lanes' level missing from then on is built when first drawn. */
    this.prepared = false;
    const { origin, end, aligned, shift } = this.extent();
    this.origin = origin;
    /** Each lane on its own clock (see extent), and each lane's shift in µs. */
    this.aligned = aligned;
    this.shift = shift;
    this.length = Math.max(1, end - origin);
    /** The view: time window [t0, t1] in µs from `origin`, lanes [y0, y0 + span) in rank positions. */
    this.view = { t0: 0, t1: this.length, y0: 0, span: Math.max(1, this.ranks.length) };
    /** @type {ImageData | null} */
    this.image = null;
    this.row = new Uint32Array(0);
    this.queued = false;
    /** The rank picked in the table (outlined), or null. */
    this.selected = /** @type {number | null} */ (null);
    this.drag = /** @type {{ x: number, y: number, view: RankTimeline['view'], moved: boolean } | null} */ (null);
  }

  /**
   * The time axis. Normally one clock for every rank: the first start and last end of all lanes.
   * When the ranks' first events are more than ALIGN_AFTER apart (logs of different runs put in one
   * folder, as tlparse's multi_rank_logs: days apart), one axis would squeeze each rank to a
   * sliver, so each lane is shifted to start at its own first event (`aligned`, said in the view).
   */
  extent() {
    const firsts = new Float64Array(this.index.lists.length);
    const lasts = new Float64Array(this.index.lists.length);
    this.index.lists.forEach((list, p) => {
      let first = Infinity;
      let last = -Infinity;
      for (const i of list) {
        first = Math.min(first, this.t.start[i]);
        last = Math.max(last, this.t.start[i] + this.t.dur[i]);
      }
      firsts[p] = first;
      lasts[p] = last;
    });
    const known = [...firsts].filter(Number.isFinite);
    if (!known.length) return { origin: 0, end: 1, aligned: false, shift: new Float64Array(firsts.length) };
    const origin = Math.min(...known);
    const aligned = Math.max(...known) - origin > ALIGN_AFTER;
    const shift = firsts.map((f) => (aligned && Number.isFinite(f) ? f - origin : 0));
    let end = origin;
    lasts.forEach((l, p) => {
      if (Number.isFinite(l)) end = Math.max(end, l - shift[p]);
    });
    return { origin, end, aligned, shift };
  }

  /** Plot width and height in px. */
  plot() {
    return { w: Math.max(1, this.canvas.width - GUTTER), h: Math.max(1, this.canvas.height - AXIS) };
  }

  /** Ranks per lane: a power of two keeping lanes at least MIN_LANE px. */
  ranksPerLane() {
    const { h } = this.plot();
    const need = (this.view.span * MIN_LANE) / h;
    return need <= 1 ? 1 : 2 ** Math.ceil(Math.log2(need));
  }

  /** Draw on the next frame (once, however many asks). */
  request() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      this.draw();
    });
  }

  /** Draw the lanes, the gutter and the axis now. */
  draw() {
    const began = performance.now();
    const { w, h } = this.plot();
    if (!this.image || this.image.width !== w || this.image.height !== h) {
      this.image = this.ctx.createImageData(w, h);
      this.row = new Uint32Array(w);
    }
    const pixels = new Uint32Array(this.image.data.buffer);
    pixels.fill(BG);
    const k = this.ranksPerLane();
    const lanes = this.lanes(k, h);
    let runs = 0;
    for (const lane of lanes) {
      runs += this.paintLane(lane.first, k, w);
      const end = lane.bottom - (lane.bottom - lane.top >= 4 ? 1 : 0);
      for (let y = lane.top; y < end; y += 1) pixels.set(this.row, y * w);
    }
    this.ctx.putImageData(this.image, GUTTER, AXIS);
    const labels = this.drawGutter(lanes, k);
    this.drawAxis(w);
    const { t0, t1, y0, span } = this.view;
    const drawMs = performance.now() - began;
    const bin = binFor((t1 - t0) / w);
    this.draws += 1;
    setTestHook({ timeline: { lanes: lanes.length, ranksPerLane: k, t0, t1, y0, span, origin: this.origin, aligned: this.aligned, gutter: GUTTER, axis: AXIS, width: this.canvas.width, height: this.canvas.height, drawMs, bin, runs, draws: this.draws, labels, prepared: this.prepared } });
  }

  /**
   * The lanes on screen: rank positions [first, last) and pixel rows [top, bottom) of the plot.
   * @param {number} k ranks per lane
   * @param {number} h plot height
   */
  lanes(k, h) {
    const { y0, span } = this.view;
    const n = this.ranks.length;
    const out = [];
    for (let lane = Math.floor(y0 / k); lane * k < Math.min(n, y0 + span); lane += 1) {
      const top = Math.max(0, Math.round(((lane * k - y0) / span) * h));
      const bottom = Math.min(h, Math.round((((lane + 1) * k - y0) / span) * h));
      if (bottom > top) out.push({ first: lane * k, last: Math.min(n, (lane + 1) * k), top, bottom });
    }
    return out;
  }

  /**
   * One lane's pixel row into `this.row`: its ranks' slices in the window, outermost depth first,
   * so the innermost phase running shows. A lane of k > 1 ranks is drawn from the level of such
   * lanes (ranks-lod.js's pairLevel): its ranks' runs merged once, not painted rank by rank.
   * Returns the runs painted.
   * @param {number} first the lane's first rank position (a multiple of k)
   * @param {number} k ranks per lane
   * @param {number} w
   */
  paintLane(first, k, w) {
    this.row.fill(BG);
    const { t0, t1 } = this.view;
    const bin = binFor((t1 - t0) / w);
    const from = this.origin + t0;
    const to = this.origin + t1;
    // Until the lanes' levels are prepared (after the first paint, which does not wait on them),
    // a shared lane is painted rank by rank.
    if (k === 1 || (!this.prepared && !this.laneLevels.has(`${bin}/${k}`))) {
      return paintRuns(this.level(bin), this.row, { first, last: first + k, from, to, shift: this.shift });
    }
    return paintRuns(this.laneLevel(bin, k), this.row, { first: first / k, last: first / k + 1, from, to });
  }

  /**
   * The level of `bin` µs over lanes of k ranks (a power of two), from the one of k / 2, built on
   * first use: linear in the runs of the level below, so cheap enough inside a frame.
   * @param {number} bin
   * @param {number} k
   * @returns {import('./ranks-lod.js').Level}
   */
  laneLevel(bin, k) {
    if (k === 1) return this.level(bin);
    let found = this.laneLevels.get(`${bin}/${k}`);
    if (!found) {
      found = k === 2 ? pairLevel(this.level(bin), this.shift) : pairLevel(this.laneLevel(bin, k / 2));
      this.laneLevels.set(`${bin}/${k}`, found);
    }
    return found;
  }

  /**
   * The level of detail of `bin` µs (ranks-lod.js), built on first use.
   * @param {number} bin
   */
  level(bin) {
    let found = this.levels.get(bin);
    if (!found) {
      found = buildLevel(this.t, this.index.lists, this.colours, this.index.maxDepth + 1, bin);
      this.levels.set(bin, found);
    }
    return found;
  }

  /** The levels a zoom from the whole view down to a millisecond per pixel needs, built while
   * the page is idle after the first drawing (a bin per turn), so zooming meets them ready: each
   * bin's, and its lanes' of every size up to the whole view's (the wheel zooms time and lanes
   * around the pointer, Alt and Shift only one of them: any pair is met; a lanes' level built on
   * first use inside a frame was 20-80 ms, frames dropped while zooming); then drawn again with
   * them (the hook's timeline.prepared). */
  prepareLevels() {
    /** @type {number[]} */
    const bins = [];
    for (let bin = binFor(this.length / this.plot().w); bin >= 1024; bin /= 4) bins.push(bin);
    const k = this.ranksPerLane();
    const next = () => {
      const bin = bins.shift();
      if (bin === undefined) {
        this.prepared = true;
        this.request();
        return;
      }
      this.laneLevel(bin, k);
      setTimeout(next, 0);
    };
    setTimeout(next, 0);
  }


  /**
   * Rank numbers (or ranges) of the lanes tall enough to read, stragglers marked red, the picked rank outlined.
   * @param {{ first: number, last: number, top: number, bottom: number }[]} lanes
   * @param {number} k
   * @returns {[string, number][]} the labels written and their middles' y (the hook's `labels`)
   */
  drawGutter(lanes, k) {
    const ctx = this.ctx;
    ctx.fillStyle = '#f3f4f6';
    ctx.fillRect(0, AXIS, GUTTER, this.canvas.height - AXIS);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    let lastText = -Infinity;
    /** @type {[string, number][]} */
    const labels = [];
    for (const lane of lanes) {
      const ranks = this.ranks.slice(lane.first, lane.last);
      const y = AXIS + lane.top;
      if (ranks.some((r) => this.options.stragglers.has(r))) {
        ctx.fillStyle = '#d93025';
        ctx.fillRect(0, y, 4, Math.max(1, lane.bottom - lane.top));
      }
      if (this.selected !== null && ranks.includes(this.selected)) {
        ctx.strokeStyle = '#2f6fd6';
        ctx.strokeRect(GUTTER + 0.5, y + 0.5, this.canvas.width - GUTTER - 1, Math.max(1, lane.bottom - lane.top - 1));
      }
      const mid = y + (lane.bottom - lane.top) / 2;
      // 11px text is 12px tall: a label half under the axis (the first lanes of a zoomed-out
      // view, 4 px each) or past the bottom is not written; the next lane's is.
      if (mid - lastText < 12 || mid < AXIS + 6 || mid > this.canvas.height - 6) continue;
      lastText = mid;
      ctx.fillStyle = '#3b4048';
      const text = k === 1 ? `rank ${ranks[0]}` : `${ranks[0]}–${ranks[ranks.length - 1]}`;
      ctx.fillText(text, 8, mid);
      labels.push([text, mid]);
    }
    return labels;
  }

  /**
   * Time ticks from the first event.
   * @param {number} w
   */
  drawAxis(w) {
    const ctx = this.ctx;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, this.canvas.width, AXIS);
    const { t0, t1 } = this.view;
    const step = niceStep(((t1 - t0) * 90) / w);
    ctx.fillStyle = '#6a6f78';
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = GUTTER + ((t - t0) / (t1 - t0)) * w;
      ctx.fillRect(x, AXIS - 5, 1, 5);
      ctx.fillText(tickLabel(t, step, t1), x + 3, AXIS / 2);
    }
  }

  /**
   * The innermost slice under canvas point (x, y), or -1.
   * @param {number} x
   * @param {number} y
   * @returns {number}
   */
  pick(x, y) {
    const { w, h } = this.plot();
    if (x < GUTTER || y < AXIS) return -1;
    const k = this.ranksPerLane();
    const lane = this.lanes(k, h).find((l) => y - AXIS >= l.top && y - AXIS < l.bottom);
    if (!lane) return -1;
    const { t0, t1 } = this.view;
    const at = this.origin + t0 + ((x - GUTTER) / w) * (t1 - t0);
    const slack = (t1 - t0) / w;
    let best = -1;
    for (let p = lane.first; p < lane.last; p += 1) {
      const t = at + this.shift[p];
      for (const i of this.index.lists[p]) {
        const s = this.t.start[i];
        if (s - slack <= t && t <= s + this.t.dur[i] + slack && (best < 0 || this.t.depth[i] >= this.t.depth[best])) best = i;
      }
    }
    return best;
  }
}
