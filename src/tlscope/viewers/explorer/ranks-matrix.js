// The Ranks view's matrix: a row per divergence group of ranks.json (ranks with identical compile
// id sequences, collapsed into one row with their count), a column per compile id, the ids not on
// every rank first. A cell's colour is the compile's status and its shade its time; an empty cell
// is an id the row never compiled. A group row expands (click, Enter, Space or →) into a row per
// rank, each drawn from that rank's own compiles.json (read when its row first shows), and
// collapses back (again, or ←); the rows are a VirtualList, so a 990-rank group is a screenful of
// elements. The list is one focus stop: ↑/↓, Home/End move its cursor row (aria-activedescendant).

import { VirtualList, setTestHook } from '/lib/tlscope.js';
import { el } from './dom.js';
import { rankRanges } from './ranks-data.js';

/** @typedef {import('./ranks-data.js').RankGroup} RankGroup */
/** @typedef {import('/lib/tlscope.js').CompileEntry} CompileEntry */

const ROW = 18;
const HEAD = 16;
const LABEL = 190;
/** Rows the list shows at most before it scrolls. */
const MAX_ROWS = 12;
/** Status colours, as the explorer's badges. */
const STATUS = /** @type {Record<string, string>} */ ({
  ok: '#2e9d4f', failed: '#d93025', error: '#d93025', restarted: '#e0a020', graph_break: '#e0a020',
  captured: '#7fb88f', metrics_missing: '#e8711a', empty: '#9aa0a6', outside: '#9aa0a6', cache_hit: '#3b78d8',
});

/**
 * How many columns, first and in this order, each kind of difference marks (ranks.json's; each
 * column counted once, under the first kind that has it): the ids not on every rank, those whose
 * collectives differ between ranks, those some ranks ran under other settings (format 1.38),
 * those whose Dynamo graphs differ (1.30), those some rows draw from ids of their own (1.33).
 * @typedef {{ divergent: number, calls: number, settings: number, graphs: number, moved: number }} MarkedCounts
 */

/** Each kind's bar colour above its columns, in the columns' order. */
const MARKS = /** @type {const} */ ([
  ['divergent', '#f0a040'], ['calls', '#9b59b6'], ['settings', '#c0392b'], ['graphs', '#16a085'], ['moved', '#2e86de'],
]);

/** How the header says each kind after the first. */
const MARK_WORDS = /** @type {Record<keyof MarkedCounts, string>} */ ({
  divergent: 'not on every rank', calls: 'whose collectives differ', settings: 'that some ranks ran under other settings',
  graphs: 'whose graphs differ', moved: 'that some ranks number otherwise',
});

/**
 * @typedef {object} MatrixRow
 * @property {RankGroup} group
 * @property {Map<string, CompileEntry>} entries its first rank's compiles.json entries by column (`entriesById`)
 */

/**
 * A row on screen: a group's (expanded or not) or one rank's of an expanded group.
 * @typedef {{ group: number, rank: number | null }} ShownRow
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
 * compiles.json entries by the matrix column they are drawn in: their id, or where the row's ranks
 * number a function otherwise than the reference ranks, the row's column for it (ranks.json's
 * `rows[].columns`, format 1.33); the ones outside any compile left out.
 * @param {CompileEntry[]} entries
 * @param {Map<string, string>} [columns]
 * @returns {Map<string, CompileEntry>}
 */
export function entriesById(entries, columns = new Map()) {
  return new Map(entries.filter((e) => e.status !== 'outside').map((e) => [columns.get(e.id) ?? e.id, e]));
}

/**
 * The rows shown: each group, followed by its ranks when it is expanded.
 * @param {MatrixRow[]} rows
 * @param {Set<number>} expanded indices of the expanded groups
 * @returns {ShownRow[]}
 */
export function shownRows(rows, expanded) {
  /** @type {ShownRow[]} */
  const out = [];
  rows.forEach((row, group) => {
    out.push({ group, rank: null });
    if (expanded.has(group)) for (const rank of row.group.ranks) out.push({ group, rank });
  });
  return out;
}

export class RankMatrix {
  /**
   * @param {HTMLElement} box the matrix's element (emptied)
   * @param {{ onOpen: (rank: number, cid: string) => void, onPick: (rank: number) => void, load: (rank: number) => Promise<CompileEntry[]> }} options
   *   onOpen: a filled cell clicked; onPick: a rank's row clicked elsewhere; load: a rank's compiles.json entries
   */
  constructor(box, options) {
    this.box = box;
    this.options = options;
    this.head = el(document, 'canvas', 'rk-mhead');
    this.head.height = HEAD;
    this.listBox = el(document, 'div', 'rk-mlist');
    this.listBox.tabIndex = 0;
    this.listBox.setAttribute('role', 'tree');
    this.listBox.setAttribute('aria-label', 'Compile ids by rank group: Enter expands a group into its ranks and collapses it, arrows move');
    box.replaceChildren(this.head, this.listBox);
    /** @type {MatrixRow[]} */
    this.rows = [];
    /** @type {string[]} */
    this.columns = [];
    /** @type {MarkedCounts} */
    this.counts = { divergent: 0, calls: 0, settings: 0, graphs: 0, moved: 0 };
    this.most = 0;
    /** @type {Set<number>} */
    this.expanded = new Set();
    /** @type {ShownRow[]} */
    this.shown = [];
    this.cursor = 0;
    this.width = 100;
    /** @type {Map<number, Map<string, CompileEntry> | null>} each rank's entries (null: being read) */
    this.ranks = new Map();
    this.queued = false;
    this.list = new VirtualList(this.listBox, { rowHeight: ROW, overscan: 2, createRow: () => this.createRow(), renderRow: (row, i) => this.renderRow(row, i) });
    this.wire();
  }

  /** @returns {HTMLElement} */
  createRow() {
    const row = el(document, 'div', 'rk-mrow');
    row.setAttribute('role', 'treeitem');
    const cells = el(document, 'canvas', 'rk-mcells');
    cells.height = ROW;
    row.append(el(document, 'span', 'rk-mlabel'), cells);
    return row;
  }

  wire() {
    const box = this.listBox;
    box.addEventListener('click', (e) => {
      const row = e.target instanceof Element ? e.target.closest('.rk-mrow') : null;
      if (!(row instanceof HTMLElement)) return;
      const i = Number(row.dataset.index);
      this.moveTo(i);
      const shown = this.shown[i];
      const cid = e.target instanceof HTMLCanvasElement ? this.columnAt(e) : null;
      const entry = cid ? this.entriesOf(shown)?.get(cid) : undefined;
      // The rank's own id: a column is the reference ranks' id for the function (format 1.33).
      if (entry) this.options.onOpen(this.rankOf(shown), entry.id);
      else if (shown.rank === null) this.toggle(shown.group);
      else this.options.onPick(shown.rank);
    });
    box.addEventListener('scroll', () => this.report(), { passive: true });
    box.addEventListener('mousemove', (e) => {
      const row = e.target instanceof HTMLCanvasElement ? e.target.closest('.rk-mrow') : null;
      if (!(row instanceof HTMLElement)) return;
      const cid = this.columnAt(e);
      const shown = this.shown[Number(row.dataset.index)];
      row.title = cid && shown ? this.describe(shown, cid) : '';
    });
    box.addEventListener('keydown', (e) => this.key(e));
  }

  /**
   * The keys of the list: ↑/↓/Home/End move, Enter/Space toggle, →/← expand/collapse.
   * @param {KeyboardEvent} e
   */
  key(e) {
    const at = this.shown[this.cursor];
    if (!at) return;
    const open = this.expanded.has(at.group);
    /** @type {Record<string, () => void>} */
    const keys = {
      ArrowDown: () => this.moveTo(this.cursor + 1),
      ArrowUp: () => this.moveTo(this.cursor - 1),
      Home: () => this.moveTo(0),
      End: () => this.moveTo(this.shown.length - 1),
      Enter: () => this.toggle(at.group),
      ' ': () => this.toggle(at.group),
      ArrowRight: () => (open ? this.moveTo(this.cursor + 1) : this.toggle(at.group)),
      ArrowLeft: () => (open ? this.toggle(at.group) : undefined),
    };
    const act = keys[e.key];
    if (!act) return;
    e.preventDefault();
    act();
  }

  /**
   * The cursor row to `index` (clamped), scrolled into view.
   * @param {number} index
   */
  moveTo(index) {
    this.cursor = Math.max(0, Math.min(this.shown.length - 1, index));
    this.list.scrollToIndex(this.cursor);
    this.list.draw();
    this.report();
  }

  /**
   * Expand group `group` into its ranks, or collapse it (the cursor back on the group's row).
   * @param {number} group
   */
  toggle(group) {
    if (this.expanded.has(group)) this.expanded.delete(group);
    else this.expanded.add(group);
    this.shown = shownRows(this.rows, this.expanded);
    this.cursor = this.shown.findIndex((s) => s.group === group && s.rank === null);
    this.layout();
    this.moveTo(this.cursor);
  }

  /**
   * @param {MatrixRow[]} rows
   * @param {string[]} columns
   * @param {MarkedCounts} counts how many columns, in that order first, each kind of difference marks
   */
  set(rows, columns, counts) {
    this.rows = rows;
    this.columns = columns;
    this.counts = counts;
    this.most = 0;
    for (const row of rows) for (const e of row.entries.values()) this.most = Math.max(this.most, secondsOf(e));
    this.shown = shownRows(rows, this.expanded);
    const { divergent, calls, settings, graphs, moved } = counts;
    setTestHook({ matrix: { rows: rows.map((r) => ({ ranks: r.group.ranks.length, ids: r.entries.size })), columns, divergent, collectives: calls, settings, graphs, moved } });
    this.layout();
  }

  /** The list's height for the rows shown (at most MAX_ROWS), then drawn. */
  layout() {
    this.listBox.style.height = `${Math.min(MAX_ROWS, Math.max(1, this.shown.length)) * ROW + 2}px`;
    this.list.setCount(this.shown.length);
    this.draw();
  }

  /** Sized to the element's width (on every resize) and drawn. */
  resize() {
    this.width = Math.max(100, this.box.clientWidth);
    this.head.width = this.width;
    this.draw();
  }

  draw() {
    this.drawHead();
    this.list.draw();
    this.report();
  }

  cell() {
    return Math.max(1, Math.min(16, (this.width - LABEL) / Math.max(1, this.columns.length)));
  }

  drawHead() {
    const ctx = /** @type {CanvasRenderingContext2D} */ (this.head.getContext('2d'));
    ctx.clearRect(0, 0, this.head.width, HEAD);
    // A bar above each kind's columns, in the columns' order (markedColumns).
    let at = 0;
    for (const [kind, colour] of MARKS) {
      ctx.fillStyle = colour;
      ctx.fillRect(LABEL + at * this.cell(), HEAD - 4, this.counts[kind] * this.cell(), 3);
      at += this.counts[kind];
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = '#6a6f78';
    const n = this.rows.length;
    const said = MARKS.slice(1).map(([kind]) => (this.counts[kind] ? ` · ${this.counts[kind]} ${MARK_WORDS[kind]} (next)` : '')).join('');
    ctx.fillText(`${this.columns.length} compile ids · ${this.counts.divergent} not on every rank (first)${said} · ${n} group${n === 1 ? '' : 's'}`, 4, HEAD / 2 - 1);
  }

  /**
   * Row element `row` shows shown row `i`: its label, its state for assistive tech, its cells.
   * @param {HTMLElement} row
   * @param {number} i
   */
  renderRow(row, i) {
    // The list keeps row elements for the window's height; past the list's own (MAX_ROWS) they
    // would be drawn, and their ranks' files read, for nothing.
    if (i > this.list.last + 1) {
      row.style.display = 'none';
      return;
    }
    const shown = this.shown[i];
    const { group } = this.rows[shown.group];
    const n = group.ranks.length;
    row.dataset.index = String(i);
    row.dataset.group = String(shown.group);
    row.classList.toggle('rk-mrank', shown.rank !== null);
    row.classList.toggle('on', i === this.cursor);
    row.id = i === this.cursor ? 'rk-mcursor' : '';
    row.setAttribute('aria-level', shown.rank === null ? '1' : '2');
    if (shown.rank === null) {
      row.dataset.rank = '';
      row.setAttribute('aria-expanded', String(this.expanded.has(shown.group)));
      const mark = n > 1 ? (this.expanded.has(shown.group) ? '▾ ' : '▸ ') : '';
      /** @type {HTMLElement} */ (row.firstChild).textContent = `${mark}${n} rank${n === 1 ? '' : 's'}: ${rankRanges(group.ranks)}`;
    } else {
      row.dataset.rank = String(shown.rank);
      row.removeAttribute('aria-expanded');
      /** @type {HTMLElement} */ (row.firstChild).textContent = `rank ${shown.rank}`;
    }
    this.drawCells(/** @type {HTMLCanvasElement} */ (row.lastChild), this.entriesOf(shown));
  }

  /**
   * The entries a shown row draws: its group's first rank's, or its own rank's (read when first
   * asked; null until they are in).
   * @param {ShownRow} shown
   * @returns {Map<string, CompileEntry> | null}
   */
  entriesOf(shown) {
    if (shown.rank === null) return this.rows[shown.group].entries;
    const rank = shown.rank;
    if (!this.ranks.has(rank)) {
      this.ranks.set(rank, null);
      this.options.load(rank).then((entries) => {
        this.ranks.set(rank, entriesById(entries, this.rows[shown.group].group.columns));
        this.redrawSoon();
      });
    }
    return this.ranks.get(rank) || null;
  }

  /** One redraw for the ranks' files that came in during a frame. */
  redrawSoon() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      this.list.draw();
      this.report();
    });
  }

  /**
   * @param {HTMLCanvasElement} canvas
   * @param {Map<string, CompileEntry> | null} entries null: not read yet (light cells)
   */
  drawCells(canvas, entries) {
    const width = Math.max(1, this.width - LABEL);
    if (canvas.width !== width) canvas.width = width;
    const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
    ctx.clearRect(0, 0, width, ROW);
    const cw = this.cell();
    this.columns.forEach((cid, c) => {
      const entry = entries ? entries.get(cid) : undefined;
      const x = c * cw;
      if (!entries) {
        ctx.globalAlpha = 1;
        ctx.fillStyle = '#eef0f3';
      } else if (!entry) {
        // Never compiled by this row: an empty outlined cell, unlike any status.
        ctx.globalAlpha = 1;
        ctx.strokeStyle = '#c3c7cd';
        if (cw > 3) ctx.strokeRect(x + 0.5, 1.5, cw - 2, ROW - 3);
        return;
      } else {
        ctx.globalAlpha = 0.35 + (0.65 * Math.min(1, secondsOf(entry) / (this.most || 1)));
        ctx.fillStyle = STATUS[entry.status] || '#9aa0a6';
      }
      ctx.fillRect(x, 1, Math.max(1, cw - (cw > 4 ? 1 : 0)), ROW - 2);
    });
    ctx.globalAlpha = 1;
  }

  /** What the test hook says of the rows: how many, which groups are open, the ranks drawn. */
  report() {
    this.listBox.setAttribute('aria-activedescendant', 'rk-mcursor');
    const { first, last } = this.list.visibleRange();
    /** @type {Record<string, number | null>} */
    const drawn = {};
    for (let i = first; i <= last && i < this.shown.length; i += 1) {
      const { rank } = this.shown[i];
      const got = rank === null ? null : this.ranks.get(rank);
      if (rank !== null) drawn[rank] = got ? got.size : null;
    }
    setTestHook({ matrixView: { shown: this.shown.length, expanded: [...this.expanded], cursor: this.cursor, first, last, ranks: drawn, elements: this.list.pool.filter((r) => r.style.display !== 'none').length } });
  }

  /**
   * The rank a shown row opens a compile of: its own, or its group's first.
   * @param {ShownRow} shown
   */
  rankOf(shown) {
    return shown.rank ?? this.rows[shown.group].group.ranks[0];
  }

  /**
   * The compile id under the pointer on a row's cells.
   * @param {MouseEvent} e
   * @returns {string | null}
   */
  columnAt(e) {
    const box = /** @type {HTMLElement} */ (e.target).getBoundingClientRect();
    const c = Math.floor((e.clientX - box.left) / this.cell());
    return c >= 0 && c < this.columns.length ? this.columns[c] : null;
  }

  /**
   * @param {ShownRow} shown
   * @param {string} cid
   */
  describe(shown, cid) {
    const entries = this.entriesOf(shown);
    const entry = entries ? entries.get(cid) : undefined;
    const { ranks } = this.rows[shown.group].group;
    const who = shown.rank === null ? `${ranks.length} rank(s): ${rankRanges(ranks)}` : `rank ${shown.rank}`;
    if (!entries) return `${cid} on ${who}: reading its compiles.json…`;
    if (!entry) return `${cid}: not compiled by ${who}`;
    const own = cid.split(' ')[0] === entry.id ? '' : ` (its ${entry.id})`;
    return `${cid} on ${who}${own}: ${entry.status}, ${secondsOf(entry).toFixed(3)} s (rank ${this.rankOf(shown)}) — click to open`;
  }
}
