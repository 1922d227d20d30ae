// The sidebar's compile ids: a VirtualList of fixed-height rows ("all", then every compile id
// with its function's name, the ranks it is on when not every rank has it (ranks.json's
// `divergence`, tlscope's own finding), its status badge and event count; with a rank picked,
// only that rank's compile ids, from its manifest), so a trace of 10,000 compile ids keeps a screenful of
// elements, not 40,000 (the layout objects of a full list were ~90 MB of the tab at a million
// events, rebuilt when loading ended). Text goes in with textContent.

import { VirtualList, columnOf, compiledFunctionName, ranksText } from '/lib/tlscope.js';

const ROW_HEIGHT = 22;

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */

/**
 * @param {Document} doc
 * @returns {HTMLElement}
 */
function makeRow(doc) {
  const row = doc.createElement('div');
  row.className = 'cid';
  row.setAttribute('role', 'listitem');
  const id = doc.createElement('span');
  id.className = 'cid-id';
  const fn = doc.createElement('span');
  fn.className = 'cid-fn';
  const only = doc.createElement('span');
  only.className = 'cid-only';
  const badge = doc.createElement('span');
  const n = doc.createElement('span');
  n.className = 'n';
  row.append(id, fn, only, badge, n);
  return row;
}

/**
 * The compiled function's name of a compile id (compiles.json's `function`) on `rank`, or on
 * every rank: one id names other functions on ranks that compiled one more function early
 * (ranks.json's frames, format 1.31), so each name is said, ranks ascending; '' when none is.
 * @param {OpenedTrace} trace
 * @param {string} id
 * @param {number | null} rank
 * @returns {string}
 */
function functionName(trace, id, rank) {
  const merged = trace.compiles.get(id);
  const ranks = merged && merged.byRank ? Object.keys(merged.byRank).map(Number).sort((a, b) => a - b) : [];
  const entries = rank !== null || !merged || !ranks.length ? [trace.compileEntry(id, rank)] : ranks.map((r) => merged.byRank[r]);
  const names = entries.map((e) => compiledFunctionName(e));
  return [...new Set(names.filter((n) => n))].join(' / ');
}

/**
 * The tooltip of a status badge: what the status means, and each rank's status.
 * @param {OpenedTrace} trace
 * @param {string} id
 * @param {string} status
 * @returns {string}
 */
function badgeTitle(trace, id, status) {
  const lines = trace.statusText.has(status) ? [`${status}: ${trace.statusText.get(status)}`] : [];
  const entry = trace.compiles.get(id);
  if (entry && entry.ranks) for (const [r, s] of Object.entries(entry.ranks)) lines.push(`rank ${r}: ${s}`);
  return lines.join('\n');
}

/**
 * The compile-id list in `container`; `selected()` gives the compile id of the current filter
 * ('' for all). `update(trace, counts, rank)` redraws it from the trace's ids (of `rank` only,
 * when given), statuses and event counts and returns {compileIds, statuses} for the test hook.
 * @param {HTMLElement} container
 * @param {{ selected: () => string }} options
 */
export function createSidebar(container, { selected }) {
  const doc = container.ownerDocument;
  /** @type {{ ids: string[], statuses: Map<string, string | null>, counts: Map<string, number>, trace: OpenedTrace | null, rank: number | null }} */
  const side = { ids: [], statuses: new Map(), counts: new Map(), trace: null, rank: null };
  const list = new VirtualList(container, {
    rowHeight: ROW_HEIGHT,
    overscan: 4,
    createRow: () => makeRow(doc),
    renderRow: (row, index) => {
      const id = index === 0 ? '' : side.ids[index - 1];
      const [label, fn, only, badge, n] = /** @type {HTMLElement[]} */ ([...row.children]); // makeRow's spans
      row.dataset.cid = id;
      row.classList.toggle('on', id === selected());
      label.textContent = index === 0 ? 'all' : id;
      fn.textContent = index === 0 || !side.trace ? '' : functionName(side.trace, id, side.rank);
      fn.title = fn.textContent;
      // A picked rank's id is looked up by its function's column (format 1.33): its [3/0] may be the others' [2/0].
      const div = side.trace ? side.trace.divergence : null;
      const onRanks = div ? div.notOnEveryRank.get(side.rank === null ? id : columnOf(div, side.rank, id)) : undefined;
      only.hidden = !onRanks;
      only.textContent = onRanks ? `only ${onRanks.map((r) => `r${r}`).join(',')}` : '';
      only.title = onRanks ? `Only on ${ranksText(onRanks)}: not every rank compiled ${id}` : '';
      const status = index === 0 ? null : side.statuses.get(id) ?? null;
      badge.hidden = !status;
      badge.className = status ? `badge s-${status.replace(/[^a-z_]/gi, '_')}` : '';
      badge.textContent = status || '';
      badge.title = status && side.trace ? badgeTitle(side.trace, id, status) : '';
      n.textContent = side.counts.has(id) ? String(side.counts.get(id)) : '';
    },
  });
  return {
    list,
    draw: () => list.draw(),
    /** The rank whose compile ids are listed (null: every rank's). */
    get rank() {
      return side.rank;
    },
    /**
     * @param {OpenedTrace} trace
     * @param {Map<string, number>} counts
     * @param {number | null} [rank] only this rank's compile ids (a multi-rank job's)
     */
    update(trace, counts, rank = null) {
      side.trace = trace;
      side.rank = rank;
      const onRank = rank === null || !trace.multiRank ? null : trace.idsOfRank(rank);
      side.ids = onRank ? trace.compileIds.filter((id) => onRank.has(id)) : trace.compileIds;
      side.counts = counts;
      side.statuses = new Map(side.ids.map((id) => [id, trace.status(id)]));
      list.setCount(side.ids.length + 1);
      return { compileIds: side.ids, statuses: Object.fromEntries(side.statuses) };
    },
  };
}
