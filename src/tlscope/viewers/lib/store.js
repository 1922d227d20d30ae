// The events of a trace as a table model: `total` rows (after filters), `row(i)` the event of
// row i. LocalEvents holds raw.jsonl in the tab (bytes plus typed-array columns, rows parsed
// on demand); RemoteEvents pages through the server's events API (docs/SERVER.md) and holds
// only the pages recently looked at. The two answer the same calls.

import { compileIdOf, eventKey } from './format.js';
import { LineStore } from './lines.js';

/** @typedef {import('./format.js').RawEvent} RawEvent */

/**
 * A filter as asked for (any field may be missing or empty: no filter on it).
 * @typedef {{ kind?: string | null, cid?: string | null, rank?: number | string | null, q?: string | null }} Filter
 */

/**
 * A filter as applied: null where there is none.
 * @typedef {{ kind: string | null, cid: string | null, rank: number | null, q: string | null }} NormalFilter
 */

/**
 * The table model of a trace: held in the tab (LocalEvents) or paged from the server (RemoteEvents).
 * @typedef {LocalEvents | RemoteEvents} EventTable
 */

/**
 * `reader(part, start, length)`: those bytes of that part's raw.jsonl, read again.
 * @typedef {(part: number, start: number, length: number) => Promise<Uint8Array>} RangeReader
 */

/**
 * Filters: event key, compile id (display form), rank, and text (case-insensitive).
 * @param {Filter} [filter]
 * @returns {NormalFilter}
 */
export function normalizeFilter(filter = {}) {
  /** @param {unknown} v */
  const text = (v) => (typeof v === 'string' && v !== '' ? v : null);
  const rank = filter.rank === undefined || filter.rank === null || filter.rank === '' ? null : Number(filter.rank);
  return { kind: text(filter.kind), cid: text(filter.cid), rank: Number.isInteger(rank) ? rank : null, q: text(filter.q) };
}

/**
 * `array`, or a copy of it of the same kind at least `needed` long (doubling).
 * @template {Uint16Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | Int32Array<ArrayBuffer>} T
 * @param {T} array
 * @param {number} needed
 * @returns {T}
 */
function growU32(array, needed) {
  if (needed <= array.length) return array;
  const Make = /** @type {new (length: number) => T} */ (array.constructor);
  const next = new Make(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}

/** Strings numbered in the order first seen. */
class Interner {
  constructor() {
    /** @type {string[]} */
    this.values = [];
    /** @type {Map<string, number>} */
    this.ids = new Map();
  }

  /**
   * @param {string} value
   * @returns {number}
   */
  id(value) {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }
}

// Parsed rows kept (the first rows are kept from loading, so the first screen needs no parse).
const CACHE_ROWS = 1024;
const CACHE_FIRST = 256;

/** The events of raw.jsonl held in the tab (see the module doc). */
export class LocalEvents {
  /** @param {number} [expected] the events the manifests announce, so the columns are made once at their size */
  constructor(expected = 4096) {
    const room = Math.max(16, expected || 0);
    this.lines = new LineStore(room);
    /** @internal */
    this.keys = new Interner();
    /** @internal */
    this.cids = new Interner();
    /** @internal */
    this.keyCol = new Uint16Array(room);
    /** @internal */
    this.cidCol = new Uint32Array(room);
    /** @internal */
    this.rankCol = new Int32Array(room);
    /** @internal */
    this.partCol = new Uint16Array(room);
    this.parsed = 0; // lines whose columns are filled
    /** @internal @type {Map<string, number>} */
    this.keyCounts = new Map();
    /** @internal @type {Map<number, RawEvent>} */
    this.cache = new Map();
    this.filter = normalizeFilter();
    /** @internal @type {Uint32Array<ArrayBuffer> | null} matching line indices, or null when no filter is set */
    this.view = null;
    /** @internal */
    this.viewLength = 0;
    /** @internal @type {Set<(table: EventTable) => void>} */
    this.listeners = new Set();
    /** @type {((event: RawEvent, line: number, part: number) => void) | null} called once per event while loading */
    this.onEvent = null;
    // Once loaded, a big file's bytes may be dropped and read again by block when looked at.
    /** @internal @type {RangeReader | null} */
    this.reader = null;
    /** Whether some of raw.jsonl's bytes were dropped (rows are then read again when shown). */
    this.dropped = false;
    /** @internal @type {number[]} */
    this.loadedBlocks = [];
    /** @internal @type {Map<number, Promise<void>>} */
    this.pendingBlocks = new Map();
    /** @internal @type {Uint32Array | null} lines matching the filter's text, when it was searched by block */
    this.textHits = null;
    /** @internal */
    this.textHitsTo = 0; // the line those hits were searched up to (later lines: searched as they come)
    /** @internal */
    this.dropCursor = 0; // blocks before it were considered for dropping while loading
  }

  /**
   * Forget the bytes (columns stay): rows are read again, a block at a time, when shown.
   * @param {RangeReader} reader
   * @internal
   */
  dropBytes(reader) {
    this.reader = reader;
    this.dropped = true;
    this.lines.dropAll();
    this.loadedBlocks = [];
  }

  /**
   * While loading: forget the bytes of the blocks indexed so far whose part `canDrop(part)` (its
   * raw.jsonl can be read again by range), so a big file never sits whole in the tab.
   *
   * @param {RangeReader} reader
   * @param {(part: number) => boolean} canDrop
   * @internal
   */
  dropIndexed(reader, canDrop) {
    this.reader = reader;
    const lines = this.lines;
    for (; this.dropCursor < lines.blocks.length; this.dropCursor += 1) {
      if (canDrop(lines.blockPart[this.dropCursor])) {
        lines.blocks[this.dropCursor] = null;
        this.dropped = true;
      }
    }
  }

  /**
   * Read block `b` again; emits when it is back (rows that were `undefined` can be drawn).
   * @param {number} b
   * @returns {Promise<void>}
   */
  loadBlock(b) {
    const pending = this.pendingBlocks.get(b);
    if (pending) return pending;
    const lines = this.lines;
    const promise = this.readBlocks(b, lines.blockFileLen[b])
      .then((bytes) => {
        if (!lines.restore(b, bytes)) throw new Error(`raw.jsonl changed under the viewer (block ${b})`);
        this.loadedBlocks.push(b);
        for (let over = this.loadedBlocks.length - KEEP_BLOCKS; over > 0; over -= 1) {
          lines.blocks[/** @type {number} */ (this.loadedBlocks.shift())] = null;
        }
        this.emit();
      })
      .finally(() => this.pendingBlocks.delete(b));
    this.pendingBlocks.set(b, promise);
    return promise;
  }

  /**
   * Lines whose text contains `needle`, from block `first` to the last block there is: blocks in
   * the tab are searched there, dropped ones read again in runs of ~8 MB. Resolves with the hits
   * and the first block not searched (more may have come in while it read).
   *
   * `bytes` bytes of raw.jsonl from where block `b` starts in its part (its file), read again.
   * @param {number} b
   * @param {number} bytes
   * @returns {Promise<Uint8Array>}
   * @internal
   */
  readBlocks(b, bytes) {
    if (!this.reader) return Promise.reject(new Error('no bytes were dropped: there is nothing to read again'));
    return this.reader(this.lines.blockPart[b], this.lines.blockStart[b], bytes);
  }

  /**
   * @param {string} needle
   * @param {number} [first]
   * @returns {Promise<{ hits: number[], next: number }>}
   * @internal
   */
  async searchDropped(needle, first = 0) {
    const lines = this.lines;
    /** @type {number[]} */
    const hits = [];
    let b = first;
    for (; b < lines.blocks.length; ) {
      let end = b + 1;
      const held = lines.blocks[b] !== null;
      let bytes = lines.blockFileLen[b];
      if (!held) {
        while (end < lines.blocks.length && lines.blocks[end] === null && lines.blockPart[end] === lines.blockPart[b]
               && bytes < SEARCH_RUN && lines.blockStart[end] === lines.blockStart[end - 1] + lines.blockFileLen[end - 1]) {
          bytes += lines.blockFileLen[end];
          end += 1;
        }
      }
      const run = held ? null : await this.readBlocks(b, bytes);
      let at = 0;
      for (let k = b; k < end; k += 1) {
        const had = lines.blocks[k];
        if (run) lines.restore(k, run.subarray(at, at + lines.blockFileLen[k]));
        at += lines.blockFileLen[k];
        const to = k + 1 < lines.blockFirst.length ? lines.blockFirst[k + 1] : lines.count;
        for (const line of this.searchLines(lines.blockFirst[k], to, needle)) hits.push(line);
        lines.blocks[k] = had;
      }
      b = end;
    }
    return { hits, next: b };
  }

  /**
   * Every line matching `needle` when some bytes were dropped; null when a newer filter came.
   * @param {string} needle
   * @param {NormalFilter} f
   * @returns {Promise<Uint32Array | null>}
   * @internal
   */
  async searchAll(needle, f) {
    /** @type {number[]} */
    const hits = [];
    let next = 0;
    // Loading goes on while dropped blocks are read: search again from where it stopped until
    // it has caught up (then no await separates the search from building the view).
    while (next < this.lines.blocks.length) {
      const found = await this.searchDropped(needle, next);
      if (this.filter !== f) return null;
      for (const line of found.hits) hits.push(line);
      next = found.next;
    }
    this.textHitsTo = next < this.lines.blockFirst.length ? this.lines.blockFirst[next] : this.lines.count;
    return Uint32Array.from(hits);
  }

  get loadedEvents() {
    return this.parsed;
  }

  get total() {
    return this.view ? this.viewLength : this.parsed;
  }

  /**
   * Call `fn` whenever rows change (loaded, filtered, read again); returns the unsubscribe.
   * @param {(table: EventTable) => void} fn
   * @returns {() => void}
   */
  onChange(fn) {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** @internal */
  emit() {
    for (const fn of this.listeners) fn(this);
  }

  /**
   * Fill the columns of lines [from, to) of part `part` (rank folder), whose rank is `rank`.
   * @param {number} from
   * @param {number} to
   * @param {number} part
   * @param {number | null} rank
   * @internal
   */
  index(from, to, part, rank) {
    const need = to;
    if (need > this.keyCol.length) {
      this.keyCol = growU32(this.keyCol, need);
      this.cidCol = growU32(this.cidCol, need);
      this.rankCol = growU32(this.rankCol, need);
      this.partCol = growU32(this.partCol, need);
    }
    // Decode runs of lines of up to DECODE_RUN bytes and split them, rather than one TextDecoder
    // call per line (slow) or one per block: a block's string can be large enough for V8 to put it
    // straight into the old generation, where only a major collection frees it (hundreds of MB of
    // garbage at a million events); short strings die young, in the cheap minor collections.
    const lines = this.lines;
    for (let i = from; i < to; ) {
      const b = lines.blockOf[i];
      const start = lines.startOf[i];
      let j = i + 1;
      while (j < to && lines.blockOf[j] === b && lines.endOf[j] - start <= DECODE_RUN) j += 1;
      const text = lines.decoder.decode(lines.heldBlock(b).subarray(start, lines.endOf[j - 1]));
      let line = i;
      for (const raw of text.split('\n')) {
        const body = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
        if (body !== '') this.indexLine(line++, body, part, rank);
      }
      i = j;
    }
    this.parsed = to;
    if (this.view) this.extendView(from, to);
  }

  /**
   * @param {number} i
   * @param {string} text
   * @param {number} part
   * @param {number | null} rank
   * @internal
   */
  indexLine(i, text, part, rank) {
    const event = parseLine(text);
    const key = eventKey(event);
    this.keyCol[i] = this.keys.id(key);
    this.cidCol[i] = this.cids.id(compileIdOf(event));
    // A valid rank is a non-negative integer below 2^31 (as the server's index); else the folder's.
    const own = event.rank;
    this.rankCol[i] = typeof own === 'number' && Number.isInteger(own) && own >= 0 && own < 2 ** 31 ? own : rank ?? -1;
    this.partCol[i] = part;
    this.keyCounts.set(key, (this.keyCounts.get(key) || 0) + 1);
    if (i < CACHE_FIRST) this.cache.set(i, event);
    if (this.onEvent) this.onEvent(event, i, part);
  }

  /**
   * The event of line `i` (unfiltered), parsed now or from a small cache; undefined while its block is read again.
   * @param {number} i
   * @returns {RawEvent | undefined}
   */
  event(i) {
    let event = this.cache.get(i);
    if (event === undefined) {
      const b = this.lines.blockOf[i];
      if (!this.lines.blocks[b]) {
        this.loadBlock(b).catch(() => {});
        return undefined;
      }
      event = parseLine(this.lines.text(i));
      if (this.cache.size >= CACHE_ROWS) this.cache.delete(/** @type {number} */ (this.cache.keys().next().value));
      this.cache.set(i, event);
    }
    return event;
  }

  /**
   * Line index of row `i` of the current view.
   * @param {number} i
   * @returns {number}
   */
  lineOf(i) {
    return this.view ? this.view[i] : i;
  }

  /**
   * The event of row `i` of the current view; undefined while its bytes are read again.
   * @param {number} i
   * @returns {RawEvent | undefined}
   */
  row(i) {
    if (i < 0 || i >= this.total) return undefined;
    return this.event(this.lineOf(i));
  }

  /**
   * Row of line `line` in the current view, or -1.
   * @param {number} line
   * @returns {number}
   */
  rowOfLine(line) {
    if (!this.view) return line < this.parsed ? line : -1;
    let lo = 0;
    let hi = this.viewLength - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.view[mid];
      if (v === line) return mid;
      if (v < line) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * The line index of raw.jsonl line `rawLine` (1-based, line 1 the string table) of part `part`:
   * parts are indexed one after another, so its first line is found by bisection.
   *
   * @param {number} part
   * @param {number} rawLine
   * @returns {number}
   */
  lineOfRaw(part, rawLine) {
    let lo = 0;
    let hi = this.parsed;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.partCol[mid] < part) lo = mid + 1;
      else hi = mid;
    }
    const line = lo + rawLine - 2;
    return line >= lo && line < this.parsed && this.partCol[line] === part ? line : -1;
  }

  /**
   * The rank of line `line` (-1: none).
   * @param {number} line
   * @returns {number}
   */
  rankOfLine(line) {
    return this.rankCol[line];
  }

  /**
   * The part (rank folder, in trace.parts) line `line` came from.
   * @param {number} line
   * @returns {number}
   */
  partOfLine(line) {
    return this.partCol[line];
  }

  /**
   * Show only the events matching `filter`; resolves with the rows matching.
   * @param {Filter} filter
   * @returns {Promise<number>}
   */
  async setFilter(filter) {
    this.filter = normalizeFilter(filter);
    const f = this.filter;
    this.textHits = null;
    if (f.q !== null && this.dropped) {
      const hits = await this.searchAll(f.q.toLowerCase(), f);
      if (hits === null) return this.total; // a newer filter was set while this one searched
      this.textHits = hits;
    }
    if (f.kind === null && f.cid === null && f.rank === null && f.q === null) {
      this.view = null;
      this.viewLength = 0;
    } else {
      this.view = new Uint32Array(1024);
      this.viewLength = 0;
      this.extendView(0, this.parsed);
    }
    this.emit();
    return this.total;
  }

  /**
   * Add the matching lines of [from, to) to the filtered view.
   * @param {number} from
   * @param {number} to
   * @internal
   */
  extendView(from, to) {
    if (!this.view) return;
    let view = this.view;
    const f = this.filter;
    const key = f.kind === null ? -1 : this.keys.ids.get(f.kind) ?? -2;
    const cid = f.cid === null ? -1 : this.cids.ids.get(f.cid) ?? -2;
    if (key === -2 || cid === -2) return;
    let textHits = null;
    if (f.q !== null) textHits = this.textCandidates(from, to, f.q.toLowerCase());
    const candidates = textHits || null;
    const n = candidates ? candidates.length : to - from;
    for (let j = 0; j < n; j += 1) {
      const i = candidates ? candidates[j] : from + j;
      if (key >= 0 && this.keyCol[i] !== key) continue;
      if (cid >= 0 && this.cidCol[i] !== cid) continue;
      if (f.rank !== null && this.rankCol[i] !== f.rank) continue;
      if (this.viewLength >= view.length) view = growU32(view, this.viewLength + 1);
      view[this.viewLength] = i;
      this.viewLength += 1;
    }
    this.view = view;
  }

  /**
   * Lines in [from, to) matching `needle`: from the search by block, then in the tab for later lines.
   * @param {number} from
   * @param {number} to
   * @param {string} needle
   * @returns {number[]}
   * @internal
   */
  textCandidates(from, to, needle) {
    if (!this.textHits) return this.searchLines(from, to, needle);
    const hits = Array.from(this.textHits.subarray(lowerBound(this.textHits, from), lowerBound(this.textHits, to)));
    // Lines that came in after the search: their blocks are still in the tab (dropped only after indexing).
    if (to > this.textHitsTo) for (const line of this.searchLines(Math.max(from, this.textHitsTo), to, needle)) hits.push(line);
    return hits;
  }

  /**
   * Lines in [from, to) whose JSON text contains `needle` (lower case), ascending.
   * @param {number} from
   * @param {number} to
   * @param {string} needle
   * @returns {number[]}
   * @internal
   */
  searchLines(from, to, needle) {
    /** @type {number[]} */
    const hits = [];
    const blocks = this.lines.blockFirst;
    let b = upperBound(blocks, from) - 1;
    for (; b < blocks.length && blocks[b] < to; b += 1) {
      const { text, first } = this.lines.blockText(b);
      const lower = text.toLowerCase();
      let line = first;
      let lineEnd = lower.indexOf('\n');
      let at = lower.indexOf(needle);
      while (at >= 0) {
        while (lineEnd >= 0 && lineEnd < at) {
          line += 1;
          lineEnd = lower.indexOf('\n', lineEnd + 1);
        }
        if (line >= from && line < to) hits.push(line);
        if (lineEnd < 0) break;
        at = lower.indexOf(needle, lineEnd + 1);
      }
    }
    return hits;
  }

  /**
   * Events per compile id (display form), over every line loaded.
   * @returns {Map<string, number>}
   */
  cidCounts() {
    const counts = new Uint32Array(this.cids.values.length);
    for (let i = 0; i < this.parsed; i += 1) counts[this.cidCol[i]] += 1;
    return new Map(this.cids.values.map((id, k) => [id, counts[k]]));
  }

  /**
   * [key, count] of every event key seen, most frequent first.
   * @returns {Array<[string, number]>}
   */
  keyList() {
    return sortedKeys(this.keyCounts);
  }
}

/**
 * A raw.jsonl line as an event; a line that is not JSON as an event saying so.
 * @param {string} text
 * @returns {RawEvent}
 */
export function parseLine(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { '(unparsable line)': text.slice(0, 200) };
  }
}

/**
 * @param {Map<string, number>} counts
 * @returns {Array<[string, number]>}
 */
function sortedKeys(counts) {
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

/**
 * @param {ArrayLike<number>} sorted
 * @param {number} value
 */
function lowerBound(sorted, value) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * @param {ArrayLike<number>} sorted
 * @param {number} value
 */
function upperBound(sorted, value) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const DECODE_RUN = 16 * 1024; // bytes of lines decoded at once while indexing (see index)
const KEEP_BLOCKS = 64; // blocks read again and kept (a few MB): the screen and its neighbours
const SEARCH_RUN = 8 * 1024 * 1024; // bytes read per request when searching dropped blocks

const PAGE = 200;
const KEEP_PAGES = 64;

/** Events paged from `GET <api>?kind=&compile_id=&rank=&q=&offset=&limit=`. */
export class RemoteEvents {
  /**
   * @param {string} api
   * @param {{ fetchImpl?: typeof fetch, keyCounts?: Map<string, number> }} [options]
   */
  constructor(api, { fetchImpl, keyCounts } = {}) {
    this.api = api;
    /** @type {typeof fetch} */
    this.fetch = fetchImpl || ((...args) => fetch(...args));
    this.filter = normalizeFilter();
    /** @internal */
    this.totalCount = 0;
    /** @internal @type {Map<number, RawEvent[]>} */
    this.pages = new Map();
    /** @internal @type {Map<number, Promise<void>>} */
    this.pending = new Map();
    /** @internal */
    this.generation = 0;
    /** @internal @type {Set<(table: EventTable) => void>} */
    this.listeners = new Set();
    /** @internal */
    this.keyCounts = keyCounts || new Map();
    /** @type {true} */
    this.remote = true;
    /** @internal @type {RawEvent[] | null} the first events of raw.jsonl, rows of the unfiltered view until the API answers */
    this.head = null;
  }

  /**
   * Show `events` (raw.jsonl's first lines) as the first rows of the unfiltered view, of `total`,
   * before the server has answered: its first answer can wait on indexing a big file.
   *
   * @param {RawEvent[]} events
   * @param {number} total
   */
  seed(events, total) {
    this.head = events;
    this.totalCount = total;
  }

  get total() {
    return this.totalCount;
  }

  get loadedEvents() {
    return this.totalCount;
  }

  /**
   * Call `fn` whenever rows change (a page came, the filter changed); returns the unsubscribe.
   * @param {(table: EventTable) => void} fn
   * @returns {() => void}
   */
  onChange(fn) {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** @internal */
  emit() {
    for (const fn of this.listeners) fn(this);
  }

  /**
   * @param {number} offset
   * @param {number} limit
   * @returns {string}
   * @internal
   */
  query(offset, limit) {
    const params = new URLSearchParams({ offset: String(offset), limit: String(limit) });
    const f = this.filter;
    if (f.kind !== null) params.set('kind', f.kind);
    if (f.cid !== null) params.set('compile_id', f.cid);
    if (f.rank !== null) params.set('rank', String(f.rank));
    if (f.q !== null) params.set('q', f.q);
    return `${this.api}?${params}`;
  }

  /**
   * @param {number} page
   * @returns {Promise<{ total: number, events: RawEvent[] } | null>} null: a newer filter came meanwhile
   * @internal
   */
  async fetchPage(page) {
    const generation = this.generation;
    const response = await this.fetch(this.query(page * PAGE, PAGE));
    if (!response.ok) throw new Error(`events API: HTTP ${response.status}`);
    /** @type {{ total: number, events: RawEvent[] }} the events API's answer (docs/SERVER.md) */
    const body = await response.json();
    if (generation !== this.generation) return null;
    this.totalCount = body.total;
    this.pages.set(page, body.events);
    if (this.pages.size > KEEP_PAGES) this.pages.delete(/** @type {number} */ (this.pages.keys().next().value));
    return body;
  }

  /**
   * Make sure the page holding row `i` is there (or on its way).
   * @param {number} i
   * @returns {Promise<void>}
   */
  load(i) {
    const page = Math.floor(i / PAGE);
    if (this.pages.has(page)) return Promise.resolve();
    let promise = this.pending.get(page);
    if (!promise) {
      promise = this.fetchPage(page)
        .then((body) => {
          if (body) this.emit();
        })
        .finally(() => this.pending.delete(page));
      this.pending.set(page, promise);
    }
    return promise;
  }

  /**
   * The event of row `i` of the current view; undefined while its page is on its way.
   * @param {number} i
   * @returns {RawEvent | undefined}
   */
  row(i) {
    if (i < 0 || i >= this.totalCount) return undefined;
    const events = this.pages.get(Math.floor(i / PAGE));
    if (!events) {
      this.load(i).catch(() => {});
      const f = this.filter;
      const unfiltered = f.kind === null && f.cid === null && f.rank === null && f.q === null;
      return unfiltered && this.head && i < this.head.length ? this.head[i] : undefined;
    }
    return events[i % PAGE];
  }

  /**
   * Show only the events matching `filter`; resolves with the rows matching.
   * @param {Filter} filter
   * @returns {Promise<number>}
   */
  async setFilter(filter) {
    this.filter = normalizeFilter(filter);
    this.generation += 1;
    this.pages.clear();
    this.pending.clear();
    await this.fetchPage(0);
    this.emit();
    return this.totalCount;
  }

  /**
   * [key, count] of every event key (the manifests' counts), most frequent first.
   * @returns {Array<[string, number]>}
   */
  keyList() {
    return sortedKeys(this.keyCounts);
  }
}
