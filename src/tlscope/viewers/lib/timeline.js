// @ts-check
// timeline.bin's decoder (docs/FORMAT.md section 17): every chromium event of a trace (a job's
// ranks together) packed in ~8 bytes each (layout version 2: varints; version 1, 16-byte records,
// is read too). Columnar: a Timeline holds typed arrays, one slot per event, so a million events
// cost ~30 MB and no objects; `event(i)` builds one event when a view needs it. Gives what the
// Python reference decoder `tlscope.timeline.read` gives, field for field.

export const TIMELINE_MAGIC = 'TLSTIME\0';
/** The layout version written since format 1.16; version 1 is read too. */
export const TIMELINE_VERSION = 2;
const HEADER_BYTES = 40;
const BLOCK_BYTES = 16;
const BLOCK2_BYTES = 20;
const EVENT_BYTES = 16;
const DEPTH_ESCAPE = 31;
/** Version 2: the kinds whose record carries a duration (span, complete, unclosed). */
const HAS_DURATION = [true, true, false, true, false];
const NO_RANK = 0xffffffff;
const NO_COMPILE_ID = 0xffffff;
const INDEX_MASK = 0xffffff;
const KIND_MASK = 0x07;
const FLAG_MS = 0x08;
/** The kinds by their number (FORMAT.md section 17). */
export const TIMELINE_KINDS = ['span', 'complete', 'instant', 'unclosed', 'unopened'];

/**
 * One event, with the Python decoder's field names.
 * @typedef {{ rank: number | null, name: string, cat: string, start_us: number, dur_us: number,
 *   compile_id: string | null, depth: number, kind: string }} TimelineEvent
 */

export class TimelineError extends Error {}

export class Timeline {
  /**
   * @param {{ version: number, minor: number, skipped: number, strings: string[],
   *   labels: Uint32Array, compileIds: Uint32Array, count: number }} parts
   */
  constructor(parts) {
    this.version = parts.version;
    this.minor = parts.minor;
    /** Chromium events the writer left out (not an object, or no usable `ts`). */
    this.skipped = parts.skipped;
    this.strings = parts.strings;
    /** Pairs of string ids: label i is (name labels[2i], category labels[2i+1]). */
    this.labels = parts.labels;
    /** compile id i is strings[compileIds[i]]. */
    this.compileIds = parts.compileIds;
    this.count = parts.count;
    /** Rank of each event, -1 for none. */
    this.rank = new Int32Array(parts.count);
    /** Start of each event in epoch µs (exact: below 2^53). */
    this.start = new Float64Array(parts.count);
    /** Duration of each event in µs. */
    this.dur = new Float64Array(parts.count);
    /** Label index of each event. */
    this.label = new Uint32Array(parts.count);
    /** Compile id index of each event, 0xffffff for none. */
    this.compile = new Uint32Array(parts.count);
    /** Nesting depth of each event. */
    this.depth = new Uint8Array(parts.count);
    /** Kind number of each event (TIMELINE_KINDS). */
    this.kind = new Uint8Array(parts.count);
    /** Distinct ranks, in the order their blocks come. */
    this.ranks = /** @type {number[]} */ ([]);
  }

  /**
   * Event i as the Python decoder gives it.
   * @param {number} i
   * @returns {TimelineEvent}
   */
  event(i) {
    const label = this.label[i];
    const cid = this.compile[i];
    return {
      rank: this.rank[i] < 0 ? null : this.rank[i],
      name: this.strings[this.labels[2 * label]],
      cat: this.strings[this.labels[2 * label + 1]],
      start_us: this.start[i],
      dur_us: this.dur[i],
      compile_id: cid === NO_COMPILE_ID ? null : this.strings[this.compileIds[cid]],
      depth: this.depth[i],
      kind: TIMELINE_KINDS[this.kind[i]] ?? 'instant',
    };
  }

  /** @returns {TimelineEvent[]} every event (for tests and small traces; views index the columns). */
  events() {
    const all = new Array(this.count);
    for (let i = 0; i < this.count; i += 1) all[i] = this.event(i);
    return all;
  }
}

/**
 * Decode a whole timeline.bin.
 * @param {ArrayBuffer | Uint8Array} data
 * @returns {Timeline}
 */
export function decodeTimeline(data) {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  need(view, 0, HEADER_BYTES);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== TIMELINE_MAGIC) throw new TimelineError('not a timeline.bin (bad magic)');
  const version = view.getUint16(8, true);
  if (version !== TIMELINE_VERSION && version !== 1) {
    throw new TimelineError(`timeline.bin version ${version}; this decoder reads versions 1 and ${TIMELINE_VERSION}`);
  }
  const tablesAt = Number(view.getBigUint64(16, true));
  const count = Number(view.getBigUint64(24, true));
  const skipped = Number(view.getBigUint64(32, true));
  // Every event takes a byte or more: a count beyond the file's size is a damaged header, not
  // columns to allocate.
  if (count > bytes.length) throw new TimelineError('timeline.bin holds fewer events than its header says');
  const tables = version === 1 ? readTables(view, bytes, tablesAt) : readTables2(new Cursor(bytes, tablesAt, bytes.length));
  const timeline = new Timeline({ version, minor: view.getUint16(10, true), skipped, ...tables, count });
  if (version === 1) readBlocks(view, tablesAt, timeline);
  else readBlocks2(view, bytes, tablesAt, timeline);
  return timeline;
}

/** Bytes read as LEB128 varints from `pos` (version 2), up to `end`. */
class Cursor {
  /**
   * @param {Uint8Array} bytes
   * @param {number} pos
   * @param {number} end
   */
  constructor(bytes, pos, end) {
    this.bytes = bytes;
    this.pos = pos;
    this.end = end;
  }

  /** A varint below 2^53 (exact: multiplications, not 32-bit shifts). */
  varint() {
    const bytes = this.bytes;
    let b = bytes[this.pos++];
    if (b < 0x80) return b;
    let value = b & 0x7f;
    let scale = 0x80;
    do {
      b = bytes[this.pos++];
      value += (b & 0x7f) * scale;
      scale *= 0x80;
    } while (b >= 0x80);
    return value;
  }

  /** A count of entries of at least a byte each: refused when more than the bytes left. */
  count() {
    const n = this.varint();
    if (n > this.end - this.pos) throw new TimelineError('timeline.bin is truncated');
    return n;
  }

  /** @param {number} n */
  varints(n) {
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i += 1) out[i] = this.varint();
    this.check();
    return out;
  }

  /** Refuse having read past `end` (a varint reads `undefined` past the bytes: 0, and stops). */
  check() {
    if (this.pos > this.end) throw new TimelineError('timeline.bin is truncated');
  }
}

/**
 * Version 2's tables: varint counts, lengths and indexes.
 * @param {Cursor} c
 */
function readTables2(c) {
  const utf8 = new TextDecoder('utf-8');
  const strings = new Array(c.count());
  for (let i = 0; i < strings.length; i += 1) {
    const size = c.varint();
    c.check();
    if (c.pos + size > c.end) throw new TimelineError('timeline.bin is truncated');
    strings[i] = utf8.decode(c.bytes.subarray(c.pos, c.pos + size));
    c.pos += size;
  }
  const labels = c.varints(2 * c.count());
  const compileIds = c.varints(c.count());
  return { strings, labels, compileIds };
}

/**
 * Version 2's blocks: a 20-byte header, the block's own label and compile-id tables, records.
 * @param {DataView} view
 * @param {Uint8Array} bytes
 * @param {number} end
 * @param {Timeline} t
 */
function readBlocks2(view, bytes, end, t) {
  let pos = HEADER_BYTES;
  let i = 0;
  const seen = new Set();
  while (pos < end) {
    need(view, pos, BLOCK2_BYTES);
    const rank = view.getUint32(pos, true);
    const n = view.getUint32(pos + 4, true);
    const size = view.getUint32(pos + 8, true);
    const base = Number(view.getBigInt64(pos + 12, true));
    pos += BLOCK2_BYTES;
    need(view, pos, size);
    if (i + n > t.count) throw new TimelineError('timeline.bin holds more events than its header says');
    const r = rank === NO_RANK ? -1 : rank;
    if (r >= 0 && !seen.has(r)) {
      seen.add(r);
      t.ranks.push(r);
    }
    const c = new Cursor(bytes, pos, pos + size);
    const labels = c.varints(c.count());
    const cids = c.varints(c.count());
    if (labels.some((g) => 2 * g >= t.labels.length) || cids.some((g) => g >= t.compileIds.length)) {
      throw new TimelineError('timeline.bin\'s block indexes a missing label or compile id');
    }
    readRecords2(c, { first: i, n, rank: r, base, labels, cids }, t);
    if (c.pos !== c.end) throw new TimelineError('timeline.bin\'s block does not end with its events');
    pos += size;
    i += n;
  }
  if (i !== t.count) throw new TimelineError('timeline.bin holds fewer events than its header says');
}

/** Where the varint `longVarint` read last ends. */
let varintEnd = 0;

/**
 * The varint at `pos` (below 2^53: multiplications, not 32-bit shifts); sets `varintEnd`.
 * @param {Uint8Array} bytes
 * @param {number} pos
 */
function longVarint(bytes, pos) {
  let at = pos;
  let b = bytes[at++];
  let value = b & 0x7f;
  let scale = 0x80;
  while (b >= 0x80) {
    b = bytes[at++];
    value += (b & 0x7f) * scale;
    scale *= 0x80;
  }
  varintEnd = at;
  return value;
}

/**
 * A version-2 block's records into the columns, its local indexes made global. The position is
 * a local and one-byte varints (most fields) are read inline.
 * @param {Cursor} c
 * @param {{ first: number, n: number, rank: number, base: number, labels: Uint32Array, cids: Uint32Array }} block
 * @param {Timeline} t
 */
function readRecords2(c, block, t) {
  const { labels, cids, rank } = block;
  const col = { rank: t.rank, start: t.start, dur: t.dur, label: t.label, compile: t.compile, depth: t.depth, kind: t.kind };
  const bytes = c.bytes;
  let pos = c.pos;
  let start = block.base;
  const last = block.first + block.n;
  for (let i = block.first; i < last; i += 1) {
    const head = bytes[pos++];
    const kind = head & KIND_MASK;
    let depth = head >>> 3;
    if (depth === DEPTH_ESCAPE) depth = bytes[pos++];
    if (kind >= HAS_DURATION.length) throw new TimelineError(`timeline.bin holds an event of kind ${kind}`);
    let delta = bytes[pos++];
    if (delta >= 0x80) {
      delta = longVarint(bytes, pos - 1);
      pos = varintEnd;
    }
    // zigzag: integer operations below 2^31, exact division above
    start += delta <= 0x7fffffff ? (delta >>> 1) ^ -(delta & 1) : delta % 2 === 1 ? -(delta + 1) / 2 : delta / 2;
    let dur = 0;
    if (HAS_DURATION[kind]) {
      dur = bytes[pos++];
      if (dur >= 0x80) {
      dur = longVarint(bytes, pos - 1);
      pos = varintEnd;
    }
    }
    let label = bytes[pos++];
    if (label >= 0x80) {
      label = longVarint(bytes, pos - 1);
      pos = varintEnd;
    }
    let cid = bytes[pos++];
    if (cid >= 0x80) {
      cid = longVarint(bytes, pos - 1);
      pos = varintEnd;
    }
    if (!(label < labels.length && cid <= cids.length)) throw new TimelineError('timeline.bin\'s event indexes a missing label or compile id');
    col.rank[i] = rank;
    col.start[i] = start;
    col.dur[i] = dur;
    col.label[i] = labels[label];
    col.compile[i] = cid === 0 ? NO_COMPILE_ID : cids[cid - 1];
    col.depth[i] = depth;
    col.kind[i] = kind;
  }
  c.pos = pos;
  c.check();
}

/**
 * Version 1's tables: u32 counts, lengths and indexes.
 * @param {DataView} view
 * @param {Uint8Array} bytes
 * @param {number} at
 */
function readTables(view, bytes, at) {
  const utf8 = new TextDecoder('utf-8');
  let pos = at;
  const u32 = () => {
    need(view, pos, 4);
    const value = view.getUint32(pos, true);
    pos += 4;
    return value;
  };
  const strings = new Array(u32());
  for (let i = 0; i < strings.length; i += 1) {
    const size = u32();
    need(view, pos, size);
    strings[i] = utf8.decode(bytes.subarray(pos, pos + size));
    pos += size;
  }
  const labels = new Uint32Array(2 * u32());
  for (let i = 0; i < labels.length; i += 1) labels[i] = u32();
  const compileIds = new Uint32Array(u32());
  for (let i = 0; i < compileIds.length; i += 1) compileIds[i] = u32();
  return { strings, labels, compileIds };
}

/**
 * Version 1's blocks: a 16-byte header and 16-byte records.
 * @param {DataView} view
 * @param {number} end
 * @param {Timeline} t
 */
function readBlocks(view, end, t) {
  let pos = HEADER_BYTES;
  let i = 0;
  const seen = new Set();
  while (pos < end) {
    need(view, pos, BLOCK_BYTES);
    const rank = view.getUint32(pos, true);
    const n = view.getUint32(pos + 4, true);
    const base = Number(view.getBigInt64(pos + 8, true));
    pos += BLOCK_BYTES;
    need(view, pos, n * EVENT_BYTES);
    if (i + n > t.count) throw new TimelineError('timeline.bin holds more events than its header says');
    const r = rank === NO_RANK ? -1 : rank;
    if (r >= 0 && !seen.has(r)) {
      seen.add(r);
      t.ranks.push(r);
    }
    for (let k = 0; k < n; k += 1, i += 1, pos += EVENT_BYTES) {
      const word = view.getUint32(pos + 8, true);
      const cidWord = view.getUint32(pos + 12, true);
      const flags = word >>> 24;
      const duration = view.getUint32(pos + 4, true);
      t.rank[i] = r;
      t.start[i] = base + view.getUint32(pos, true);
      t.dur[i] = flags & FLAG_MS ? duration * 1000 : duration;
      t.label[i] = word & INDEX_MASK;
      t.compile[i] = cidWord & INDEX_MASK;
      t.depth[i] = cidWord >>> 24;
      t.kind[i] = flags & KIND_MASK;
    }
  }
  if (i !== t.count) throw new TimelineError('timeline.bin holds fewer events than its header says');
}

/**
 * @param {DataView} view
 * @param {number} at
 * @param {number} size
 */
function need(view, at, size) {
  if (at + size > view.byteLength) throw new TimelineError('timeline.bin is truncated');
}
