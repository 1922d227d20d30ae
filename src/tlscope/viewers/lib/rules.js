// The format's rules as the client applies them (docs/FORMAT.md): compiles.json's status
// vocabulary and its severity order, a status derived from compilation_metrics where compiles.json
// is absent, graph breaks merged over ranks, and stack frames resolved through the string table.

import { describeFix } from './compiles.js';
import { isObject } from './format.js';

/** @typedef {import('./format.js').Frame} Frame */

/**
 * A stack frame with its file name resolved.
 * @typedef {{ file: string, line: number | null, name: string, loc: string }} ResolvedFrame
 */

/**
 * One distinct graph break of compiles.json `graph_breaks`, merged over ranks.
 * @typedef {object} GraphBreak
 * @property {string} reason
 * @property {string | null} file
 * @property {number | null} line
 * @property {string | null} name
 * @property {string | null} code
 * @property {number} count How many dynamo_graph_break_reason artifacts (summed over ranks).
 * @property {number[]} ranks
 * @property {Array<{ cid: string, rank: number | null }>} sites Each artifact's compile id (and rank in a multi-rank folder), in log order.
 * @property {string | null} stoppedAt where tracing stopped when that is library code (`stopped_at`, since format 1.7), as `file:line in name`
 * @property {string[]} hints torch's own fix hints (since format 1.8)
 * @property {string | null} docsUrl torch's page about the break (since format 1.8)
 * @property {import('./compiles.js').FixView | null} fix what to change so the break goes away (`fix`, since format 1.50), the first rank's
 */

/**
 * A status derived from one compilation_metrics record, used when compiles.json is absent: the
 * rule FORMAT.md section 14 gives for one record (tlscope's format/status.py; the cases in
 * tests/conformance/cases.json hold both to the same answers), in compiles.json's vocabulary.
 *
 * @param {unknown} meta
 * @returns {string | null}
 */
export function statusFromMetrics(meta) {
  if (!isObject(meta)) return null;
  if (meta.fail_type !== undefined && meta.fail_type !== null) return 'failed';
  if (Array.isArray(meta.restart_reasons) && meta.restart_reasons.length) return 'graph_break';
  if (meta.has_guarded_code === false || meta.graph_op_count === 0) return 'empty';
  return 'ok';
}

/**
 * multi_rank_summary.json's statuses (tlparse's words) in compiles.json's vocabulary.
 * @type {Record<string, string>}
 */
export const SUMMARY_STATUS = { break: 'graph_break', error: 'failed', missing: 'metrics_missing' };

/** The display id of the attempt after `id` (`[0/1]` -> `[0/1_1]`, `[0/1_1]` -> `[0/1_2]`). */
/**
 * @param {string} id
 * @returns {string}
 */
export function nextAttempt(id) {
  const m = /^(.*?)(?:_(\d+))?\]$/.exec(id);
  return m ? `${m[1]}_${Number(m[2] || 0) + 1}]` : '';
}

/**
 * compiles.json's distinct graph breaks (`graph_breaks`) of every part as one list: a break at
 * the same (reason, file, line) on several ranks is one entry whose `count` is the sum, with
 * `ranks` and each compile id's rank (`sites`: [{cid, rank}], in log order, rank by rank). Most
 * frequent first. `lists`: [{rank, breaks}] (rank null for a single log).
 *
 * @param {Array<{ rank: number | null, breaks: unknown }>} lists
 * @returns {GraphBreak[]}
 */
export function mergeGraphBreaks(lists) {
  /** @type {Map<string, GraphBreak>} */
  const merged = new Map();
  for (const { rank, breaks } of lists) {
    if (!Array.isArray(breaks)) continue;
    for (const entry of breaks) {
      if (!isObject(entry) || typeof entry.reason !== 'string') continue;
      const frame = isObject(entry.user_frame) ? entry.user_frame : {};
      const file = typeof frame.file === 'string' ? frame.file : null;
      const line = typeof frame.line === 'number' && Number.isInteger(frame.line) ? frame.line : null;
      const key = JSON.stringify([entry.reason, file, line]);
      let out = merged.get(key);
      if (!out) {
        out = { reason: entry.reason, file, line, name: typeof frame.name === 'string' ? frame.name : null,
                code: typeof frame.code === 'string' ? frame.code : null, count: 0, ranks: [], sites: [], ...breakNotes(entry) };
        merged.set(key, out);
      }
      out.count += typeof entry.count === 'number' && Number.isInteger(entry.count) ? entry.count : 0;
      if (rank !== null && rank !== undefined && !out.ranks.includes(rank)) out.ranks.push(rank);
      const ids = Array.isArray(entry.compile_ids) ? entry.compile_ids : [];
      for (const cid of ids) if (typeof cid === 'string') out.sites.push({ cid, rank: rank ?? null });
    }
  }
  return [...merged.values()].sort((a, b) => b.count - a.count);
}

/**
 * A distinct graph break's library location, torch's hints and docs page (absent before 1.7/1.8)
 * and tlscope's fix (absent before 1.50, and where tlscope knows none).
 * @param {import('./format.js').JsonObject} entry
 * @returns {{ stoppedAt: string | null, hints: string[], docsUrl: string | null, fix: import('./compiles.js').FixView | null }}
 */
function breakNotes(entry) {
  const at = isObject(entry.stopped_at) ? entry.stopped_at : null;
  let stoppedAt = null;
  if (at && typeof at.file === 'string') {
    const where = typeof at.line === 'number' ? `${at.file}:${at.line}` : at.file;
    stoppedAt = typeof at.name === 'string' && at.name ? `${where} in ${at.name}` : where;
  }
  const hints = Array.isArray(entry.hints) ? entry.hints.filter((h) => typeof h === 'string') : [];
  return { stoppedAt, hints, docsUrl: typeof entry.docs_url === 'string' ? entry.docs_url : null, fix: describeFix(entry.fix) };
}

/**
 * compiles.json's statuses, most severe first (FORMAT.md section 14), for files that do not carry
 * their own `status_order` (older than 1.9) and for statuses derived without compiles.json.
 * @type {readonly string[]}
 */
export const STATUS_ORDER = Object.freeze(['failed', 'restarted', 'graph_break', 'empty', 'cache_hit', 'ok', 'captured', 'metrics_missing', 'outside']);

/**
 * compiles.json's `status_order` when it is a non-empty list of strings, else null.
 * @param {unknown} file
 * @returns {readonly string[] | null}
 */
export function statusOrderOf(file) {
  const order = isObject(file) ? file.status_order : null;
  if (!Array.isArray(order) || !order.length || !order.every((s) => typeof s === 'string')) return null;
  return Object.freeze(/** @type {string[]} */ ([...order]));
}

/**
 * The ranks a decoded multi_rank_summary.json lists, in its order: each entry's `rank` when it is a
 * whole number >= 0 (anything else lists none). Python's `format/layout.py` `listed_ranks`, the
 * same rule (tests/conformance/cases.json `job_ranks`).
 * @param {unknown} summary
 * @returns {number[]}
 */
export function listedRanks(summary) {
  const entries = Array.isArray(summary) ? summary : [];
  return entries.flatMap((entry) => {
    const rank = isObject(entry) ? entry.rank : null;
    return typeof rank === 'number' && Number.isInteger(rank) && rank >= 0 ? [rank] : [];
  });
}

/**
 * Where `status` is in `order` (0: the most severe; unknown statuses last).
 * @param {string | null | undefined} status
 * @param {readonly string[]} [order]
 * @returns {number}
 */
export function severity(status, order = STATUS_ORDER) {
  const at = order.indexOf(status ?? '');
  return at < 0 ? order.length : at;
}

/** The event keys of compilation metrics records. */
export const METRICS_KEYS = new Set(['compilation_metrics', 'bwd_compilation_metrics', 'aot_autograd_backward_compilation_metrics']);

/** Frames with `file` resolved through `table`; `uninterned_filename` takes precedence. */
/**
 * @param {unknown} frames
 * @param {ReadonlyArray<string | null>} table
 * @returns {ResolvedFrame[]}
 */
export function resolveFrames(frames, table) {
  if (!Array.isArray(frames)) return [];
  return frames.map((frame) => {
    const f = isObject(frame) ? frame : {};
    let file = '(unknown)';
    const interned = typeof f.filename === 'number' && Number.isInteger(f.filename) ? table[f.filename] : undefined;
    if (typeof f.uninterned_filename === 'string') file = f.uninterned_filename;
    else if (typeof interned === 'string') file = interned;
    else if (typeof f.filename === 'string') file = f.filename;
    const line = typeof f.line === 'number' && Number.isInteger(f.line) ? f.line : null;
    return { file, line, name: String(f.name ?? ''), loc: typeof f.loc === 'string' ? f.loc : '' };
  });
}
