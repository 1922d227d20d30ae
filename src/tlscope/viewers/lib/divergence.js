// How the ranks of a multi-rank job diverge, as tlscope wrote it in the job's ranks.json
// (docs/FORMAT.md section 16: `divergence`). Python decides which compile ids are not on every
// rank and says each group in one sentence; this module only checks the untrusted JSON and hands
// it to a view. It never compares ranks itself.

import { isObject } from './format.js';

/**
 * A group of ranks with identical compile id sequences, said in one sentence.
 * @typedef {{ ranks: number[], sentence: string }} DivergenceGroup
 */

/**
 * A compile id whose graphs call different collectives on different ranks, said in one sentence
 * (format 1.17).
 * @typedef {{ id: string, sentence: string }} CollectiveMismatch
 */

/**
 * A compile id whose Dynamo graphs differ between ranks (the same id, other code), said in one
 * sentence (format 1.30).
 * @typedef {{ id: string, kind: string, sentence: string }} GraphMismatch
 */

/**
 * A group of ranks whose first compile ran under other settings than the most ranks', said in one
 * sentence (format 1.30).
 * @typedef {{ ranks: number[], sentence: string }} SettingsMismatch
 */

/**
 * A group of ranks that compiled other functions than the most ranks, or the same ones under
 * other compile ids, said in one sentence (format 1.31).
 * @typedef {{ ranks: number[], sentence: string }} FrameShift
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
 * @property {Map<number, Map<string, string>>} columns rank -> its compile ids drawn under another column
 *   (ranks.json's `rows[].columns`, format 1.33), for the ranks with any
 * @property {CollectiveMismatch[]} collectives compile ids whose collectives differ between ranks, in compile order
 * @property {GraphMismatch[]} graphs compile ids whose Dynamo graphs differ between ranks, in compile order (empty before 1.30)
 * @property {SettingsMismatch[]} settings groups of ranks that compiled under other settings than the most ranks (empty before 1.30)
 * @property {FrameShift[]} frames groups of ranks that compiled other functions than the most ranks, or under other ids (empty before 1.31)
 * @property {CacheMismatch[]} caches compiles whose cache lookups answered differently on different ranks, in compile order (empty before 1.36)
 */

/**
 * @param {unknown} value
 * @returns {number[]}
 */
function rankList(value) {
  return Array.isArray(value) ? value.filter((r) => typeof r === 'number' && Number.isInteger(r)) : [];
}

/**
 * ranks.json's `divergence` checked, or null when `data` is not a ranks.json (or has none).
 * @param {unknown} data
 * @returns {Divergence | null}
 */
export function readDivergence(data) {
  const div = isObject(data) && isObject(data.divergence) ? data.divergence : null;
  if (!div) return null;
  const groups = (Array.isArray(div.groups) ? div.groups : []).flatMap((g) => {
    if (!isObject(g) || typeof g.sentence !== 'string') return [];
    return [{ ranks: rankList(g.ranks), sentence: g.sentence }];
  });
  /** @type {Map<string, number[]>} */
  const notOnEveryRank = new Map();
  for (const item of Array.isArray(div.not_on_every_rank) ? div.not_on_every_rank : []) {
    if (isObject(item) && typeof item.id === 'string') notOnEveryRank.set(item.id, rankList(item.ranks));
  }
  const collectives = (Array.isArray(div.collectives) ? div.collectives : []).flatMap((c) => {
    if (!isObject(c) || typeof c.id !== 'string' || typeof c.sentence !== 'string') return [];
    return [{ id: c.id, sentence: c.sentence }];
  });
  const graphs = (Array.isArray(div.graphs) ? div.graphs : []).flatMap((g) => {
    if (!isObject(g) || typeof g.id !== 'string' || typeof g.sentence !== 'string') return [];
    return [{ id: g.id, kind: typeof g.kind === 'string' ? g.kind : 'graph', sentence: g.sentence }];
  });
  const settings = (Array.isArray(div.settings) ? div.settings : []).flatMap((s) => {
    if (!isObject(s) || typeof s.sentence !== 'string') return [];
    return [{ ranks: rankList(s.ranks), sentence: s.sentence }];
  });
  const frames = (Array.isArray(div.frames) ? div.frames : []).flatMap((f) => {
    if (!isObject(f) || typeof f.sentence !== 'string') return [];
    return [{ ranks: rankList(f.ranks), sentence: f.sentence }];
  });
  const caches = (Array.isArray(div.caches) ? div.caches : []).flatMap((c) => {
    if (!isObject(c) || typeof c.id !== 'string' || typeof c.sentence !== 'string') return [];
    return [{ id: c.id, caches: Array.isArray(c.caches) ? c.caches.filter((n) => typeof n === 'string') : [], sentence: c.sentence }];
  });
  /** @type {Map<number, Map<string, string>>} */
  const columns = new Map();
  for (const row of Array.isArray(div.rows) ? div.rows : []) {
    if (!isObject(row)) continue;
    const own = columnsOf(row.columns);
    if (own.size) for (const rank of rankList(row.ranks)) columns.set(rank, own);
  }
  return { diverges: div.diverges === true, groups, notOnEveryRank, collectives, graphs, settings, frames, caches, columns };
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
