// The explorer: tlscope's default viewer. A sidebar of compile ids with statuses, a virtualized
// table of every event (filtered by event key, compile id, rank and text), the selected event's
// payload, stack and report pages, "Open in Perfetto", and the view kept in the URL. Built from
// the same parts as the vanilla template (docs/VIEWERS.md): the client in /lib/, a VirtualList,
// URL state and the window.__tlscope test hook.

import {
  FileSource, InlineSource, compileIdOf, eventKey, openInPerfetto, openTrace, perfettoUrl, queryParam, readState, setTestHook, writeState,
} from '/lib/tlscope.js';
import { createEventTable, formatBytes, formatCount } from './table.js';
import { createDetail } from './detail.js';
import { breakFilter, drawBreaks } from './breaks.js';
import { createSidebar } from './sidebar.js';
import { createCompileTab } from './compile.js';

const byId = (id) => document.getElementById(id);

function showError(message) {
  byId('landing').hidden = false;
  byId('main').hidden = true;
  byId('landing-error').textContent = message;
  byId('status').textContent = '';
  setTestHook({ error: message });
}

/** Data inlined by `tlscope pack`: {files: {path: base64}, omitted: [...], title}. */
function packedData() {
  const node = document.getElementById('tlscope-pack');
  if (!node) return null;
  try {
    return JSON.parse(node.textContent);
  } catch {
    return null;
  }
}

function traceTitle(trace) {
  const m = trace.manifest || {};
  const parts = [];
  if (m.torch_version) parts.push(`torch ${m.torch_version}`);
  if (trace.multiRank) parts.push(`${trace.parts.length} ranks`);
  const expected = trace.expectedEvents;
  if (expected !== null) parts.push(`${formatCount(expected)} events`);
  if (trace.mode === 'remote') parts.push('paged from the server');
  return parts.join(' · ');
}

function cidEventCounts(trace) {
  // Rows of the table per compile id once loaded in the tab; the manifests' counts (which
  // include str and chromium_event lines) while paging from the server.
  if (trace.mode === 'local' && trace.complete) return trace.events.cidCounts();
  const counts = new Map();
  for (const part of trace.parts) {
    const list = part.manifest && Array.isArray(part.manifest.compile_ids) ? part.manifest.compile_ids : [];
    for (const entry of list) if (entry && typeof entry.id === 'string') counts.set(entry.id, (counts.get(entry.id) || 0) + (entry.events || 0));
  }
  return counts;
}

function drawSidebar(app) {
  const { compileIds, statuses } = app.sidebar.update(app.trace, cidEventCounts(app.trace));
  const derived = app.trace.statusSource === 'none' && app.trace.indexesRead;
  byId('status-source').textContent = derived ? '(status from metrics)' : '';
  setTestHook({ compileIds, statuses });
}

function showSideTab(name) {
  byId('cids').hidden = name !== 'cids';
  byId('breaks').hidden = name !== 'breaks';
  byId('tab-cids').classList.toggle('on', name === 'cids');
  byId('tab-breaks').classList.toggle('on', name === 'breaks');
}

/** The "Graph breaks" tab (drawn again once compiles.json is in); a picked compile id shows its
 * break event, selected (payload open). */
function drawBreaksTab(app) {
  const pick = async (site) => {
    await applyFilter(app, breakFilter(site));
    if (app.trace.events.total > 0) app.table.select(0);
  };
  const shown = drawBreaks(byId('breaks'), app.trace, { onPick: (site) => pick(site) });
  byId('breaks-n').textContent = app.trace.indexesRead ? `(${shown.length})` : '';
  setTestHook({ graphBreaks: shown });
}

function wireSideTabs() {
  byId('tab-cids').addEventListener('click', () => showSideTab('cids'));
  byId('tab-breaks').addEventListener('click', () => showSideTab('breaks'));
}

/** Once compiles.json is read (after the first rows: it can be megabytes), statuses and graph
 * breaks are drawn again; unreadable, statuses stay derived from the metrics, and the page says so. */
async function whenIndexesRead(app) {
  const failed = await app.trace.indexes.then(() => null, (err) => err);
  if (failed) app.notes.push(`compiles.json unreadable (${failed.message || failed}): statuses from metrics`);
  drawSidebar(app);
  drawBreaksTab(app);
  if (app.detail.state.tab === 'compile') app.detail.redraw();
}

function syncControls(app) {
  const f = app.filter;
  const kind = byId('f-kind');
  if (f.kind && ![...kind.options].some((o) => o.value === f.kind)) kind.appendChild(new Option(f.kind, f.kind));
  kind.value = f.kind || '';
  byId('f-rank').value = f.rank ?? '';
  byId('f-q').value = f.q || '';
}

function fillKinds(app) {
  const select = byId('f-kind');
  const keep = app.filter.kind || '';
  select.replaceChildren(new Option('all event keys', ''));
  for (const [key, count] of app.trace.events.keyList()) select.appendChild(new Option(`${key} (${count})`, key));
  if (keep && ![...select.options].some((o) => o.value === keep)) select.appendChild(new Option(keep, keep));
  select.value = keep;
}

function fillRanks(app) {
  const select = byId('f-rank');
  const ranks = app.trace.ranks;
  select.hidden = ranks.length < 2;
  select.replaceChildren(new Option('all ranks', ''));
  for (const r of ranks) select.appendChild(new Option(`rank ${r}`, String(r)));
  select.value = app.filter.rank ?? '';
}

function saveState(app) {
  const f = app.filter;
  const row = app.table.selected >= 0 ? app.table.selected : null;
  writeState({ kind: f.kind, cid: f.cid, rank: f.rank, q: f.q, row, tab: app.detail.state.tab === 'payload' ? null : app.detail.state.tab });
}

function updateCount(app) {
  const { events } = app.trace;
  const loading = app.trace.mode === 'local' && !app.trace.complete;
  const total = formatCount(events.total);
  const all = formatCount(app.trace.expectedEvents ?? events.loadedEvents);
  byId('count').textContent = `${total} of ${all} events${loading ? ' (loading…)' : ''}`;
  const range = app.table.list.visibleRange();
  setTestHook({ total: events.total, visibleRows: range, filter: { ...events.filter } });
}

async function applyFilter(app, changes, { keepRow = false } = {}) {
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

/** The compile id the Compile tab explains: the one picked in the sidebar, else the selected event's. */
function compileTarget(app) {
  if (app.filter.cid) return app.filter.cid;
  const event = app.table.selected >= 0 ? app.trace.events.row(app.table.selected) : null;
  return event ? compileIdOf(event) : null;
}

/**
 * The event behind a compiles.json payload reference of compile id `cid` (and `rank`), selected in
 * the table with its payload open. As the Graph breaks tab does, the table is narrowed to that
 * kind of event of the event's own compile id (a recompile's reasons are logged under the frame
 * compile's first attempt, its entry is the last); paged from the server, where that id is not
 * known here, to the entry's id and, failing that, to the kind alone.
 */
async function selectRef(app, ref, { cid, rank }) {
  const { trace } = app;
  const isKey = trace.events.keyList().some(([key]) => key === ref.kind);
  const onRank = trace.multiRank ? rank : null;
  const narrow = { rank: onRank, kind: isKey ? ref.kind : 'artifact', q: isKey ? null : ref.kind };
  const own = await trace.refCompileId(ref, onRank);
  let row = -1;
  for (const id of own ? [own] : [cid, null]) {
    await applyFilter(app, { ...narrow, cid: id });
    row = await trace.rowOfRef(ref, onRank);
    if (row >= 0) break;
  }
  setTestHook({ followed: { raw_line: ref.raw_line, log_line: ref.log_line, row } });
  if (row < 0) return;
  app.detail.state.tab = 'payload';
  app.table.select(row);
}

function drawCompileTab(app, body, title) {
  // Made on first use: nothing of it runs before the first rows.
  if (!app.compileTab) {
    app.compileTab = createCompileTab(app.trace, {
      onRef: (ref, target) => selectRef(app, ref, target),
      onPickCid: (cid) => pickCompileId(app, cid),
      onRedraw: () => app.detail.redraw(),
    });
  }
  const cid = compileTarget(app);
  title.textContent = cid ? `compile ${cid}` : '';
  setTestHook({ compile: app.compileTab.draw(body, cid, app.filter.rank ?? null) });
}

/** A compile id picked in the sidebar (or a link): the table filtered to it, its Compile tab shown. */
async function pickCompileId(app, cid) {
  await applyFilter(app, { cid: cid || null });
  if (cid) await app.detail.redraw('compile');
  else if (app.detail.state.tab === 'compile') await app.detail.redraw();
  saveState(app);
}

function onSelect(app, row, event) {
  // A row picked while the Compile tab shows: its payload instead (a restored row keeps the tab).
  if (app.detail.state.tab === 'compile' && !app.keepTab) app.detail.state.tab = 'payload';
  saveState(app);
  const pick = event || app.trace.events.row(row);
  if (!pick) {
    // Its bytes (read again by range) or its page (from the events API) are on their way: show
    // the row when they come, unless another row was picked meanwhile.
    const stop = app.trace.events.onChange(() => {
      if (app.table.selected !== row) return stop();
      const came = app.trace.events.row(row);
      if (came) {
        stop();
        onSelect(app, row, came);
      }
      return undefined;
    });
    return;
  }
  const part = app.trace.mode === 'local' ? app.trace.events.partOfLine(app.trace.events.lineOf(row)) : app.trace.partOfRank(pick.rank);
  const shown = app.detail.show(pick, part);
  setTestHook({ selected: { row, key: eventKey(pick), cid: compileIdOf(pick), log_line: pick.log_line, rank: pick.rank ?? null } });
  shown.then(() => setTestHook({ payload: app.detail.state.payloadShown }));
}

function wireFilters(app) {
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
  byId('cids').addEventListener('click', (e) => {
    const row = e.target.closest('[data-cid]');
    if (row) pickCompileId(app, row.dataset.cid || null);
  });
}

function wirePerfetto(app) {
  const button = byId('perfetto');
  const target = perfettoUrl(queryParam('perfetto'));
  const files = app.trace.manifest && Array.isArray(app.trace.manifest.files) ? app.trace.manifest.files : null;
  button.hidden = !target || app.trace.source.kind !== 'http' || (files !== null && !files.includes('chromium_events.json') && !app.trace.multiRank);
  if (target) button.title = `Open chromium_events.json in ${new URL(target).origin}`;
  button.addEventListener('click', () => {
    setTestHook({ perfetto: { state: 'opening', target } });
    const buffer = app.trace.chromiumEvents().then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    const title = `tlscope ${traceTitle(app.trace)}`.replace(/[^A-Za-z0-9.\-_#:/?=&;%+$ ]/g, ' ');
    openInPerfetto(buffer, { url: target, title, fileName: 'chromium_events.json' }).then(
      () => setTestHook({ perfetto: { state: 'sent', target } }),
      (err) => {
        byId('status').textContent = `Perfetto: ${err.message}`;
        setTestHook({ perfetto: { state: 'error', target, error: err.message } });
      },
    );
  });
}

function wireReportLink(app) {
  const href = app.trace.fileUrl('index.html');
  const link = byId('report-link');
  link.hidden = !href;
  if (href) link.href = href;
}

function restoreState(app) {
  const s = readState(location.hash);
  app.filter = { kind: s.kind || null, cid: s.cid || null, rank: s.rank === undefined ? null : Number(s.rank), q: s.q || null };
  byId('f-q').value = app.filter.q || '';
  app.pendingRow = s.row === undefined ? -1 : Number(s.row);
  if (s.tab) app.detail.state.tab = s.tab;
}

function trySelectPending(app) {
  if (!(app.pendingRow >= 0) || app.pendingRow >= app.trace.events.total) return;
  const row = app.pendingRow;
  app.pendingRow = -1;
  app.keepTab = true;
  app.table.select(row);
  app.keepTab = false;
}

async function start(source, packed) {
  byId('landing').hidden = true;
  byId('main').hidden = false;
  byId('status').textContent = 'Opening…';
  const onProgress = (n) => {
    byId('status').textContent = `Loading ${formatCount(n)} events…`;
  };
  // The first rows do not wait for compiles.json (whenIndexesRead draws what it adds). ?mode=remote
  // pages a served trace through the events API whatever its size (local: holds it in the tab).
  const mode = ['local', 'remote'].includes(queryParam('mode')) ? queryParam('mode') : 'auto';
  const trace = await openTrace(source, { prefetch: window.__tlscopePrefetch, onProgress, waitForIndexes: false, mode });
  const app = { trace, filter: {}, pendingRow: -1, notes: [] };
  app.table = createEventTable(byId('table'), { onSelect: (row, event) => onSelect(app, row, event) });
  app.detail = createDetail(byId('detail'), trace, { onTab: () => saveState(app), compile: (body, title) => drawCompileTab(app, body, title) });
  app.sidebar = createSidebar(byId('cids'), { selected: () => app.filter.cid || '' });
  restoreState(app);
  byId('trace-title').textContent = traceTitle(trace);
  fillRanks(app);
  fillKinds(app);
  drawSidebar(app);
  drawBreaksTab(app);
  wireSideTabs();
  const indexesIn = whenIndexesRead(app);
  wireFilters(app);
  wirePerfetto(app);
  wireReportLink(app);
  // Unfiltered, the table starts as the trace opened (a served trace's first rows may already be
  // there while the server indexes it): only a filter from the URL is waited for.
  if (Object.values(app.filter).some((v) => v !== null && v !== undefined && v !== '')) await trace.events.setFilter(app.filter);
  app.table.setModel(trace.events);
  let queued = false;
  trace.events.onChange(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      app.table.refresh();
      updateCount(app);
      trySelectPending(app);
    });
  });
  app.table.list.container.addEventListener('scroll', () => setTestHook({ visibleRows: app.table.list.visibleRange() }), { passive: true });
  updateCount(app);
  trySelectPending(app);
  // firstRowsAt / loadedAt: ms since navigation start (bench/viewers.py reads them).
  requestAnimationFrame(() => {
    setTestHook({ ready: true, mode: trace.mode, expectedEvents: trace.expectedEvents, firstRowsAt: performance.now(), packed: packed ? { omitted: packed.omitted || [] } : null });
    // A URL naming the Compile tab: drawn once the first rows are.
    if (app.detail.state.tab === 'compile') app.detail.redraw();
  });
  byId('status').textContent = trace.mode === 'remote' ? '' : 'Loading…';
  await trace.loaded;
  await indexesIn;
  const notes = [...app.notes];
  if (packed && packed.omitted && packed.omitted.length) notes.push(`${packed.omitted.length} payloads left out of this file`);
  byId('status').textContent = notes.join(' · ');
  fillKinds(app);
  drawSidebar(app);
  app.table.refresh();
  updateCount(app);
  trySelectPending(app);
  // Without compiles.json, statuses come from the metrics read while loading.
  if (app.detail.state.tab === 'compile') app.detail.redraw();
  setTestHook({ loaded: true, loadedAt: performance.now(), bytesDropped: Boolean(trace.events.dropped) });
  window.addEventListener('hashchange', () => {
    restoreState(app);
    applyFilter(app, app.filter, { keepRow: true }).then(() => {
      trySelectPending(app);
      if (app.detail.state.tab === 'compile') app.detail.redraw();
    });
  });
}

async function listServed() {
  if (!/^https?:$/.test(location.protocol)) return;
  const response = await fetch('/api/traces').catch(() => null);
  if (!response || !response.ok) return;
  const traces = await response.json().catch(() => []);
  if (!Array.isArray(traces) || !traces.length) return;
  const box = byId('served');
  box.appendChild(Object.assign(document.createElement('h2'), { textContent: 'Traces on this server' }));
  const ul = document.createElement('ul');
  for (const t of traces) {
    if (!t || typeof t.url !== 'string' || !t.url.startsWith('/')) continue;
    const a = document.createElement('a');
    a.href = `?trace=${encodeURIComponent(t.url)}`;
    a.textContent = `${t.id} (${t.summary && t.summary.events !== undefined ? `${t.summary.events} events` : 'not parsed yet'})`;
    const li = document.createElement('li');
    li.appendChild(a);
    ul.appendChild(li);
  }
  box.appendChild(ul);
}

function filesFromDrop(dataTransfer) {
  // A dropped folder is walked through the entries API; dropped files are taken as they are.
  const entries = [...dataTransfer.items].map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
  const out = [];
  const walk = (entry, prefix) =>
    new Promise((resolve) => {
      if (entry.isFile) {
        entry.file((f) => {
          Object.defineProperty(f, 'relativePath', { value: prefix + f.name });
          out.push(f);
          resolve();
        }, resolve);
      } else {
        const reader = entry.createReader();
        const more = () =>
          reader.readEntries(async (batch) => {
            if (!batch.length) return resolve();
            await Promise.all(batch.map((e) => walk(e, `${prefix}${entry.name}/`)));
            more();
          }, resolve);
        more();
      }
    });
  return Promise.all(entries.map((e) => walk(e, ''))).then(() => out);
}

function showLanding() {
  const landing = byId('landing');
  landing.hidden = false;
  byId('main').hidden = true;
  const openFiles = (files) => {
    if (files.length) start(FileSource.fromFiles(files)).catch((err) => showError(String(err.message || err)));
  };
  byId('pick-folder').addEventListener('change', (e) => openFiles([...e.target.files]));
  byId('pick-files').addEventListener('change', (e) => openFiles([...e.target.files]));
  byId('url-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const url = byId('url-input').value.trim();
    if (url) location.search = `?trace=${encodeURIComponent(url)}`;
  });
  document.addEventListener('dragover', (e) => {
    e.preventDefault();
    landing.classList.add('drag');
  });
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    landing.classList.remove('drag');
    filesFromDrop(e.dataTransfer).then(openFiles);
  });
  listServed();
  setTestHook({ ready: true, landing: true });
}

async function main() {
  setTestHook({ ready: false, loaded: false, total: 0, compileIds: [], startedAt: performance.now() });
  byId('open-other').addEventListener('click', () => {
    if (location.search || location.protocol !== 'file:') location.href = location.pathname;
    else showLanding();
  });
  const packed = packedData();
  try {
    if (packed) return await start(new InlineSource(new Map(Object.entries(packed.files))), packed);
    const trace = queryParam('trace');
    if (!trace) return showLanding();
    const url = new URL(trace, location.href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return showError('The trace URL must be http(s).');
    return await start(url.href, null);
  } catch (err) {
    return showError(`Could not open the trace: ${err.message || err}`);
  }
}

main();
