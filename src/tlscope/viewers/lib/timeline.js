// @ts-check
// timeline.bin's decoder (docs/FORMAT.md section 17): every chromium event of a trace (a job's
// ranks together) packed in 16 bytes each. Columnar: a Timeline holds typed arrays, one slot per
// event, so a million events cost ~30 MB and no objects; `event(i)` builds one event when a view
// needs it. Gives what the Python reference decoder `tlscope.timeline.read` gives, field for field.

export const TIMELINE_MAGIC = 'TLSTIME\0';
export const TIMELINE_VERSION = 1;
const HEADER_BYTES = 40;
const BLOCK_BYTES = 16;
const EVENT_BYTES = 16;
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
  if (version !== TIMELINE_VERSION) throw new TimelineError(`timeline.bin version ${version}; this decoder reads version ${TIMELINE_VERSION}`);
  const tablesAt = Number(view.getBigUint64(16, true));
  const count = Number(view.getBigUint64(24, true));
  const skipped = Number(view.getBigUint64(32, true));
  const tables = readTables(view, bytes, tablesAt);
  const timeline = new Timeline({ version, minor: view.getUint16(10, true), skipped, ...tables, count });
  readBlocks(view, tablesAt, timeline);
  return timeline;
}

/**
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
