// The trace model: an output folder's parts (one, or one per rank), what compiles.json and the
// manifests say of its compile ids, and the events once opened (trace.js). Statuses follow the
// format's rules (rules.js); loading the events is loading.js's.

import { compileIdOf, eventKey, graphNameOf, isObject, isSafeRelative, manifestCompileIds, sortCompileIds } from './format.js';
import { LocalEvents } from './store.js';
import { readDivergence, readJobAnswers } from './divergence.js';
import { readExports, readExportsNote } from './exports.js';
import { readAotInductor, readCompileEntries, readDynamic, readFirstAnswers, readSettings, readVllm } from './compiles.js';
import { METRICS_KEYS, STATUS_ORDER, SUMMARY_STATUS, listedRanks, mergeGraphBreaks, nextAttempt, resolveFrames, severity, statusFromMetrics, statusOrderOf } from './rules.js';

/** @typedef {import('./format.js').Manifest} Manifest */
/** @typedef {import('./format.js').RawEvent} RawEvent */
/** @typedef {import('./rules.js').GraphBreak} GraphBreak */
/** @typedef {import('./rules.js').ResolvedFrame} ResolvedFrame */
/** @typedef {import('./source.js').Source} Source */
/** @typedef {import('./store.js').RemoteEvents} RemoteEvents */
/** @typedef {import('./compiles-json.js').CompileEntry} CompileEntry */
/** @typedef {import('./compiles-json.js').Symbol} SymbolEntry */
/** @typedef {import('./divergence.js').Divergence} Divergence */
/** @typedef {import('./exports.js').ExportCallView} ExportCallView */
/** @typedef {import('./graph-json.js').GraphFile} GraphFile */

/**
 * A compile id's entry as a trace holds it: compiles.json's (its fields, as far as the file has
 * them; from multi_rank_summary.json only `status` and tlparse's own fields), with `status` the
 * worst over ranks, each rank's status in `ranks` and each rank's own entry in `byRank`.
 * @typedef {Partial<CompileEntry> & { id: string, status: string }} CompileRecord
 * @typedef {CompileRecord & { ranks: Record<number, string>, byRank: Record<number, CompileRecord> }} TraceCompile
 */

/**
 * A payload reference of compiles.json (docs/FORMAT.md section 14): the event is raw.jsonl line
 * `raw_line` (when it has one) of its folder, log line `log_line`.
 * @typedef {{ raw_line: number | null, log_line: number | null }} RefLines
 */

/**
 * compile_directory.json of a part: the report's pages per compile id.
 * @typedef {Record<string, { artifacts: Array<{ name: string, url: string, number: number, suffix: string, readable_url: string | null }> }>} CompileDirectory
 */

/**
 * One output folder of a trace: the trace's own, or one rank's folder (`rank_N/`) of a multi-rank one.
 * @typedef {object} TracePart
 * @property {number | null} rank null for a single log
 * @property {string} prefix
 * @property {Source} source
 * @property {Manifest | null} manifest
 * @property {Array<string | null>} [stringTable] raw.jsonl's string table, once its first line is read
 * @property {RawEvent[]} [head] paged from the server: raw.jsonl's first events, shown before the API answers
 * @property {CompileDirectory | null} [compileDirectory]
 * @property {Promise<CompileDirectory | null>} [directoryPromise]
 */

/**
 * What an output folder holds: its parts, and multi_rank_summary.json's entries for a multi-rank one.
 * @typedef {{ multiRank: boolean, summary: unknown[] | null, parts: TracePart[] }} FoundParts
 */

/**
 * The parts of the output folder at `source`: its own, or each rank folder's of a multi-rank one.
 * `layout`, when known (tlscope serve's status says it): only that layout's file is asked for;
 * otherwise manifest.json, then multi_rank_summary.json only when there is no manifest (a
 * single log's folder, the usual one, then asks for nothing it lacks).
 * @param {Source} source
 * @param {'single' | 'multi-rank' | null} [layout]
 * @returns {Promise<FoundParts>}
 */
export async function findParts(source, layout = null) {
  const manifest = layout === 'multi-rank' ? null : await source.jsonOr('manifest.json', null);
  const summary = manifest || layout === 'single' ? null : await source.jsonOr('multi_rank_summary.json', null);
  if (manifest) return { multiRank: false, summary: null, parts: [{ rank: null, prefix: '', source, manifest: /** @type {Manifest} */ (manifest) }] };
  if (Array.isArray(summary)) {
    const ranks = listedRanks(summary);
    const parts = await Promise.all(
      ranks.map(async (rank) => {
        const sub = source.sub(`rank_${rank}/`);
        const rankManifest = /** @type {Manifest | null} */ (await sub.jsonOr('manifest.json', null));
        return { rank, prefix: `rank_${rank}/`, source: sub, manifest: rankManifest };
      }),
    );
    return { multiRank: true, summary, parts };
  }
  // Without a manifest (e.g. a dropped raw.jsonl), everything is taken from the events.
  return { multiRank: false, summary: null, parts: [{ rank: null, prefix: '', source, manifest: null }] };
}

/**
 * compiles.json's entries by compile id, or null when `data` is not a compiles.json.
 * @param {unknown} data
 * @returns {Map<string, CompileEntry> | null}
 */
function compilesFromFile(data) {
  const entries = readCompileEntries(data);
  return entries && new Map(entries.map((entry) => [entry.id, entry]));
}

/** Rows of a paged view searched for a payload reference's event. */
const REF_SCAN_ROWS = 2000;

/**
 * An output folder (or multi-rank job folder) being read: its parts, what compiles.json says of
 * its compile ids, and its events once openTrace has opened it (see OpenedTrace for the type
 * openTrace gives, whose `events` match its `mode`).
 */
export class Trace {
  /**
   * @param {Source} source
   * @param {FoundParts} found
   */
  constructor(source, found) {
    this.source = source;
    this.multiRank = found.multiRank;
    this.summary = found.summary;
    this.parts = found.parts;
    /** manifest.json (the first rank's, for a multi-rank folder) */
    this.manifest = found.parts[0].manifest;
    /** @type {LocalEvents | RemoteEvents | null} the table model; set by openTrace with `mode` */
    this.events = null;
    /** @type {'local' | 'remote'} held in the tab, or paged from the server's events API */
    this.mode = 'local';
    /** @type {string | null} the events API paged from (remote mode) */
    this.api = null;
    /** Held in the tab: every event is in (`loaded` has resolved). */
    this.complete = false;
    /** @type {Promise<Trace>} resolves when every event is in (local) or when the events API has answered (remote) */
    this.loaded = Promise.resolve(this);
    /** @type {Map<string, TraceCompile>} display id -> its entry (compiles.json, else multi_rank_summary.json) */
    this.compiles = new Map();
    /** @type {'compiles.json' | 'multi_rank_summary.json' | 'none'} where statuses come from ('none': derived from metrics) */
    this.statusSource = 'none';
    /** @type {Map<string, string>} status -> what it means (compiles.json `statuses`) */
    this.statusText = new Map();
    /** @type {readonly string[]} the statuses, most severe first: compiles.json `status_order` (STATUS_ORDER for older files) */
    this.statusOrder = STATUS_ORDER;
    /** @internal @type {Map<string, string>} display id -> status derived from metrics while loading */
    this.derived = new Map();
    /** @type {GraphBreak[]} compiles.json's distinct graph breaks, merged over ranks (mergeGraphBreaks) */
    this.graphBreaks = [];
    /** @internal @type {Map<string, SymbolEntry[]>} `rank|compile id` -> compiles.json's `symbols` of it (format 1.10) */
    this.symbolsByCid = new Map();
    /** @type {unknown} a multi-rank job's ranks.json as read (docs/FORMAT.md section 16; null: none) */
    this.ranksFile = null;
    /** @type {Divergence | null} ranks.json's `divergence`: how the ranks diverge, as tlscope wrote it */
    this.divergence = null;
    /** @type {ExportCallView[]} compiles.json's `exports` (format 1.18) of every part, in part order */
    this.exports = [];
    /** @type {string[]} compiles.json's `exports_note` (format 1.19) of the parts, each said once */
    this.exportsNotes = [];
    /** @type {import('./compiles.js').AotInductorView[]} compiles.json's `aot_inductor` (format 1.21) of every part */
    this.aotInductor = [];
    /** @type {import('./compiles.js').VllmView[]} compiles.json's `vllm` (format 1.22) of every part */
    this.vllm = [];
    /** @type {import('./compiles.js').DynamicView[]} compiles.json's `dynamic` (format 1.29) of each part that has one */
    this.dynamic = [];
    /** @type {import('./compiles.js').SettingsView[]} compiles.json's `settings` (format 1.29) of each part that has one */
    this.settings = [];
    /** @type {import('./compiles.js').FirstAnswerView[]} the first answers: a log's compiles.json's (format 1.41), a job's ranks.json's (1.42) */
    this.firstAnswers = [];
    /** compiles.json asked for and answered (found, absent or unreadable) */
    this.indexesRead = false;
    /** @type {Promise<void>} openTrace: resolves once compiles.json is read; rejects if it is unreadable */
    this.indexes = Promise.resolve();
    /** @internal @type {Set<string>} */
    this.seenCids = new Set();
    /** @internal @type {Set<string> | null} */
    this.manifestIds = null;
    /** @internal @type {string[] | null} */
    this.sortedIds = null;
  }

  /** @returns {number[]} */
  get ranks() {
    if (this.multiRank) return this.parts.flatMap((p) => (p.rank === null ? [] : [p.rank]));
    return this.manifest && Array.isArray(this.manifest.ranks) ? this.manifest.ranks : [];
  }

  /**
   * Events in raw.jsonl according to the manifests (null when a manifest is missing).
   * @returns {number | null}
   */
  get expectedEvents() {
    let n = 0;
    for (const part of this.parts) {
      if (!part.manifest || !Number.isInteger(part.manifest.raw_jsonl_events)) return null;
      n += part.manifest.raw_jsonl_events;
    }
    return n;
  }

  /**
   * The manifests' compile ids as a set, made once (status() asks it for every compile id).
   * @returns {Set<string>}
   * @internal
   */
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
   * @returns {string[]}
   */
  get compileIds() {
    if (this.sortedIds) return this.sortedIds;
    /** @type {Set<string>} */
    const ids = new Set();
    for (const part of this.parts) for (const id of manifestCompileIds(part.manifest)) ids.add(id);
    if (ids.size === 0) return sortCompileIds([...this.seenCids]);
    this.sortedIds = sortCompileIds([...ids]);
    return this.sortedIds;
  }

  /**
   * The compile ids of one rank's manifest in a multi-rank job (of every part when `rank` is null,
   * or for a single log), as a set.
   * @param {number | null} rank
   * @returns {Set<string>}
   */
  idsOfRank(rank) {
    if (rank === null || !this.multiRank) return this.manifestIdSet();
    const part = this.parts.find((p) => p.rank === rank);
    return new Set(part ? manifestCompileIds(part.manifest) : []);
  }

  /**
   * The status of a compile id: compiles.json, then the multi-rank summary, then metrics.
   * @param {string} id
   * @returns {string | null}
   */
  status(id) {
    const entry = this.compiles.get(id);
    if (entry && entry.status) return entry.status;
    const derived = this.derived.get(id);
    if (derived !== undefined) return derived;
    if (id === '[-/-]') return 'outside';
    // No metrics, but a next attempt exists: Dynamo abandoned this one and analysed the frame again.
    const next = nextAttempt(id);
    if (this.seenCids.has(next) || this.manifestIdSet().has(next)) return 'restarted';
    // Loaded in the tab and no metrics logged for it: say so (tlparse's "missing").
    return this.mode === 'local' && this.complete ? 'metrics_missing' : null;
  }

  /**
   * A status's place in statusOrder: 0 for the most severe, unknown statuses last (sort by it).
   * @param {string | null | undefined} status
   * @returns {number}
   */
  severity(status) {
    return severity(status, this.statusOrder);
  }

  /**
   * Read every part's compiles.json: statuses, their meanings, graph breaks.
   * @internal
   */
  async readIndexes() {
    /** @type {unknown[]} */
    let files;
    try {
      // A multi-rank job's ranks.json (small) beside each rank's compiles.json.
      const ranksFile = this.multiRank ? this.source.jsonOr('ranks.json', null).catch(() => null) : Promise.resolve(null);
      [files, this.ranksFile] = await Promise.all([Promise.all(this.parts.map((part) => part.source.jsonOr('compiles.json', null))), ranksFile]);
      this.divergence = readDivergence(this.ranksFile);
    } finally {
      this.indexesRead = true;
    }
    this.statusOrder = files.map(statusOrderOf).find((order) => order !== null) ?? STATUS_ORDER;
    this.exports = this.parts.flatMap((part, i) => readExports(files[i], part.rank));
    this.exportsNotes = [...new Set(files.map(readExportsNote).filter((note) => note !== null))];
    this.aotInductor = this.parts.flatMap((part, i) => readAotInductor(files[i], part.rank));
    this.vllm = this.parts.flatMap((part, i) => readVllm(files[i], part.rank));
    this.dynamic = this.parts.flatMap((part, i) => readDynamic(files[i], part.rank) ?? []);
    this.settings = this.parts.flatMap((part, i) => readSettings(files[i], part.rank) ?? []);
    // A job's: ranks.json's, each line once with its ranks (decided in Python); a log's: its compiles.json's.
    const job = this.multiRank ? readJobAnswers(this.ranksFile) : null;
    this.firstAnswers = this.multiRank ? (job ? job.lines : []) : this.parts.flatMap((part, i) => readFirstAnswers(files[i], part.rank));
    /** lines of ranks.json's `first_answers` left out (format 1.42) */
    this.firstAnswersMore = job ? job.more : 0;
    this.parts.forEach((part, i) => {
      const file = files[i];
      const compiles = compilesFromFile(file);
      if (compiles) {
        this.statusSource = 'compiles.json';
        const texts = isObject(file) ? file.statuses : null;
        if (isObject(texts)) {
          for (const [name, text] of Object.entries(texts)) if (typeof text === 'string') this.statusText.set(name, text);
        }
        for (const [id, entry] of compiles) this.mergeStatus(id, entry, part.rank);
      }
      const symbols = isObject(file) && Array.isArray(file.symbols) ? file.symbols : [];
      for (const symbol of symbols) {
        if (!isObject(symbol) || typeof symbol.compile_id !== 'string') continue;
        const key = `${part.rank ?? ''}|${symbol.compile_id}`;
        this.symbolsByCid.set(key, [...(this.symbolsByCid.get(key) || []), /** @type {SymbolEntry} */ (symbol)]);
      }
    });
    this.graphBreaks = mergeGraphBreaks(this.parts.map((part, i) => {
      const file = files[i];
      return { rank: part.rank, breaks: isObject(file) ? file.graph_breaks : null };
    }));
    if (this.statusSource === 'none' && this.summary) this.readSummaryStatuses();
  }

  /**
   * compile_directory.json of a part (the report's pages per compile id), read when first asked.
   * @param {number} [part]
   * @returns {Promise<CompileDirectory | null>}
   */
  compileDirectory(part = 0) {
    const p = this.parts[part];
    if (!p) return Promise.resolve(null);
    if (!p.directoryPromise) {
      p.directoryPromise = p.source.jsonOr('compile_directory.json', null).then((d) => {
        const directory = isObject(d) ? /** @type {CompileDirectory} */ (d) : null;
        p.compileDirectory = directory;
        return directory;
      });
    }
    return p.directoryPromise;
  }

  /**
   * Statuses from multi_rank_summary.json (tlparse's words mapped), when no compiles.json has them.
   * @internal
   */
  readSummaryStatuses() {
    for (const entry of this.summary || []) {
      if (!isObject(entry) || !isObject(entry.compiles)) continue;
      const rank = typeof entry.rank === 'number' ? entry.rank : null;
      for (const [id, info] of Object.entries(entry.compiles)) {
        if (isObject(info) && typeof info.status === 'string') this.mergeStatus(id, { ...info, id, status: SUMMARY_STATUS[info.status] || info.status }, rank);
      }
      this.statusSource = 'multi_rank_summary.json';
    }
  }

  /**
   * @param {string} id
   * @param {CompileRecord} entry
   * @param {number | null} rank
   * @internal
   */
  mergeStatus(id, entry, rank) {
    // Across ranks, a compile id shows its worst status and the ranks it has each status on.
    const prev = this.compiles.get(id);
    /** @type {Record<number, string>} */
    const ranks = prev ? { ...prev.ranks } : {};
    if (rank !== null && rank !== undefined) ranks[rank] = entry.status;
    const status = prev && this.severity(prev.status) < this.severity(entry.status) ? prev.status : entry.status;
    // Each rank's own entry is kept beside the merged one (the fields differ between ranks).
    /** @type {Record<number, CompileRecord>} */
    const byRank = prev ? { ...prev.byRank } : {};
    if (rank !== null && rank !== undefined) byRank[rank] = entry;
    this.compiles.set(id, { ...entry, id, status, ranks, byRank });
  }

  /**
   * Where the dynamic dimensions of a compile id come from: compiles.json's `symbols` created
   * under it (format 1.10; [] for older files), of one rank (default: the first part's).
   * @param {string} id
   * @param {number | null} [rank]
   * @returns {SymbolEntry[]}
   */
  symbolsOf(id, rank = null) {
    const first = this.parts.length ? this.parts[0].rank : null;
    return this.symbolsByCid.get(`${rank ?? first ?? ''}|${id}`) || [];
  }

  /**
   * Why inputs are dynamic that the code never marked (compiles.json `dynamic`, format 1.29), as
   * one rank's log says it (default: the first part's); null when it says nothing.
   * @param {number | null} [rank]
   * @returns {import('./compiles.js').DynamicView | null}
   */
  dynamicOf(rank = null) {
    const first = this.parts.length ? this.parts[0].rank : null;
    return this.dynamic.find((d) => d.rank === (rank ?? first)) ?? null;
  }

  /**
   * The compiles that ran under other settings than the first (compiles.json `settings`, format
   * 1.29), as one rank's log says it (default: the first part's); null when none did.
   * @param {number | null} [rank]
   * @returns {import('./compiles.js').SettingsView | null}
   */
  settingsOf(rank = null) {
    const first = this.parts.length ? this.parts[0].rank : null;
    return this.settings.find((d) => d.rank === (rank ?? first)) ?? null;
  }

  /**
   * The compiles.json entry of a compile id as one rank logged it (the merged entry for a single
   * log, or when `rank` is null or has no entry of its own), or null.
   * @param {string} id
   * @param {number | null} [rank]
   * @returns {CompileRecord | null}
   */
  compileEntry(id, rank = null) {
    const merged = this.compiles.get(id);
    if (!merged) return null;
    return (rank !== null && merged.byRank && merged.byRank[rank]) || merged;
  }

  /**
   * Note an event as it is loaded: its compile id, and a status from its metrics.
   * @param {RawEvent} event
   * @internal
   */
  observe(event) {
    const cid = compileIdOf(event);
    this.seenCids.add(cid);
    const key = eventKey(event);
    if (METRICS_KEYS.has(key)) {
      const status = statusFromMetrics(event[key]);
      const prev = this.derived.get(cid);
      if (status && (!prev || this.severity(status) < this.severity(prev))) this.derived.set(cid, status);
    }
  }

  /**
   * The compile id of the event behind a compiles.json payload reference of rank `rank`'s folder,
   * read from its raw.jsonl line when the events are held in the tab (null when paged from the
   * server). It can differ from the entry's: a recompile's `recompile_reasons` is logged under the
   * frame compile's first attempt (`[1/1]`) while the entry holding the metrics is its last (`[1/1_1]`).
   *
   * @param {RefLines} ref
   * @param {number | null} [rank]
   * @returns {Promise<string | null>}
   */
  async refCompileId(ref, rank = null) {
    const events = this.events;
    if (!(events instanceof LocalEvents) || ref.raw_line === null) return null;
    const rawLine = ref.raw_line;
    const part = this.partOfRank(rank ?? undefined);
    if (events.lineOfRaw(part, rawLine) < 0 && !this.complete) await this.loaded;
    const line = events.lineOfRaw(part, rawLine);
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
   *
   * @param {RefLines} ref
   * @param {number | null} [rank]
   * @returns {Promise<number>}
   */
  async rowOfRef(ref, rank = null) {
    const events = this.events;
    if (!events) return -1;
    if (events instanceof LocalEvents) {
      const rawLine = ref.raw_line;
      if (rawLine === null) return -1;
      const find = () => events.rowOfLine(events.lineOfRaw(this.partOfRank(rank ?? undefined), rawLine));
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

  /**
   * The string table of the part (rank folder) an event came from.
   * @param {number} [part]
   * @returns {Array<string | null>}
   */
  stringTable(part = 0) {
    return this.parts[part] ? this.parts[part].stringTable || [] : [];
  }

  /**
   * Frames with their file names resolved (FORMAT.md section 8).
   * @param {unknown} frames
   * @param {number} [part]
   * @returns {ResolvedFrame[]}
   */
  resolveFrames(frames, part = 0) {
    return resolveFrames(frames, this.stringTable(part));
  }

  /**
   * The index in `parts` of rank `rank`'s folder (0 when there is none: a single log).
   * @param {number | null | undefined} rank
   * @returns {number}
   */
  partOfRank(rank) {
    const i = this.parts.findIndex((p) => p.rank === rank);
    return i < 0 ? 0 : i;
  }

  /**
   * The text of an event's payload, fetched now (null when it has none).
   * @param {RawEvent} event
   * @param {number} [part]
   * @returns {Promise<string | null>}
   */
  async payload(event, part = this.partOfRank(event.rank)) {
    const name = event.payload_filename;
    if (typeof name !== 'string' || !isSafeRelative(name)) return null;
    // A rank of a job keeps no payloads/ of its own: its manifest's payloads.root ".." says they
    // are in the job's, shared by every rank (FORMAT.md section 4).
    const p = this.parts[part];
    const shared = p.prefix && p.manifest?.payloads?.root === '..';
    const bytes = await (shared ? this.source : p.source).bytes(name);
    return new TextDecoder().decode(bytes);
  }

  /**
   * An event's FX graph as data (`graphs/<md5>.json` beside its payload, FORMAT.md section 18),
   * fetched now; null when its payload is no graph or the folder predates format 1.10.
   * @param {RawEvent} event
   * @param {number} [part]
   * @returns {Promise<GraphFile | null>}
   */
  async graph(event, part = this.partOfRank(event.rank)) {
    const name = graphNameOf(event.payload_filename);
    if (name === null) return null;
    // Beside payloads/, so under the same root (a rank of a job: the job's folder).
    const p = this.parts[part];
    const shared = p.prefix && p.manifest?.payloads?.root === '..';
    const file = await (shared ? this.source : p.source).jsonOr(name, null);
    return isObject(file) ? /** @type {GraphFile} */ (file) : null;
  }

  /**
   * A link to a file of the trace (report pages), or null when it cannot be linked.
   * @param {string} path
   * @param {number} [part]
   * @returns {string | null}
   */
  fileUrl(path, part = 0) {
    if (!isSafeRelative(path)) return null;
    return this.parts[part].source.url(path);
  }

  /**
   * The bytes of chromium_events.json (the combined one for a multi-rank folder).
   * @returns {Promise<Uint8Array<ArrayBuffer>>}
   */
  async chromiumEvents() {
    return this.source.bytes('chromium_events.json');
  }
}
