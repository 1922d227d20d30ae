// The Ranks view's data (pure: no DOM): ranks.json read and checked, the rank table's sort, the
// matrix's rows and columns, and the "why is rank K slow" comparison. Every rule it shows was
// decided in Python and written into the format (docs/FORMAT.md sections 14, 16 and 17): who
// straggles and the divergence groups come from ranks.json, statuses and phase times from each
// rank's compiles.json; here they are only arranged for drawing.

import { readCompileEntries, readRanks } from '/lib/tlscope.js';

/** @typedef {import('/lib/tlscope.js').CompileEntry} CompileEntry */
/** @typedef {import('/lib/tlscope.js').RankLine} RankLine */
/** @typedef {import('/lib/tlscope.js').FrameShift} FrameShift */

/**
 * A row of the matrix, or a divergence group: its ranks, its sentence (ranks.json's), and the
 * columns its ids are drawn in where they are not their own (`columns`, format 1.33: where ranks
 * number functions differently, a column is a function; decided in Python).
 * @typedef {{ ranks: number[], sentence: string, columns: Map<string, string> }} RankGroup
 */

/**
 * ranks.json as lib's `readRanks` reads it (the one reader of the file), with what the view draws
 * made of it: a job that does not diverge has one group of every rank, and the matrix's rows are
 * the file's rows (format 1.18: the groups split where the ranks' collectives differ), else the groups.
 * @typedef {import('/lib/tlscope.js').RanksRead & { groups: RankGroup[], rows: RankGroup[] }} RanksFile
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
 * ranks.json through lib's reader, arranged for the view.
 * @param {unknown} json
 * @returns {RanksFile}
 */
export function readRanksFile(json) {
  const read = readRanks(json);
  if (!read) throw new Error('ranks.json has no ranks');
  const div = read.divergence;
  /** @type {RankGroup[]} */
  const groups = div.diverges && div.groups.length
    ? div.groups.map((g) => ({ ranks: g.ranks, sentence: g.sentence, columns: new Map() }))
    : [{ ranks: read.ranks.map((r) => r.rank), sentence: 'every rank: the same compile ids', columns: new Map() }];
  const rows = div.rows.map((r) => ({ ranks: r.ranks, sentence: r.sentence, columns: r.columns }));
  return { ...read, groups, rows: rows.length ? rows : groups };
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
 * The matrix's marked columns, first and in this order, each id once under the first kind that
 * has it (ranks.json's): the compile ids not on every rank (the divergence, in compile order),
 * those whose collectives differ between ranks, those some ranks ran under other settings (format
 * 1.38: the cause, before its effect), those whose graphs differ, those some rows draw from ids of
 * their own (`renamedColumns`, format 1.33); with how many each kind marks (the header's bars).
 * @param {RanksFile} file
 * @returns {{ ids: string[], counts: import('./ranks-matrix.js').MarkedCounts }}
 */
export function markedColumns(file) {
  const div = file.divergence;
  const kinds = /** @type {const} */ ([
    ['divergent', [...div.notOnEveryRank.keys()]],
    ['calls', div.collectives.map((c) => c.id)],
    ['settings', div.settings.flatMap((m) => (m.id === null ? [] : [m.id]))],
    ['graphs', div.graphs.map((g) => g.id)],
    ['moved', renamedColumns(file)],
  ]);
  /** @type {Set<string>} */
  const seen = new Set();
  const counts = { divergent: 0, calls: 0, settings: 0, graphs: 0, moved: 0 };
  for (const [kind, ids] of kinds) {
    for (const id of ids) {
      if (!seen.has(id)) {
        seen.add(id);
        counts[kind] += 1;
      }
    }
  }
  return { ids: [...seen], counts };
}

/**
 * The matrix's columns: the marked ones (`markedColumns`) first, then every other id of the
 * groups' compile sequences in the order the groups list them.
 * @param {string[]} marked `markedColumns(file).ids`
 * @param {string[][]} sequences each row's columns (its first rank's compile ids, through the row's `columns`)
 * @returns {string[]}
 */
export function matrixColumns(marked, sequences) {
  return [...new Set([...marked, ...sequences.flat()])];
}

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
 * @param {{ id: string }[]} refs
 * @returns {Set<number>}
 */
function frameNumbers(refs) {
  return new Set(refs.flatMap((r) => {
    const frame = frameOf(r.id);
    return frame === null ? [] : [frame];
  }));
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
 * @param {FrameShift[]} frames ranks.json's `divergence.frames`, as lib's reader gives them
 * @param {number} rank
 * @param {number} other
 * @returns {(id: string) => string | null}
 */
export function idsBetween(frames, rank, other) {
  const mine = frames.find((g) => g.ranks.includes(rank));
  const theirs = frames.find((g) => g.ranks.includes(other));
  if (mine === theirs) return (id) => id;
  const extra = frameNumbers(mine ? mine.extra : []);
  const missing = frameNumbers(theirs ? theirs.missing : []);
  const forward = new Map(mine ? mine.renumbered : []);
  const back = new Map((theirs ? theirs.renumbered : []).map(([own, ref]) => [ref, own]));
  return (id) => {
    const m = FRAME_ID.exec(id);
    if (!m) return id;
    let frame = Number(m[1]);
    if (extra.has(frame)) return null;
    frame = forward.get(frame) ?? frame;
    if (missing.has(frame)) return null;
    frame = back.get(frame) ?? frame;
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
 * compiles.json's entries (lib's `readCompileEntries`), or none when the JSON is not one.
 * @param {unknown} json
 * @returns {CompileEntry[]}
 */
export function compileEntries(json) {
  return readCompileEntries(json) ?? [];
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
