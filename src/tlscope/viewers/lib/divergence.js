// ranks.json (docs/FORMAT.md section 16, docs/schema/ranks.schema.json), read once for every view:
// the rank lines, how the ranks diverge and the stragglers, as tlscope wrote them. Python decides
// which compile ids are not on every rank, where collectives, graphs, settings, functions and
// caches differ and who straggles, and says each in one sentence; this module only checks the
// untrusted JSON (a part of the wrong shape is dropped, never guessed) and hands it to a view.
// It never compares ranks itself. The explorer's banner, its sidebar and its Ranks view all read
// the file here (tests/conformance/cases.json's `ranks_json`: Python reads the same cases).

import { isObject } from './format.js';
import { FIRST_ANSWER_KINDS, firstAnswerOf } from './compiles.js';

/**
 * A rank's line, every figure present (0 where the file has none).
 * @typedef {Required<import('./ranks-json.js').RankLine>} RankLine
 */

/**
 * A group of ranks with identical compile id sequences, said in one sentence; `onlyHere` the ids
 * no rank outside it has, `missing` those some rank outside it has and it lacks.
 * @typedef {{ ranks: number[], sentence: string, onlyHere: string[], missing: string[] }} DivergenceGroup
 */

/**
 * A row of the rank x compile-id matrix (format 1.18): ranks of one group whose collectives agree;
 * `collectives` the ids where they call other collectives than the most ranks; `columns` own
 * compile id -> the column it is drawn in, where these ranks number functions otherwise (1.33).
 * @typedef {{ ranks: number[], sentence: string, collectives: string[], columns: Map<string, string> }} MatrixRow
 */

/**
 * A compile id whose graphs call (kind `graph`), or whose Inductor schedules run (`schedule`,
 * format 1.34), different collectives on different ranks, said in one sentence (format 1.17).
 * @typedef {{ id: string, kind: string, sentence: string }} CollectiveMismatch
 */

/**
 * A group of ranks of a graph mismatch: its ranks, its own compile id of the function (format
 * 1.31: the mismatch's id where the file names none), the function and the lowest rank's graph.
 * @typedef {{ ranks: number[], id: string, function: string, payload: string | null }} GraphGroup
 */

/**
 * A compile id whose Dynamo graphs (kind `graph`), post-grad graphs (`post_grad`, 1.32) or output
 * code (`output_code`, 1.37) differ between ranks, said in one sentence (format 1.30).
 * @typedef {{ id: string, kind: string, sentence: string, groups: GraphGroup[] }} GraphMismatch
 */

/**
 * A group of ranks whose first compile ran under other settings than the most ranks' (`than`),
 * said in one sentence (format 1.30); with `id` (format 1.38; null otherwise), a group that ran
 * that one compile under other settings than the most ranks whose first compiles agree.
 * @typedef {{ id: string | null, ranks: number[], than: number[], sentence: string }} SettingsMismatch
 */

/**
 * A function a frame shift names: its `[f/0]` id and `name (file:line)`.
 * @typedef {{ id: string, function: string }} FrameRef
 */

/**
 * A group of ranks that compiled other functions than the reference ranks (`than`), or the same
 * ones under other compile ids, said in one sentence (format 1.31): `extra` functions only these
 * ranks compiled, `missing` the reference's they did not, `renumbered` [own frame, the
 * reference's frame] of each function both compiled under other numbers.
 * @typedef {{ ranks: number[], than: number[], sentence: string, extra: FrameRef[], missing: FrameRef[], renumbered: [number, number][] }} FrameShift
 */

/**
 * A compile whose cache lookups answered differently on different ranks (the caches that differ
 * named), said in one sentence (format 1.36).
 * @typedef {{ id: string, caches: string[], sentence: string }} CacheMismatch
 */

/**
 * What a view shows of ranks.json's `divergence`.
 * @typedef {object} Divergence
 * @property {boolean} diverges
 * @property {DivergenceGroup[]} groups in ranks.json's order (the groups holding ids of their own first)
 * @property {Map<string, number[]>} notOnEveryRank display compile id -> the ranks that have it, in compile order;
 *   where ranks number functions differently (format 1.33), the function's matrix column (`columnOf`)
 * @property {MatrixRow[]} rows the matrix's rows as written (format 1.18), each naming a rank; empty before 1.18
 * @property {Map<number, Map<string, string>>} columns rank -> its compile ids drawn under another column
 *   (ranks.json's `rows[].columns`, format 1.33), for the ranks with any
 * @property {CollectiveMismatch[]} collectives compile ids whose collectives differ between ranks, in compile order
 * @property {GraphMismatch[]} graphs compile ids whose Dynamo graphs differ between ranks, in compile order (empty before 1.30)
 * @property {SettingsMismatch[]} settings groups of ranks that compiled under other settings than the most ranks (empty before 1.30)
 * @property {FrameShift[]} frames groups of ranks that compiled other functions than the most ranks, or under other ids (empty before 1.31)
 * @property {CacheMismatch[]} caches compiles whose cache lookups answered differently on different ranks, in compile order (empty before 1.36)
 * @property {SaidList[]} said the lists above that say something, in the order and with the titles every view says them
 *   (format 1.40; a file written before is read as `SAID_BEFORE_140` orders them)
 */

/**
 * One list of the divergence as tlscope says it (ranks.json's `said`, format 1.40): `list` names
 * a list of Divergence (`groups`, `frames`, `collectives`, `settings`, `graphs`, `caches`).
 * @typedef {{ list: SaidName, title: string }} SaidList
 */

/** @typedef {'groups' | 'frames' | 'collectives' | 'settings' | 'graphs' | 'caches'} SaidName */

/**
 * How a ranks.json written before format 1.40, which has no `said`, is read: its lists in this
 * order, with these titles (FORMAT.md section 16; tlscope's `said_lists` wrote them so since).
 * @type {ReadonlyArray<SaidList>}
 */
export const SAID_BEFORE_140 = [
  { list: 'groups', title: 'Ranks diverge' },
  { list: 'frames', title: 'Ranks compiled other functions' },
  { list: 'collectives', title: 'Collectives differ between ranks' },
  { list: 'settings', title: 'Settings differ between ranks' },
  { list: 'graphs', title: 'Graphs differ between ranks' },
  { list: 'caches', title: 'Caches answered differently on different ranks' },
];

/**
 * A straggler: `why` where its time went beyond the median rank's, in one sentence (format 1.35;
 * "" when not said).
 * @typedef {{ rank: number, compile_time_s: number, over_median_s: number, ratio: number | null, why: string }} Straggler
 */

/**
 * ranks.json's `stragglers` (format 1.6): the rule in words and figures, the median and the rank
 * a slow rank is compared with (`median_rank`, 1.14; null when the file has none), the stragglers
 * slowest first.
 * @typedef {{ rule: string, factor: number, margin_s: number, median_compile_time_s: number, median_rank: number | null, ranks: Straggler[] }} Stragglers
 */

/**
 * ranks.json as read: the rank lines (ascending), the divergence and the stragglers.
 * @typedef {{ ranks: RankLine[], divergence: Divergence, stragglers: Stragglers | null, firstAnswers: JobAnswersView | null }} RanksRead
 */

/**
 * @param {unknown} value
 * @returns {number[]}
 */
function rankList(value) {
  return Array.isArray(value) ? value.filter((r) => typeof r === 'number' && Number.isInteger(r)) : [];
}

/**
 * @param {unknown} value
 * @returns {string[]}
 */
function stringList(value) {
  return Array.isArray(value) ? value.filter((s) => typeof s === 'string') : [];
}

/**
 * @param {unknown} value
 * @returns {number}
 */
const num = (value) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * The objects of a list of ranks.json that carry a string `sentence` (and `id`, if `withId`):
 * an item without one is not a mismatch a view can say.
 * @param {unknown} value
 * @param {boolean} withId
 * @returns {Record<string, unknown>[]}
 */
function sayable(value, withId) {
  return (Array.isArray(value) ? value : []).filter((item) => isObject(item) && typeof item.sentence === 'string' && (!withId || typeof item.id === 'string'));
}

/**
 * @param {unknown} value
 * @returns {FrameRef[]}
 */
function frameRefs(value) {
  return (Array.isArray(value) ? value : []).flatMap((r) => (isObject(r) && typeof r.id === 'string' ? [{ id: r.id, function: typeof r.function === 'string' ? r.function : '' }] : []));
}

/**
 * `renumbered`'s pairs of integers; anything else dropped.
 * @param {unknown} value
 * @returns {[number, number][]}
 */
function framePairs(value) {
  return (Array.isArray(value) ? value : []).flatMap((p) => {
    const pair = rankList(p);
    return Array.isArray(p) && p.length === 2 && pair.length === 2 ? [/** @type {[number, number]} */ ([pair[0], pair[1]])] : [];
  });
}

/**
 * A graph mismatch's groups, each with its own compile id (the mismatch's where it names none);
 * a group naming no rank dropped.
 * @param {unknown} value
 * @param {string} id
 * @returns {GraphGroup[]}
 */
function graphGroups(value, id) {
  return (Array.isArray(value) ? value : []).filter(isObject).map((g) => ({
    ranks: rankList(g.ranks), id: typeof g.id === 'string' && g.id ? g.id : id,
    function: typeof g.function === 'string' ? g.function : '', payload: typeof g.payload === 'string' ? g.payload : null,
  })).filter((g) => g.ranks.length);
}

/**
 * The mismatch lists of a `divergence` object: collectives, graphs, settings, frames, caches.
 * @param {Record<string, unknown>} div
 * @returns {Pick<Divergence, 'collectives' | 'graphs' | 'settings' | 'frames' | 'caches'>}
 */
function mismatches(div) {
  const kind = (/** @type {unknown} */ k, /** @type {string} */ fallback) => (typeof k === 'string' ? k : fallback);
  return {
    collectives: sayable(div.collectives, true).map((c) => ({ id: String(c.id), kind: kind(c.kind, 'graph'), sentence: String(c.sentence) })),
    graphs: sayable(div.graphs, true).map((g) => ({ id: String(g.id), kind: kind(g.kind, 'graph'), sentence: String(g.sentence), groups: graphGroups(g.groups, String(g.id)) })),
    settings: sayable(div.settings, false).map((s) => ({ id: typeof s.id === 'string' ? s.id : null, ranks: rankList(s.ranks), than: rankList(s.than), sentence: String(s.sentence) })),
    frames: sayable(div.frames, false).map((f) => ({
      ranks: rankList(f.ranks), than: rankList(f.than), sentence: String(f.sentence), extra: frameRefs(f.extra), missing: frameRefs(f.missing), renumbered: framePairs(f.renumbered),
    })),
    caches: sayable(div.caches, true).map((c) => ({ id: String(c.id), caches: stringList(c.caches), sentence: String(c.sentence) })),
  };
}

/**
 * The matrix's rows as written, a row naming no rank dropped.
 * @param {unknown} value
 * @returns {MatrixRow[]}
 */
function matrixRows(value) {
  return (Array.isArray(value) ? value : []).filter(isObject).map((r) => ({
    ranks: rankList(r.ranks), sentence: typeof r.sentence === 'string' ? r.sentence : '', collectives: stringList(r.collectives), columns: columnsOf(r.columns),
  })).filter((r) => r.ranks.length);
}

/**
 * A `divergence` object checked (an absent or malformed one reads as a job that does not diverge).
 * @param {unknown} value
 * @returns {Divergence}
 */
function divergenceOf(value) {
  const div = isObject(value) ? value : {};
  const groups = sayable(div.groups, false).map((g) => ({ ranks: rankList(g.ranks), sentence: String(g.sentence), onlyHere: stringList(g.only_here), missing: stringList(g.missing) }));
  /** @type {Map<string, number[]>} */
  const notOnEveryRank = new Map();
  for (const item of Array.isArray(div.not_on_every_rank) ? div.not_on_every_rank : []) {
    if (isObject(item) && typeof item.id === 'string') notOnEveryRank.set(item.id, rankList(item.ranks));
  }
  const rows = matrixRows(div.rows);
  /** @type {Map<number, Map<string, string>>} */
  const columns = new Map();
  for (const row of rows) if (row.columns.size) for (const rank of row.ranks) columns.set(rank, row.columns);
  const read = { diverges: div.diverges === true, groups, notOnEveryRank, rows, columns, ...mismatches(div) };
  return { ...read, said: saidOf(div.said, read) };
}

/**
 * ranks.json's `said` (format 1.40): each item naming a list of the divergence that has items, with
 * its title; a file without one (or none valid) is read as `SAID_BEFORE_140` orders its lists.
 * @param {unknown} value
 * @param {Omit<Divergence, 'said'>} div
 * @returns {SaidList[]}
 */
function saidOf(value, div) {
  const says = (/** @type {SaidName} */ name) => div[name].length > 0 && (name !== 'groups' || div.diverges);
  const known = new Set(SAID_BEFORE_140.map((s) => s.list));
  const written = (Array.isArray(value) ? value : [])
    .filter((s) => isObject(s) && typeof s.title === 'string' && typeof s.list === 'string' && known.has(/** @type {SaidName} */ (s.list)))
    .map((s) => ({ list: /** @type {SaidName} */ (s.list), title: String(s.title) }))
    .filter((s) => says(s.list));
  return written.length ? written : SAID_BEFORE_140.filter((s) => says(s.list)).map((s) => ({ ...s }));
}

/**
 * ranks.json's `divergence` checked, or null when `data` is not a ranks.json (or has none).
 * @param {unknown} data
 * @returns {Divergence | null}
 */
export function readDivergence(data) {
  return isObject(data) && isObject(data.divergence) ? divergenceOf(data.divergence) : null;
}

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
 * @returns {Stragglers | null}
 */
function stragglersOf(value) {
  if (!isObject(value)) return null;
  const ranks = (Array.isArray(value.ranks) ? value.ranks : []).filter((s) => isObject(s) && Number.isInteger(s.rank)).map((s) => ({
    rank: num(s.rank), compile_time_s: num(s.compile_time_s), over_median_s: num(s.over_median_s),
    ratio: typeof s.ratio === 'number' ? s.ratio : null, why: typeof s.why === 'string' ? s.why : '',
  }));
  return {
    rule: typeof value.rule === 'string' ? value.rule : '', factor: num(value.factor), margin_s: num(value.margin_s),
    median_compile_time_s: num(value.median_compile_time_s), median_rank: Number.isInteger(value.median_rank) ? num(value.median_rank) : null, ranks,
  };
}

/**
 * A job's first answers (ranks.json `first_answers`, format 1.42), as tlscope decided them: each
 * line once, with the ranks that say it (`who` in words) and the compile it is about on the lowest
 * of them; `more`, the lines left out.
 * @typedef {{ lines: Array<FirstAnswerView & { ranks: number[] }>, more: number }} JobAnswersView
 * @typedef {import('./compiles.js').FirstAnswerView} FirstAnswerView
 */

/** Lines of a kind a job's first answers hold at most (FORMAT.md section 16; Python's SHOWN). */
const ANSWERS_SHOWN = 5;

/**
 * @param {unknown} value
 * @returns {JobAnswersView | null}
 */
function jobAnswersOf(value) {
  if (!isObject(value)) return null;
  const lines = (Array.isArray(value.lines) ? value.lines : []).flatMap((a) => {
    const ranks = (isObject(a) && Array.isArray(a.ranks) ? a.ranks : []).filter((r) => Number.isInteger(r));
    const line = ranks.length ? firstAnswerOf(a, ranks[0]) : null;
    if (!line || !isObject(a)) return [];
    return [{ ...line, who: typeof a.who === 'string' ? a.who : ranksText(ranks), ranks }];
  });
  // In the kinds' order, SHOWN a kind at most (a file may be someone else's), the rest counted.
  let more = Number.isInteger(value.more) ? num(value.more) : 0;
  const kept = FIRST_ANSWER_KINDS.flatMap((kind) => {
    const mine = lines.filter((a) => a.kind === kind);
    more += Math.max(0, mine.length - ANSWERS_SHOWN);
    return mine.slice(0, ANSWERS_SHOWN);
  });
  return { lines: kept, more };
}

/**
 * ranks.json's `first_answers` alone (the explorer's detail pane), null when the file has none
 * (written before 1.42, or not a ranks.json).
 * @param {unknown} data
 * @returns {JobAnswersView | null}
 */
export function readJobAnswers(data) {
  return isObject(data) ? jobAnswersOf(data.first_answers) : null;
}

/**
 * ranks.json read whole: its rank lines (a line without an integer rank dropped; ascending), its
 * divergence (a job that does not diverge when absent) and its stragglers (null when absent);
 * null when `data` is not a ranks.json (no `ranks` list).
 * @param {unknown} data
 * @returns {RanksRead | null}
 */
export function readRanks(data) {
  if (!isObject(data) || !Array.isArray(data.ranks)) return null;
  const ranks = data.ranks.filter((l) => isObject(l) && Number.isInteger(l.rank)).map(rankLine).sort((a, b) => a.rank - b.rank);
  return { ranks, divergence: divergenceOf(data.divergence), stragglers: stragglersOf(data.stragglers), firstAnswers: jobAnswersOf(data.first_answers) };
}

/**
 * A matrix row's `columns` (ranks.json's `rows[].columns`, format 1.33: own compile id -> the
 * column it is drawn in), its non-string entries dropped; empty when absent.
 * @param {unknown} value
 * @returns {Map<string, string>}
 */
export function columnsOf(value) {
  /** @type {Map<string, string>} */
  const out = new Map();
  for (const [id, column] of Object.entries(isObject(value) ? value : {})) if (typeof column === 'string') out.set(id, column);
  return out;
}

/**
 * The matrix column (and `notOnEveryRank` key) of rank `rank`'s compile id `id`: the id itself, or
 * where the rank numbers the function otherwise than the reference ranks, the column Python gave
 * it (format 1.33: the reference ranks' id, or the id with its function).
 * @param {Divergence} div
 * @param {number} rank
 * @param {string} id
 * @returns {string}
 */
export function columnOf(div, rank, id) {
  const own = div.columns.get(rank);
  return (own && own.get(id)) ?? id;
}

/**
 * `[3]` -> `rank 3`, `[0, 2]` -> `ranks 0, 2`: the ranks a compile id is on, for its marker.
 * @param {number[]} ranks
 * @returns {string}
 */
export function ranksText(ranks) {
  return ranks.length === 1 ? `rank ${ranks[0]}` : `ranks ${ranks.join(', ')}`;
}
