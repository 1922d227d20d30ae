// The Ranks view's matrix: a row per divergence group of ranks.json (ranks with identical compile
// id sequences, collapsed into one row with their count), a column per compile id, the ids not on
// every rank first. A cell's colour is the compile's status and its shade its time (compiles.json
// of the group's first rank); an empty cell is an id the group never compiled.

import { setTestHook } from '/lib/tlscope.js';
import { rankRanges } from './ranks-data.js';

/** @typedef {import('./ranks-data.js').RankGroup} RankGroup */
/** @typedef {import('/lib/tlscope.js').CompileEntry} CompileEntry */

const ROW = 18;
const HEAD = 16;
const LABEL = 190;
/** Status colours, as the explorer's badges. */
const STATUS = /** @type {Record<string, string>} */ ({
  ok: '#2e9d4f', failed: '#d93025', error: '#d93025', restarted: '#e0a020', graph_break: '#e0a020',
  metrics_missing: '#e8711a', empty: '#9aa0a6', outside: '#9aa0a6', cache_hit: '#3b78d8',
});

/**
 * @typedef {object} MatrixRow
 * @property {RankGroup} group
 * @property {Map<string, CompileEntry>} entries its first rank's compiles.json entries by id
 */

/**
 * A compile's time in seconds (its frame compile's, on the entry holding it), or 0.
 * @param {CompileEntry | undefined} entry
 */
function secondsOf(entry) {
  const s = entry && entry.time ? entry.time.duration_s : null;
  return typeof s === 'number' ? s : 0;
}

/**
 * `text` cut (with …) to at most `width` px.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} text
 * @param {number} width
 */
function fitted(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let n = text.length;
  while (n > 1 && ctx.measureText(`${text.slice(0, n)}…`).width > width) n -= 1;
  return `${text.slice(0, n)}…`;
}

export class RankMatrix {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{ onOpen: (rank: number, cid: string) => void }} options
   */
  constructor(canvas, options) {
    this.canvas = canvas;
    this.ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
    this.options = options;
    /** @type {MatrixRow[]} */
    this.rows = [];
    /** @type {string[]} */
    this.columns = [];
    this.divergent = 0;
    canvas.addEventListener('mousemove', (e) => {
      const hit = this.hit(e);
      canvas.title = hit ? this.describe(hit.row, hit.cid) : '';
      canvas.style.cursor = hit && hit.row.entries.has(hit.cid) ? 'pointer' : '';
    });
    canvas.addEventListener('click', (e) => {
      const hit = this.hit(e);
      if (hit && hit.row.entries.has(hit.cid)) options.onOpen(hit.row.group.ranks[0], hit.cid);
    });
  }

  /**
   * @param {MatrixRow[]} rows
   * @param {string[]} columns
   * @param {number} divergent how many of the columns are ids not on every rank
   */
  set(rows, columns, divergent) {
    this.rows = rows;
    this.columns = columns;
    this.divergent = divergent;
    this.canvas.height = HEAD + rows.length * ROW + 2;
    setTestHook({ matrix: { rows: rows.map((r) => ({ ranks: r.group.ranks.length, ids: r.entries.size })), columns, divergent } });
    this.draw();
  }

  cell() {
    return Math.max(1, Math.min(16, (this.canvas.width - LABEL) / Math.max(1, this.columns.length)));
  }

  draw() {
    const { ctx, canvas } = this;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const cw = this.cell();
    let most = 0;
    for (const row of this.rows) for (const e of row.entries.values()) most = Math.max(most, secondsOf(e));
    ctx.fillStyle = '#f0a040';
    ctx.fillRect(LABEL, HEAD - 4, this.divergent * cw, 3);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = '#6a6f78';
    ctx.fillText(`${this.columns.length} compile ids · ${this.divergent} not on every rank (first)`, 4, HEAD / 2 - 1);
    this.rows.forEach((row, r) => {
      const y = HEAD + r * ROW;
      ctx.fillStyle = '#3b4048';
      const n = row.group.ranks.length;
      ctx.fillText(fitted(ctx, `${n} rank${n === 1 ? '' : 's'}: ${rankRanges(row.group.ranks)}`, LABEL - 10), 4, y + ROW / 2);
      this.columns.forEach((cid, c) => {
        const entry = row.entries.get(cid);
        const x = LABEL + c * cw;
        if (!entry) {
          // Never compiled by this group: an empty outlined cell, unlike any status.
          ctx.globalAlpha = 1;
          ctx.strokeStyle = '#c3c7cd';
          if (cw > 3) ctx.strokeRect(x + 0.5, y + 1.5, cw - 2, ROW - 3);
          return;
        } else {
          ctx.globalAlpha = 0.35 + (0.65 * secondsOf(entry)) / (most || 1);
          ctx.fillStyle = STATUS[entry.status] || '#9aa0a6';
        }
        ctx.fillRect(x, y + 1, Math.max(1, cw - (cw > 4 ? 1 : 0)), ROW - 2);
      });
      ctx.globalAlpha = 1;
    });
  }

  /**
   * The row and compile id under the pointer.
   * @param {MouseEvent} e
   */
  hit(e) {
    const box = this.canvas.getBoundingClientRect();
    const c = Math.floor((e.clientX - box.left - LABEL) / this.cell());
    const r = Math.floor((e.clientY - box.top - HEAD) / ROW);
    if (c < 0 || c >= this.columns.length || r < 0 || r >= this.rows.length) return null;
    return { row: this.rows[r], cid: this.columns[c] };
  }

  /**
   * @param {MatrixRow} row
   * @param {string} cid
   */
  describe(row, cid) {
    const entry = row.entries.get(cid);
    const who = `${row.group.ranks.length} rank(s): ${rankRanges(row.group.ranks)}`;
    if (!entry) return `${cid}: not compiled by ${who}`;
    return `${cid} on ${who}: ${entry.status}, ${secondsOf(entry).toFixed(3)} s (rank ${row.group.ranks[0]}) — click to open`;
  }
}
