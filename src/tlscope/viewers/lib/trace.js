// Opening a trace: one output folder, or a multi-rank output folder (rank_N/ subfolders), from
// any source. Reads the manifest and index files first (small), then streams raw.jsonl into the
// table model, or pages it through the server's events API when it is too big to hold.

import { compileIdOf, eventKey, isSafeRelative, manifestCompileIds, sortCompileIds } from './format.js';
import { HttpSource } from './source.js';
import { streamLines } from './lines.js';
import { LocalEvents, RemoteEvents } from './store.js';

/** Above either limit, a trace served by `tlscope serve` is paged through its events API. */
export const DEFAULT_LIMITS = { events: 300000, bytes: 128 * 1024 * 1024 };
/** Above this many bytes of raw.jsonl held in the tab, they are dropped once indexed and read
 * again a block at a time when shown, where the source can (HTTP Range, a picked file). */
export const KEEP_BYTES = 64 * 1024 * 1024;

/** The events API URL of a trace served at `/traces/<id>/` by tlscope serve, or null. */
export function eventsApiFor(traceUrl) {
  const url = new URL(traceUrl, typeof location === 'undefined' ? 'http://localhost/' : location.href);
  const match = url.pathname.match(/^(.*)\/traces\/([^/]+)\/?$/);
  if (!match) return null;
  return `${url.origin}${match[1]}/api/traces/${match[2]}/events`;
}

async function findParts(source) {
  // Both asked at once: one of them exists.
  const [manifest, summary] = await Promise.all([source.jsonOr('manifest.json', null), source.jsonOr('multi_rank_summary.json', null)]);
  if (manifest) return { multiRank: false, summary: null, parts: [{ rank: null, prefix: '', source, manifest }] };
  if (Array.isArray(summary)) {
    const ranks = summary.map((entry) => entry.rank).filter((r) => Number.isInteger(r));
    const parts = await Promise.all(
      ranks.map(async (rank) => {
        const sub = source.sub(`rank_${rank}/`);
        return { rank, prefix: `rank_${rank}/`, source: sub, manifest: await sub.jsonOr('manifest.json', null) };
      }),
    );
    return { multiRank: true, summary, parts };
  }
  // Without a manifest (e.g. a dropped raw.jsonl), everything is taken from the events.
  return { multiRank: false, summary: null, parts: [{ rank: null, prefix: '', source, manifest: null }] };
}

function compilesFromFile(data) {
  const list = Array.isArray(data) ? data : data && Array.isArray(data.compiles) ? data.compiles : null;
  if (!list) return null;
  const out = new Map();
  for (const entry of list) if (entry && typeof entry.id === 'string') out.set(entry.id, entry);
  return out;
}

/**
 * A status derived from compilation_metrics, used when compiles.json is absent: the names are
 * compiles.json's vocabulary (docs/FORMAT.md), so a viewer styles one set of statuses.
 */
export function statusFromMetrics(meta) {
  if (!meta || typeof meta !== 'object') return null;
  if (meta.fail_type) return 'failed';
  if (Array.isArray(meta.restart_reasons) && meta.restart_reasons.length) return 'graph_break';
  if (meta.has_guarded_code === false || meta.graph_op_count === 0) return 'empty';
  return 'ok';
}

/** multi_rank_summary.json's statuses (tlparse's words) in compiles.json's vocabulary. */
const SUMMARY_STATUS = { break: 'graph_break', error: 'failed', missing: 'metrics_missing' };

/** The display id of the attempt after `id` (`[0/1]` -> `[0/1_1]`, `[0/1_1]` -> `[0/1_2]`). */
function nextAttempt(id) {
  const m = /^(.*?)(?:_(\d+))?\]$/.exec(id);
  return m ? `${m[1]}_${Number(m[2] || 0) + 1}]` : '';
}

/**
 * compiles.json's distinct graph breaks (`graph_breaks`) of every part as one list: a break at
 * the same (reason, file, line) on several ranks is one entry whose `count` is the sum, with
 * `ranks` and each compile id's rank (`sites`: [{cid, rank}], in log order, rank by rank). Most
 * frequent first. `lists`: [{rank, breaks}] (rank null for a single log).
 */
export function mergeGraphBreaks(lists) {
  const merged = new Map();
  for (const { rank, breaks } of lists) {
    if (!Array.isArray(breaks)) continue;
    for (const entry of breaks) {
      if (!entry || typeof entry.reason !== 'string') continue;
      const frame = entry.user_frame && typeof entry.user_frame === 'object' ? entry.user_frame : {};
      const file = typeof frame.file === 'string' ? frame.file : null;
      const line = Number.isInteger(frame.line) ? frame.line : null;
      const key = JSON.stringify([entry.reason, file, line]);
      let out = merged.get(key);
      if (!out) {
        out = { reason: entry.reason, file, line, name: typeof frame.name === 'string' ? frame.name : null,
                code: typeof frame.code === 'string' ? frame.code : null, count: 0, ranks: [], sites: [] };
        merged.set(key, out);
      }
      out.count += Number.isInteger(entry.count) ? entry.count : 0;
      if (rank !== null && rank !== undefined && !out.ranks.includes(rank)) out.ranks.push(rank);
      const ids = Array.isArray(entry.compile_ids) ? entry.compile_ids : [];
      for (const cid of ids) if (typeof cid === 'string') out.sites.push({ cid, rank: rank ?? null });
    }
  }
  return [...merged.values()].sort((a, b) => b.count - a.count);
}

/** compiles.json's statuses, most severe first: across ranks a compile id shows its worst. */
export const STATUS_ORDER = ['failed', 'metrics_missing', 'restarted', 'graph_break', 'empty', 'cache_hit', 'ok', 'outside'];

function severity(status) {
  const at = STATUS_ORDER.indexOf(status);
  return at < 0 ? STATUS_ORDER.length : at;
}

/** Rows of a paged view searched for a payload reference's event. */
const REF_SCAN_ROWS = 2000;

const METRICS_KEYS = new Set(['compilation_metrics', 'bwd_compilation_metrics', 'aot_autograd_backward_compilation_metrics']);

export class Trace {
  constructor(source, found) {
    this.source = source;
    this.multiRank = found.multiRank;
    this.summary = found.summary;
    this.parts = found.parts;
    this.manifest = found.parts[0].manifest;
    this.events = null;
    this.mode = 'local';
    this.compiles = new Map(); // display id -> {id, status, rank?, ...}
    this.statusSource = 'none';
    this.statusText = new Map(); // status -> what it means (compiles.json `statuses`)
    this.derived = new Map(); // display id -> status derived from metrics while loading
    this.graphBreaks = []; // compiles.json's distinct graph breaks, merged over ranks (mergeGraphBreaks)
    this.indexesRead = false; // compiles.json asked for and answered (found, absent or unreadable)
    this.indexes = Promise.resolve(); // openTrace: resolves once compiles.json is read
    this.seenCids = new Set();
  }

  get ranks() {
    if (this.multiRank) return this.parts.map((p) => p.rank);
    return this.manifest && Array.isArray(this.manifest.ranks) ? this.manifest.ranks : [];
  }

  /** Events in raw.jsonl according to the manifests (null when a manifest is missing). */
  get expectedEvents() {
    let n = 0;
    for (const part of this.parts) {
      if (!part.manifest || !Number.isInteger(part.manifest.raw_jsonl_events)) return null;
      n += part.manifest.raw_jsonl_events;
    }
    return n;
  }

  /** The manifests' compile ids as a set, made once (status() asks it for every compile id). */
  manifestIdSet() {
    if (!this.manifestIds) {
      this.manifestIds = new Set();
      for (const part of this.parts) for (const id of manifestCompileIds(part.manifest)) this.manifestIds.add(id);
    }
    return this.manifestIds;
  }

  /**
   * Compile ids listed by the manifests (union over ranks), sorted, `[-/-]` first; without them,
   * the ids seen in the events so far. The manifests' list is sorted once (it cannot change).
   */
  get compileIds() {
    if (this.sortedIds) return this.sortedIds;
    const ids = new Set();
    for (const part of this.parts) for (const id of manifestCompileIds(part.manifest)) ids.add(id);
    if (ids.size === 0) return sortCompileIds([...this.seenCids]);
    this.sortedIds = sortCompileIds([...ids]);
    return this.sortedIds;
  }

  /** The status of a compile id: compiles.json, then the multi-rank summary, then metrics. */
  status(id) {
    const entry = this.compiles.get(id);
    if (entry && entry.status) return entry.status;
    if (this.derived.has(id)) return this.derived.get(id);
    if (id === '[-/-]') return 'outside';
    // No metrics, but a next attempt exists: Dynamo abandoned this one and analysed the frame again.
    const next = nextAttempt(id);
    if (this.seenCids.has(next) || this.manifestIdSet().has(next)) return 'restarted';
    // Loaded in the tab and no metrics logged for it: say so (tlparse's "missing").
    return this.mode === 'local' && this.complete ? 'metrics_missing' : null;
  }

  async readIndexes() {
    let files;
    try {
      files = await Promise.all(this.parts.map((part) => part.source.jsonOr('compiles.json', null)));
    } finally {
      this.indexesRead = true;
    }
    this.parts.forEach((part, i) => {
      const compiles = compilesFromFile(files[i]);
      if (compiles) {
        this.statusSource = 'compiles.json';
        const texts = files[i].statuses;
        if (texts && typeof texts === 'object') {
          for (const [name, text] of Object.entries(texts)) if (typeof text === 'string') this.statusText.set(name, text);
        }
        for (const [id, entry] of compiles) this.mergeStatus(id, entry, part.rank);
      }
    });
    this.graphBreaks = mergeGraphBreaks(this.parts.map((part, i) => ({ rank: part.rank, breaks: files[i] && files[i].graph_breaks })));
    if (this.statusSource === 'none' && this.summary) this.readSummaryStatuses();
  }

  /** compile_directory.json of a part (the report's pages per compile id), read when first asked. */
  compileDirectory(part = 0) {
    const p = this.parts[part];
    if (!p) return Promise.resolve(null);
    if (!p.directoryPromise) {
      p.directoryPromise = p.source.jsonOr('compile_directory.json', null).then((d) => {
        p.compileDirectory = d;
        return d;
      });
    }
    return p.directoryPromise;
  }

  readSummaryStatuses() {
    for (const entry of this.summary) {
      if (!entry || typeof entry.compiles !== 'object' || entry.compiles === null) continue;
      for (const [id, info] of Object.entries(entry.compiles)) {
        if (info && typeof info.status === 'string') this.mergeStatus(id, { ...info, status: SUMMARY_STATUS[info.status] || info.status }, entry.rank);
      }
      this.statusSource = 'multi_rank_summary.json';
    }
  }

  mergeStatus(id, entry, rank) {
    // Across ranks, a compile id shows its worst status and the ranks it has each status on.
    const prev = this.compiles.get(id);
    const ranks = prev ? { ...prev.ranks } : {};
    if (rank !== null && rank !== undefined) ranks[rank] = entry.status;
    const status = prev && severity(prev.status) < severity(entry.status) ? prev.status : entry.status;
    // Each rank's own entry is kept beside the merged one (the fields differ between ranks).
    const byRank = prev ? { ...prev.byRank } : {};
    if (rank !== null && rank !== undefined) byRank[rank] = entry;
    this.compiles.set(id, { ...entry, id, status, ranks, byRank });
  }

  /**
   * The compiles.json entry of a compile id as one rank logged it (the merged entry for a single
   * log, or when `rank` is null or has no entry of its own), or null.
   */
  compileEntry(id, rank = null) {
    const merged = this.compiles.get(id);
    if (!merged) return null;
    return (rank !== null && merged.byRank && merged.byRank[rank]) || merged;
  }

  observe(event) {
    const cid = compileIdOf(event);
    this.seenCids.add(cid);
    const key = eventKey(event);
    if (METRICS_KEYS.has(key)) {
      const status = statusFromMetrics(event[key]);
      const prev = this.derived.get(cid);
      if (status && (!prev || severity(status) < severity(prev))) this.derived.set(cid, status);
    }
  }

  /**
   * The compile id of the event behind a compiles.json payload reference of rank `rank`'s folder,
   * read from its raw.jsonl line when the events are held in the tab (null when paged from the
   * server). It can differ from the entry's: a recompile's `recompile_reasons` is logged under the
   * frame compile's first attempt (`[1/1]`) while the entry holding the metrics is its last (`[1/1_1]`).
   */
  async refCompileId(ref, rank = null) {
    if (this.mode !== 'local') return null;
    const events = this.events;
    const part = this.partOfRank(rank ?? undefined);
    if (events.lineOfRaw(part, ref.raw_line) < 0 && !this.complete) await this.loaded;
    const line = events.lineOfRaw(part, ref.raw_line);
    if (line < 0) return null;
    let event = events.event(line);
    if (event === undefined) {
      await events.loadBlock(events.lines.blockOf[line]).catch(() => {}); // its bytes were dropped: read again
      event = events.event(line);
    }
    return event ? compileIdOf(event) : null;
  }

  /**
   * The row of the current view holding the event of a compiles.json payload reference
   * ({raw_line, log_line}) of rank `rank`'s folder (null: a single log), or -1. Held in the tab:
   * its raw.jsonl line; paged from the events API: the first rows' log lines (narrow the view
   * to that kind of event of that compile id first, as the explorer does).
   */
  async rowOfRef(ref, rank = null) {
    const events = this.events;
    if (this.mode === 'local') {
      const find = () => events.rowOfLine(events.lineOfRaw(this.partOfRank(rank ?? undefined), ref.raw_line));
      if (find() < 0 && !this.complete) await this.loaded; // its line may not be read yet
      return find();
    }
    for (let i = 0; i < Math.min(events.total, REF_SCAN_ROWS); i += 1) {
      if (!events.row(i)) await events.load(i).catch(() => {});
      const event = events.row(i);
      if (event && event.log_line === ref.log_line) return i;
    }
    return -1;
  }

  /** The string table of the part (rank folder) an event came from. */
  stringTable(part = 0) {
    return this.parts[part] ? this.parts[part].stringTable || [] : [];
  }

  /** Frames with their file names resolved (FORMAT.md section 8). */
  resolveFrames(frames, part = 0) {
    return resolveFrames(frames, this.stringTable(part));
  }

  partOfRank(rank) {
    const i = this.parts.findIndex((p) => p.rank === rank);
    return i < 0 ? 0 : i;
  }

  /** The text of an event's payload, fetched now (null when it has none). */
  async payload(event, part = this.partOfRank(event.rank)) {
    const name = event.payload_filename;
    if (typeof name !== 'string' || !isSafeRelative(name)) return null;
    const bytes = await this.parts[part].source.bytes(name);
    return new TextDecoder().decode(bytes);
  }

  /** A link to a file of the trace (report pages), or null when it cannot be linked. */
  fileUrl(path, part = 0) {
    if (!isSafeRelative(path)) return null;
    const src = this.parts[part].source;
    return src.url ? src.url(path) : null;
  }

  /** The bytes of chromium_events.json (the combined one for a multi-rank folder). */
  async chromiumEvents() {
    return this.source.bytes('chromium_events.json');
  }
}

/** Frames with `file` resolved through `table`; `uninterned_filename` takes precedence. */
export function resolveFrames(frames, table) {
  if (!Array.isArray(frames)) return [];
  return frames.map((frame) => {
    const f = frame && typeof frame === 'object' ? frame : {};
    let file = '(unknown)';
    if (typeof f.uninterned_filename === 'string') file = f.uninterned_filename;
    else if (Number.isInteger(f.filename) && typeof table[f.filename] === 'string') file = table[f.filename];
    else if (typeof f.filename === 'string') file = f.filename;
    return { file, line: Number.isInteger(f.line) ? f.line : null, name: String(f.name ?? ''), loc: typeof f.loc === 'string' ? f.loc : '' };
  });
}

async function chooseMode(trace, options) {
  if (options.mode === 'local' || trace.source.kind !== 'http') return 'local';
  const api = options.api === undefined ? eventsApiFor(trace.source.base.href) : options.api;
  if (!api) return 'local';
  const limits = { ...DEFAULT_LIMITS, ...(options.limits || {}) };
  const expected = trace.expectedEvents;
  // The size of raw.jsonl is asked (HEAD) only when the event count leaves it in doubt.
  const unsure = expected === null || expected * 8192 > limits.bytes;
  const big = options.mode === 'remote' || (expected !== null && expected > limits.events) || (unsure && (await rawBytes(trace)) > limits.bytes);
  if (!big) return 'local';
  if (!(await servesEventsApi(trace, api))) return 'local';
  trace.api = api;
  return 'remote';
}

/**
 * Whether the server behind `api` has an events API for this trace: asked of its trace list
 * (/api/traces), not of the events themselves, whose first answer can wait on the server indexing
 * a big raw.jsonl. A custom `api` (not tlscope serve's layout) is trusted as given.
 */
async function servesEventsApi(trace, api) {
  const match = api.match(/^(.*\/api\/traces)\/([^/]+)\/events$/);
  if (!match) return true;
  const list = await trace.source.fetch(match[1]).then((r) => (r.ok ? r.json() : null)).catch(() => null);
  const id = decodeURIComponent(match[2]);
  return Array.isArray(list) && list.some((t) => t && t.id === id);
}

async function rawBytes(trace) {
  let total = 0;
  for (const part of trace.parts) {
    const known = part.source.knownLength ? await part.source.knownLength('raw.jsonl') : null;
    if (known !== null) {
      total += known;
      continue;
    }
    const url = part.source.url('raw.jsonl');
    // no-store: the browser's HTTP cache makes a request wait (up to 20 s in Chromium) while
    // another of the same URL is in flight, as the prefetched GET of raw.jsonl may be.
    const head = await trace.source.fetch(url, { method: 'HEAD', cache: 'no-store' }).catch(() => null);
    total += head && head.ok ? Number(head.headers.get('content-length') || 0) : 0;
  }
  return total;
}

function parseStringTable(text) {
  try {
    const table = JSON.parse(text).string_table;
    return Array.isArray(table) ? table : [];
  } catch {
    return [];
  }
}

function partReader(trace) {
  return (p, start, length) => trace.parts[p].source.readRange('raw.jsonl', start, length);
}

function maybeDropBytes(trace, keepBytes) {
  const events = trace.events;
  if (events.lines.bytes <= keepBytes) return;
  if (!trace.parts.every((part) => part.source.canReadRange('raw.jsonl'))) return;
  events.dropBytes(partReader(trace));
}

/** Resolves after the next frame is drawn (or after 100 ms where frames do not come: a hidden tab, node). */
function nextFrame() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    if (typeof requestAnimationFrame !== 'function') return;
    requestAnimationFrame(() => setTimeout(() => {
      clearTimeout(timer);
      resolve();
    }, 0));
  });
}

// Lines indexed before the first rows are shown: a screenful and more, not the whole first chunk
// (which can be megabytes when the network is faster than the page).
const FIRST_ROWS = 200;
// Indexing gives the page a turn at least this often (ms), so it draws and answers while loading.
const SLICE_MS = 30;

async function loadLocal(trace, onProgress, keepBytes) {
  const events = trace.events;
  // Past keepBytes, indexed blocks are dropped as the file streams in (where its part can be read
  // again by range), so the tab never holds the whole file, not even for a moment.
  const canDrop = (p) => trace.parts[p].source.canReadRange('raw.jsonl');
  let lastYield = Date.now();
  let shown = false;
  const report = () => {
    events.emit();
    if (onProgress) onProgress(events.parsed);
  };
  for (let p = 0; p < trace.parts.length; p += 1) {
    const part = trace.parts[p];
    events.lines.startFile(p);
    events.lines.expectHeader((text) => {
      part.stringTable = parseStringTable(text);
    });
    const stream = await part.source.stream('raw.jsonl');
    await streamLines(stream, events.lines, async (from, to) => {
      let at = from;
      if (!shown) {
        // The first rows go on screen before anything else is indexed.
        shown = true;
        at = Math.min(to, from + FIRST_ROWS);
        events.index(from, at, p, part.rank);
        report();
        await nextFrame();
        lastYield = Date.now();
      }
      if (at < to) events.index(at, to, p, part.rank);
      if (events.lines.bytes > keepBytes) events.dropIndexed(partReader(trace), canDrop);
      if (Date.now() - lastYield > SLICE_MS) {
        report();
        await new Promise((r) => setTimeout(r, 0)); // let the page draw between chunks
        lastYield = Date.now();
      }
    });
  }
  events.emit();
}

async function keyCountsFromManifests(trace) {
  const counts = new Map();
  for (const part of trace.parts) {
    const events = part.manifest && part.manifest.events ? part.manifest.events : {};
    for (const [key, info] of Object.entries(events)) {
      if (key === 'str' || key === 'chromium_event') continue;
      counts.set(key, (counts.get(key) || 0) + (info.count || 0));
    }
  }
  return counts;
}

async function loadStringTables(trace) {
  // Remote mode still needs each part's string table: the first line of raw.jsonl. The lines that
  // come with it (up to HEAD_ROWS) are kept: the first rows, shown before the API answers.
  for (const part of trace.parts) {
    const reader = (await part.source.stream('raw.jsonl')).getReader();
    const chunks = [];
    let newlines = 0;
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
      for (let at = value.indexOf(0x0a); at >= 0; at = value.indexOf(0x0a, at + 1)) newlines += 1;
      if (newlines > HEAD_ROWS || (newlines > 0 && bytes > HEAD_BYTES)) break;
    }
    reader.cancel().catch(() => {});
    const lines = new TextDecoder().decode(new Uint8Array(await new Blob(chunks).arrayBuffer())).split('\n');
    part.stringTable = parseStringTable(lines[0]);
    part.head = [];
    // Whole lines only (the last piece may be cut); blank lines are not events.
    for (const line of lines.slice(1, -1)) {
      const text = line.replace(/\r$/, '');
      if (!text) continue;
      try {
        part.head.push(JSON.parse(text));
      } catch {
        part.head.push({ '(unparsable line)': text.slice(0, 200) });
      }
      if (part.head.length === HEAD_ROWS) break;
    }
  }
}

const HEAD_ROWS = 200;
const HEAD_BYTES = 1024 * 1024;

async function openRemote(trace, source) {
  trace.events = new RemoteEvents(trace.api, { fetchImpl: source.fetch, keyCounts: await keyCountsFromManifests(trace) });
  await loadStringTables(trace);
  const expected = trace.expectedEvents;
  const answered = trace.events.setFilter({}).then(() => trace);
  // One raw.jsonl is the unfiltered view's order: its first lines are the first rows at once.
  if (trace.parts.length === 1 && expected !== null && trace.parts[0].head.length) {
    trace.events.seed(trace.parts[0].head, expected);
    trace.loaded = answered;
    answered.catch(() => {});
  } else {
    await answered;
    trace.loaded = Promise.resolve(trace);
  }
  return trace;
}

/**
 * Open a trace. `where` is a base URL (string or URL) or a source object (FileSource,
 * InlineSource). Options: `mode` ('auto', 'local', 'remote'), `limits` ({events, bytes}), `keepBytes`,
 * `api` (events API URL, or null for none), `fetchImpl`, `onProgress(eventsLoaded)`,
 * `waitForIndexes` (default true).
 * Resolves once the manifest and the first rows are available, and compiles.json (statuses,
 * graph breaks) is read; with `waitForIndexes: false`, without waiting for compiles.json (megabytes
 * in a big trace, and the first rows do not need it): `trace.indexes` resolves when it is read.
 * `trace.loaded` resolves when every event is in (local mode) or when the events API has answered
 * (remote mode; until then the first rows of a single raw.jsonl come from its first lines).
 */
export async function openTrace(where, options = {}) {
  const source = typeof where === 'string' || where instanceof URL ? new HttpSource(String(where), options) : where;
  const found = await findParts(source);
  const trace = new Trace(source, found);
  const wait = options.waitForIndexes !== false;
  // compiles.json is read while the mode is chosen and raw.jsonl starts (one round trip fewer);
  // or, not waited for, once the first rows are drawn: parsing its megabytes (14 MB in the 40k
  // bench case) on the page's one thread would otherwise land before them.
  let indexes = wait ? trace.readIndexes() : null;
  const settle = (promise) => {
    trace.indexes = promise;
    promise.catch(() => {}); // reported through trace.indexes (or openTrace, when it waits)
    return promise;
  };
  if (indexes) settle(indexes);
  trace.mode = await chooseMode(trace, options);
  if (trace.mode === 'remote') {
    // Paged from the server: the first rows come from it, compiles.json beside them.
    indexes = indexes || settle(trace.readIndexes());
    if (wait) await indexes;
    return openRemote(trace, source);
  }
  trace.events = new LocalEvents(trace.expectedEvents ?? 4096);
  trace.events.onEvent = (event) => trace.observe(event);
  let firstRows;
  const first = new Promise((resolve) => {
    firstRows = resolve;
  });
  const stop = trace.events.onChange(() => firstRows());
  const keepBytes = options.keepBytes ?? KEEP_BYTES;
  trace.loaded = loadLocal(trace, options.onProgress, keepBytes).then(() => {
    maybeDropBytes(trace, keepBytes);
    trace.complete = true;
    return trace;
  });
  trace.loaded.catch(() => firstRows());
  if (!indexes) indexes = settle(first.then(nextFrame).then(() => trace.readIndexes()));
  await Promise.race([first, trace.loaded]);
  stop();
  if (wait) await indexes;
  return trace;
}

