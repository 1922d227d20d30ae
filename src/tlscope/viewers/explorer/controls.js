// The trace page's filter controls and the view kept in the URL: what the table shows (event key,
// compile id, rank, text), the selected row and detail tab, and the count of matching events.

import { readState, setTestHook, writeState } from '/lib/tlscope.js';
import { formatCount } from './table.js';
import { byId } from './dom.js';
import { viewForState } from './views.js';

/** @typedef {import('./view.js').App} App */
/** @typedef {import('/lib/tlscope.js').Filter} Filter */

/** The event key menu. */
const kindSelect = () => byId('f-kind', HTMLSelectElement);
/** The rank menu. */
const rankSelect = () => byId('f-rank', HTMLSelectElement);
/** The text search box. */
const searchBox = () => byId('f-q', HTMLInputElement);

/**
 * The controls set to the page's filter.
 * @param {App} app
 */
export function syncControls(app) {
  const f = app.filter;
  const kind = kindSelect();
  if (f.kind && ![...kind.options].some((o) => o.value === f.kind)) kind.appendChild(new Option(f.kind, f.kind));
  kind.value = f.kind || '';
  rankSelect().value = f.rank === null ? '' : String(f.rank);
  searchBox().value = f.q || '';
}

/**
 * The event key menu filled from the events' keys (with their counts).
 * @param {App} app
 */
export function fillKinds(app) {
  const select = kindSelect();
  const keep = app.filter.kind || '';
  select.replaceChildren(new Option('all event keys', ''));
  for (const [key, count] of app.trace.events.keyList()) select.appendChild(new Option(`${key} (${count})`, key));
  if (keep && ![...select.options].some((o) => o.value === keep)) select.appendChild(new Option(keep, keep));
  select.value = keep;
}

/**
 * The rank menu (shown for two ranks or more).
 * @param {App} app
 */
export function fillRanks(app) {
  const select = rankSelect();
  const ranks = app.trace.ranks;
  select.hidden = ranks.length < 2;
  select.replaceChildren(new Option('all ranks', ''));
  for (const r of ranks) select.appendChild(new Option(`rank ${r}`, String(r)));
  select.value = app.filter.rank === null ? '' : String(app.filter.rank);
}

/**
 * The view kept in the URL.
 * @param {App} app
 */
export function saveState(app) {
  const f = app.filter;
  const row = app.table.selected >= 0 ? app.table.selected : null;
  const view = app.views ? viewForState(app.views.current) : null;
  const event = app.views && app.views.current === 'graph' && app.graph ? app.graph.event : null;
  writeState({ kind: f.kind, cid: f.cid, rank: f.rank, q: f.q, row, tab: app.detail.state.tab === 'payload' ? null : app.detail.state.tab, view, event });
}

/**
 * "N of M events", and the test hook's view of the table.
 * @param {App} app
 */
export function updateCount(app) {
  const { events } = app.trace;
  const loading = app.trace.mode === 'local' && !app.trace.complete;
  const total = formatCount(events.total);
  const all = formatCount(app.trace.expectedEvents ?? events.loadedEvents);
  byId('count').textContent = `${total} of ${all} events${loading ? ' (loading…)' : ''}`;
  const range = app.table.list.visibleRange();
  setTestHook({ total: events.total, visibleRows: range, filter: { ...events.filter } });
}

/**
 * Apply `changes` to the page's filter: table, sidebar, count and URL follow.
 * @param {App} app
 * @param {Partial<App['filter']>} changes
 * @param {{ keepRow?: boolean }} [options]
 */
export async function applyFilter(app, changes, { keepRow = false } = {}) {
  Object.assign(app.filter, changes);
  syncControls(app);
  if (!keepRow) app.table.selected = -1;
  await app.trace.events.setFilter(app.filter);
  app.table.list.scrollTo(0);
  app.table.refresh();
  app.redrawSidebar();
  updateCount(app);
  saveState(app);
}

/**
 * The filter controls wired to the page's filter.
 * @param {App} app
 */
export function wireFilters(app) {
  const kind = kindSelect();
  const rank = rankSelect();
  const search = searchBox();
  kind.addEventListener('change', () => applyFilter(app, { kind: kind.value || null }));
  rank.addEventListener('change', () => applyFilter(app, { rank: rank.value === '' ? null : Number(rank.value) }));
  let timer = 0;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => applyFilter(app, { q: search.value || null }), 200);
  });
  byId('f-clear').addEventListener('click', () => {
    search.value = '';
    kind.value = '';
    rank.value = '';
    applyFilter(app, { kind: null, cid: null, rank: null, q: null });
  });
}

/**
 * The view the URL names (filter, row, tab) taken as the page's.
 * @param {App} app
 */
export function restoreState(app) {
  const s = readState(location.hash);
  const rank = s.rank === undefined ? null : Number(s.rank);
  app.filter = { kind: s.kind || null, cid: s.cid || null, rank: Number.isInteger(rank) ? rank : null, q: s.q || null };
  searchBox().value = app.filter.q || '';
  app.pendingRow = s.row === undefined ? -1 : Number(s.row);
  if (s.tab) app.detail.state.tab = s.tab;
}

/**
 * Select the row the URL named, once the table has it.
 * @param {App} app
 */
export function trySelectPending(app) {
  if (!(app.pendingRow >= 0) || app.pendingRow >= app.trace.events.total) return;
  const row = app.pendingRow;
  app.pendingRow = -1;
  app.keepTab = true;
  app.table.select(row);
  app.keepTab = false;
}
