// The trace model: an output folder's parts (one, or one per rank), what compiles.json and the
// manifests say of its compile ids, and the events once opened (trace.js). Statuses follow the
// format's rules (rules.js); loading the events is loading.js's.

import { compileIdOf, eventKey, isSafeRelative, manifestCompileIds, sortCompileIds } from './format.js';
import { METRICS_KEYS, SUMMARY_STATUS, mergeGraphBreaks, nextAttempt, resolveFrames, severity, statusFromMetrics } from './rules.js';

/** The parts of the output folder at `source`: its own, or each rank folder's of a multi-rank one. */
export async function findParts(source) {
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

/** Rows of a paged view searched for a payload reference's event. */
const REF_SCAN_ROWS = 2000;

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
    // A rank of a job keeps no payloads/ of its own: its manifest's payloads.root ".." says they
    // are in the job's, shared by every rank (FORMAT.md section 4).
    const p = this.parts[part];
    const shared = p.prefix && p.manifest?.payloads?.root === '..';
    const bytes = await (shared ? this.source : p.source).bytes(name);
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
