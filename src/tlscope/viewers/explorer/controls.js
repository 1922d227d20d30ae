// The trace page's filter controls and the view kept in the URL: what the table shows (event key,
// compile id, rank, text), the selected row and detail tab, and the count of matching events.

import { readState, setTestHook, writeState } from '/lib/tlscope.js';
import { formatCount } from './table.js';
import { byId } from './dom.js';

export function syncControls(app) {
  const f = app.filter;
  const kind = byId('f-kind');
  if (f.kind && ![...kind.options].some((o) => o.value === f.kind)) kind.appendChild(new Option(f.kind, f.kind));
  kind.value = f.kind || '';
  byId('f-rank').value = f.rank ?? '';
  byId('f-q').value = f.q || '';
}

export function fillKinds(app) {
  const select = byId('f-kind');
  const keep = app.filter.kind || '';
  select.replaceChildren(new Option('all event keys', ''));
  for (const [key, count] of app.trace.events.keyList()) select.appendChild(new Option(`${key} (${count})`, key));
  if (keep && ![...select.options].some((o) => o.value === keep)) select.appendChild(new Option(keep, keep));
  select.value = keep;
}

export function fillRanks(app) {
  const select = byId('f-rank');
  const ranks = app.trace.ranks;
  select.hidden = ranks.length < 2;
  select.replaceChildren(new Option('all ranks', ''));
  for (const r of ranks) select.appendChild(new Option(`rank ${r}`, String(r)));
  select.value = app.filter.rank ?? '';
}

export function saveState(app) {
  const f = app.filter;
  const row = app.table.selected >= 0 ? app.table.selected : null;
  writeState({ kind: f.kind, cid: f.cid, rank: f.rank, q: f.q, row, tab: app.detail.state.tab === 'payload' ? null : app.detail.state.tab });
}

export function updateCount(app) {
  const { events } = app.trace;
  const loading = app.trace.mode === 'local' && !app.trace.complete;
  const total = formatCount(events.total);
  const all = formatCount(app.trace.expectedEvents ?? events.loadedEvents);
  byId('count').textContent = `${total} of ${all} events${loading ? ' (loading…)' : ''}`;
  const range = app.table.list.visibleRange();
  setTestHook({ total: events.total, visibleRows: range, filter: { ...events.filter } });
}

export async function applyFilter(app, changes, { keepRow = false } = {}) {
  Object.assign(app.filter, changes);
  syncControls(app);
  if (!keepRow) app.table.selected = -1;
  await app.trace.events.setFilter(app.filter);
  app.table.list.scrollTo(0);
  app.table.refresh();
  app.sidebar.draw();
  updateCount(app);
  saveState(app);
}

export function wireFilters(app) {
  byId('f-kind').addEventListener('change', (e) => applyFilter(app, { kind: e.target.value || null }));
  byId('f-rank').addEventListener('change', (e) => applyFilter(app, { rank: e.target.value === '' ? null : Number(e.target.value) }));
  let timer = 0;
  byId('f-q').addEventListener('input', (e) => {
    clearTimeout(timer);
    timer = setTimeout(() => applyFilter(app, { q: e.target.value || null }), 200);
  });
  byId('f-clear').addEventListener('click', () => {
    byId('f-q').value = '';
    byId('f-kind').value = '';
    byId('f-rank').value = '';
    applyFilter(app, { kind: null, cid: null, rank: null, q: null });
  });
}

export function restoreState(app) {
  const s = readState(location.hash);
  app.filter = { kind: s.kind || null, cid: s.cid || null, rank: s.rank === undefined ? null : Number(s.rank), q: s.q || null };
  byId('f-q').value = app.filter.q || '';
  app.pendingRow = s.row === undefined ? -1 : Number(s.row);
  if (s.tab) app.detail.state.tab = s.tab;
}

export function trySelectPending(app) {
  if (!(app.pendingRow >= 0) || app.pendingRow >= app.trace.events.total) return;
  const row = app.pendingRow;
  app.pendingRow = -1;
  app.keepTab = true;
  app.table.select(row);
  app.keepTab = false;
}
