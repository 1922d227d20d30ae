// The Ranks view's data (pure: no DOM): ranks.json read and checked, the rank table's sort, the
// matrix's rows and columns, and the "why is rank K slow" comparison. Every rule it shows was
// decided in Python and written into the format (docs/FORMAT.md sections 14, 16 and 17): who
// straggles and the divergence groups come from ranks.json, statuses and phase times from each
// rank's compiles.json; here they are only arranged for drawing.

import { columnsOf, isObject } from '/lib/tlscope.js';

/** @typedef {import('/lib/tlscope.js').CompileEntry} CompileEntry */

/**
 * One rank's line of ranks.json.
 * @typedef {{ rank: number, compiles: number, compile_time_s: number, graph_breaks: number,
 *   recompiles: number, failures: number, cache_hits: number, cache_misses: number }} RankLine
 */

/**
 * A divergence group of ranks.json (ranks with identical compile id sequences), or a row of its
 * matrix, with the columns its ids are drawn in where they are not their own (`columns`, format
 * 1.33: where ranks number functions differently, a column is a function; decided in Python).
 * @typedef {{ ranks: number[], only_here: string[], missing: string[], sentence: string, columns: Map<string, string> }} RankGroup
 */

/**
 * A straggler of ranks.json.
 * @typedef {{ rank: number, compile_time_s: number, over_median_s: number, ratio: number | null, why: string }} Straggler
 *   `why`: where its time went beyond the median rank's, in one sentence (format 1.35; "" when not said)
 */

/**
 * ranks.json (FORMAT.md section 16), as the view uses it.
 * @typedef {object} RanksFile
 * @property {RankLine[]} ranks
 * @property {boolean} diverges
 * @property {RankGroup[]} groups the divergence groups; one group of every rank when none diverges
 * @property {RankGroup[]} rows the matrix's rows: ranks.json's `divergence.rows` (format 1.18: the groups
 *   split where the ranks' collectives differ), else the groups
 * @property {{ id: string, sentence: string }[]} collectives ranks.json's compile ids whose collectives differ
 * @property {{ id: string, sentence: string, ranks: number[], ids: string[] }[]} graphs ranks.json's compile ids whose Dynamo graphs
 *   differ (format 1.30), with the lowest rank of each group (the ranks to open, to see the graphs) and that group's
 *   own compile id (format 1.31)
 * @property {{ ranks: number[], sentence: string }[]} settings ranks.json's groups of ranks under other settings (format 1.30)
 * @property {FrameGroup[]} frames ranks.json's groups of ranks that compiled other functions, or under other ids (format 1.31)
 * @property {{ id: string, sentence: string }[]} caches ranks.json's compiles whose cache lookups answered differently on
 *   different ranks (format 1.36)
 *   between ranks, with their sentences (format 1.17)
 * @property {{ id: string, ranks: number[] }[]} partial compile ids not on every rank, in compile order
 * @property {{ rule: string, median: number, medianRank: number | null, ranks: Straggler[] } | null} stragglers
 */

/** The rank table's sortable columns: key of RankLine -> heading. */
export const SORT_KEYS = /** @type {const} */ ([
  ['rank', 'rank'],
  ['compile_time_s', 'compile s'],
  ['compiles', 'compiles'],
  ['graph_breaks', 'breaks'],
  ['recompiles', 'recompiles'],
  ['failures', 'failures'],
  ['cache_hits', 'cache hits'],
]);

/** @typedef {typeof SORT_KEYS[number][0]} SortKey */

/**
 * @param {unknown} value
 * @returns {number}
 */
const num = (value) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * @param {unknown} value
 * @returns {string[]}
 */
const strings = (value) => (Array.isArray(value) ? value.filter((v) => typeof v === 'string') : []);

/**
 * @param {unknown} value
 * @returns {number[]}
 */
const ints = (value) => (Array.isArray(value) ? value.filter((v) => Number.isInteger(v)) : []);

/**
 * @param {unknown} line
 * @returns {RankLine}
 */
function rankLine(line) {
  const o = isObject(line) ? line : {};
  return {
    rank: num(o.rank), compiles: num(o.compiles), compile_time_s: num(o.compile_time_s), graph_breaks: num(o.graph_breaks),
    recompiles: num(o.recompiles), failures: num(o.failures), cache_hits: num(o.cache_hits), cache_misses: num(o.cache_misses),
  };
}

/**
 * @param {unknown} value
 * @returns {RanksFile['stragglers']}
 */
function stragglersOf(value) {
  if (!isObject(value)) return null;
  const list = Array.isArray(value.ranks) ? value.ranks : [];
  const ranks = list.filter(isObject).map((s) => ({
    rank: num(s.rank), compile_time_s: num(s.compile_time_s), over_median_s: num(s.over_median_s),
    ratio: typeof s.ratio === 'number' ? s.ratio : null, why: typeof s.why === 'string' ? s.why : '',
  }));
  const medianRank = Number.isInteger(value.median_rank) ? /** @type {number} */ (value.median_rank) : null;
  return { rule: typeof value.rule === 'string' ? value.rule : '', median: num(value.median_compile_time_s), medianRank, ranks };
}

/**
 * ranks.json's JSON checked and completed: a job that does not diverge has one group of every rank.
 * @param {unknown} json
 * @returns {RanksFile}
 */
export function readRanksFile(json) {
  if (!isObject(json) || !Array.isArray(json.ranks)) throw new Error('ranks.json has no ranks');
  const ranks = json.ranks.map(rankLine).sort((a, b) => a.rank - b.rank);
  const div = isObject(json.divergence) ? json.divergence : {};
  const diverges = div.diverges === true;
  const listed = Array.isArray(div.groups) ? div.groups.filter(isObject) : [];
  /** @type {RankGroup[]} */
  const groups = listed.map((g) => ({
    ranks: ints(g.ranks), only_here: strings(g.only_here), missing: strings(g.missing), sentence: typeof g.sentence === 'string' ? g.sentence : '', columns: new Map(),
  }));
  if (!diverges || !groups.length) {
    groups.splice(0, groups.length, { ranks: ranks.map((r) => r.rank), only_here: [], missing: [], sentence: 'every rank: the same compile ids', columns: new Map() });
  }
  const partial = (Array.isArray(div.not_on_every_rank) ? div.not_on_every_rank : [])
    .filter(isObject).map((p) => ({ id: typeof p.id === 'string' ? p.id : '', ranks: ints(p.ranks) }));
  // Rows as written (Python split them); a row naming no rank is dropped, and none left means the groups.
  const written = (Array.isArray(div.rows) ? div.rows : []).filter(isObject).map((r) => ({
    ranks: ints(r.ranks), only_here: [], missing: [], sentence: typeof r.sentence === 'string' ? r.sentence : '', columns: columnsOf(r.columns),
  })).filter((r) => r.ranks.length);
  const collectives = (Array.isArray(div.collectives) ? div.collectives : []).filter(isObject)
    .flatMap((c) => (typeof c.id === 'string' && typeof c.sentence === 'string' ? [{ id: c.id, sentence: c.sentence }] : []));
  const graphs = (Array.isArray(div.graphs) ? div.graphs : []).filter(isObject)
    .flatMap((g) => (typeof g.id === 'string' && typeof g.sentence === 'string' ? [{ id: g.id, sentence: g.sentence, ranks: groupFirsts(g.groups), ids: groupIds(g.groups, g.id) }] : []));
  const settings = (Array.isArray(div.settings) ? div.settings : []).filter(isObject)
    .flatMap((s) => (typeof s.sentence === 'string' ? [{ ranks: ints(s.ranks), sentence: s.sentence }] : []));
  const frames = (Array.isArray(div.frames) ? div.frames : []).filter(isObject).flatMap((f) => (typeof f.sentence === 'string' ? [{
    ranks: ints(f.ranks), sentence: f.sentence, extra: frameNumbers(f.extra), missing: frameNumbers(f.missing),
    renumbered: new Map((Array.isArray(f.renumbered) ? f.renumbered : []).flatMap((p) => {
      const pair = ints(p);
      return Array.isArray(p) && pair.length === 2 && p.length === 2 ? [[pair[0], pair[1]]] : [];
    })),
  }] : []));
  const caches = (Array.isArray(div.caches) ? div.caches : []).filter(isObject)
    .flatMap((c) => (typeof c.id === 'string' && typeof c.sentence === 'string' ? [{ id: c.id, sentence: c.sentence }] : []));
  return { ranks, diverges, groups, rows: written.length ? written : groups, collectives, graphs, settings, frames, caches, partial, stragglers: stragglersOf(json.stragglers) };
}

/**
 * The lowest rank of each group of a mismatch (ranks.json's `groups[].ranks`, lowest first), in its order.
 * @param {unknown} groups
 * @returns {number[]}
 */
function groupFirsts(groups) {
  return (Array.isArray(groups) ? groups : []).filter(isObject).flatMap((g) => ints(g.ranks).slice(0, 1));
}

/**
 * Each group's own compile id (format 1.31: another than the mismatch's where its ranks number the
 * function differently), `id` for a group without one, in the groups' order.
 * @param {unknown} groups
 * @param {string} id
 * @returns {string[]}
 */
function groupIds(groups, id) {
  return (Array.isArray(groups) ? groups : []).filter(isObject)
    .flatMap((g) => (ints(g.ranks).length ? [typeof g.id === 'string' && g.id ? g.id : id] : []));
}

/**
 * The rank lines in table order: by `key`, descending for figures (the worst first), ties by rank.
 * @param {RankLine[]} lines
 * @param {SortKey} key
 * @param {boolean} descending
 * @returns {RankLine[]}
 */
export function sortRanks(lines, key, descending) {
  const sign = descending ? -1 : 1;
  return [...lines].sort((a, b) => sign * (a[key] - b[key]) || a.rank - b.rank);
}

/**
 * The matrix's columns: the compile ids not on every rank first (the divergence, in compile order),
 * then those whose collectives differ between ranks, then those whose graphs differ, then those
 * some rows draw from ids of their own (`renamedColumns`, format 1.33),
 * then every other id of the groups' compile sequences in the order the groups list them.
 * @param {RanksFile} file
 * @param {string[][]} sequences each row's columns (its first rank's compile ids, through the row's `columns`)
 * @returns {string[]}
 */
export function matrixColumns(file, sequences) {
  // The ids not on every rank first, then those whose collectives differ between ranks (ranks.json's).
  const seen = new Set([...file.partial.map((p) => p.id), ...file.collectives.map((c) => c.id), ...file.graphs.map((g) => g.id)]);
  const columns = [...seen];
  for (const id of renamedColumns(file)) {
    if (!seen.has(id)) {
      seen.add(id);
      columns.push(id);
    }
  }
  for (const ids of sequences) {
    for (const id of ids) {
      if (!seen.has(id)) {
        seen.add(id);
        columns.push(id);
      }
    }
  }
  return columns;
}

/**
 * A group of ranks.json's `divergence.frames` (format 1.31): ranks that compiled other functions
 * than the reference ranks, or numbered them differently, with the frames as Python aligned them.
 * @typedef {object} FrameGroup
 * @property {number[]} ranks
 * @property {string} sentence
 * @property {Set<number>} extra frames these ranks compiled and the reference ranks did not
 * @property {Set<number>} missing the reference's frames these ranks did not compile
 * @property {Map<number, number>} renumbered own frame -> the reference's frame of the same function
 */

/**
 * The columns some rows draw from compile ids of their own (their `columns`' values, format 1.33):
 * a function those ranks number otherwise than the reference ranks do, in the rows' order.
 * @param {RanksFile} file
 * @returns {string[]}
 */
export function renamedColumns(file) {
  return [...new Set(file.rows.flatMap((r) => [...r.columns.values()]))];
}

/**
 * The frame numbers of `extra` or `missing` (`[{id: '[1/0]', function}]`).
 * @param {unknown} refs
 * @returns {Set<number>}
 */
function frameNumbers(refs) {
  const out = new Set();
  for (const r of Array.isArray(refs) ? refs : []) {
    const frame = isObject(r) && typeof r.id === 'string' ? frameOf(r.id) : null;
    if (frame !== null) out.add(frame);
  }
  return out;
}

const FRAME_ID = /^\[(\d+)(\/\d+(?:_\d+)?\])$/;

/**
 * The frame number of a Dynamo compile id (`[3/1]` -> 3); null for any other id.
 * @param {string} id
 * @returns {number | null}
 */
function frameOf(id) {
  const m = FRAME_ID.exec(id);
  return m ? Number(m[1]) : null;
}

/**
 * Rank `rank`'s compile id -> the same function's compile id on rank `other`, or null when
 * `other` did not compile that function: ranks.json's frames (format 1.31), aligned in Python,
 * read through the reference ranks' numbers. The id itself where the frames say nothing.
 * @param {FrameGroup[]} frames
 * @param {number} rank
 * @param {number} other
 * @returns {(id: string) => string | null}
 */
export function idsBetween(frames, rank, other) {
  const mine = frames.find((g) => g.ranks.includes(rank));
  const theirs = frames.find((g) => g.ranks.includes(other));
  if (mine === theirs) return (id) => id;
  const back = new Map([...(theirs ? theirs.renumbered : [])].map(([own, ref]) => [ref, own]));
  return (id) => {
    const m = FRAME_ID.exec(id);
    if (!m) return id;
    let frame = Number(m[1]);
    if (mine) {
      if (mine.extra.has(frame)) return null;
      frame = mine.renumbered.get(frame) ?? frame;
    }
    if (theirs) {
      if (theirs.missing.has(frame)) return null;
      frame = back.get(frame) ?? frame;
    }
    return `[${frame}${m[2]}`;
  };
}

/**
 * A row of "why is rank K slow": one phase of one compile id, on rank K and on the median rank
 * (`theirs`: the median rank's id of the same function, format 1.31; null when it has none).
 * @typedef {{ id: string, theirs: string | null, phase: string, mine: number, median: number | null, delta: number }} WhyRow
 */

/**
 * Rank K's compiles against the median rank's compiles of the same functions, phase by phase
 * (compiles.json's `phases`, seconds), the largest excess first; an id the median rank lacks has
 * median null.
 * @param {CompileEntry[]} mine rank K's compiles.json entries
 * @param {CompileEntry[]} median the median rank's
 * @param {(id: string) => string | null} [toMedian] K's id -> the median rank's (`idsBetween`)
 * @returns {WhyRow[]}
 */
export function comparePhases(mine, median, toMedian = (id) => id) {
  /** @type {Map<string, Map<string, number>>} */
  const theirs = new Map();
  for (const entry of median) theirs.set(entry.id, phaseSeconds(entry));
  /** @type {WhyRow[]} */
  const rows = [];
  for (const entry of mine) {
    const id = toMedian(entry.id);
    const other = id === null ? undefined : theirs.get(id);
    for (const [phase, seconds] of phaseSeconds(entry)) {
      const m = other ? other.get(phase) ?? 0 : null;
      rows.push({ id: entry.id, theirs: other ? id : null, phase, mine: seconds, median: m, delta: seconds - (m ?? 0) });
    }
  }
  return rows.sort((a, b) => b.delta - a.delta || a.id.localeCompare(b.id));
}

/**
 * @param {CompileEntry} entry
 * @returns {Map<string, number>}
 */
function phaseSeconds(entry) {
  const out = new Map();
  for (const p of entry.phases || []) out.set(p.name, (out.get(p.name) || 0) + num(p.seconds));
  return out;
}

/**
 * compiles.json's entries, or none when the JSON is not one.
 * @param {unknown} json
 * @returns {CompileEntry[]}
 */
export function compileEntries(json) {
  if (!isObject(json) || !Array.isArray(json.compiles)) return [];
  return /** @type {CompileEntry[]} */ (json.compiles.filter((e) => isObject(e) && typeof e.id === 'string'));
}

/**
 * Ranks as short text: `0-3, 7, 9-12`.
 * @param {number[]} ranks ascending
 * @returns {string}
 */
export function rankRanges(ranks) {
  /** @type {string[]} */
  const out = [];
  for (let i = 0; i < ranks.length; ) {
    let j = i;
    while (j + 1 < ranks.length && ranks[j + 1] === ranks[j] + 1) j += 1;
    out.push(j > i ? `${ranks[i]}–${ranks[j]}` : String(ranks[i]));
    i = j + 1;
  }
  return out.join(', ');
}
