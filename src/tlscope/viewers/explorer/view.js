// The explorer's trace page: a sidebar of compile ids with statuses, the event table, the selected
// event's detail (its payload, or its compile explained), whole-trace views in its place (views.js:
// Recompiles, Graph breaks), a multi-rank job's divergence banner, "Open in Perfetto" and the
// report link. The filter controls and URL state are controls.js's.

import {
  InlineSource, compileIdOf, eventKey, openInPerfetto, openTrace, perfettoUrl, queryParam, readState, setTestHook,
} from '/lib/tlscope.js';
import { createEventTable, formatCount } from './table.js';
import { createDetail } from './detail.js';
import { drawFirstAnswers } from './answers.js';
import { breakFilter, breaksForHook, drawBreaks } from './breaks.js';
import { drawRecompiles, recompileRows } from './recompiles.js';
import { drawDivergence } from './divergence.js';
import { drawExports, exportsForHook } from './exports.js';
import { EVENTS, createViews, viewFromUrl } from './views.js';
import { createSidebar } from './sidebar.js';
import { createCompileTab } from './compile.js';
import { byId, messageOf } from './dom.js';
import { applyFilter, fillKinds, fillRanks, restoreState, saveState, trySelectPending, updateCount, wireFilters } from './controls.js';
import { prepared } from './preparing.js';
import { addGraphLink, createGraphView, printsGraph, sourceLinkFromUrl } from './graph.js';
import { createGate } from './graphfirst.js';
import { createProvenanceView } from './provenance.js';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').RawEvent} RawEvent */
/** @typedef {import('/lib/tlscope.js').NormalFilter} NormalFilter */
/** @typedef {import('/lib/tlscope.js').PayloadRefView} PayloadRef */

/**
 * Data inlined by `tlscope pack`: {files: {path: base64}, omitted: [...], title}.
 * @typedef {{ files: Record<string, string>, omitted?: string[], title?: string, source_url?: string, source_root?: string }} Packed
 */

/**
 * The trace page's state: the trace, the filter shown, and the page's parts.
 * @typedef {object} App
 * @property {OpenedTrace} trace
 * @property {NormalFilter} filter
 * @property {number} pendingRow a row named by the URL, selected once the table has it (-1: none)
 * @property {string[]} notes said in the status line once loaded
 * @property {ReturnType<typeof createEventTable>} table
 * @property {ReturnType<typeof createDetail>} detail
 * @property {ReturnType<typeof createSidebar>} sidebar
 * @property {ReturnType<typeof createCompileTab>} [compileTab] made on first use
 * @property {boolean} [keepTab] a restored row keeps the detail tab
 * @property {ReturnType<typeof createViews>} views the view shown in the main area (views.js)
 * @property {ReturnType<typeof createGraphView>} graph the Graph view (graph.js): the event it shows
 * @property {() => void} redrawSidebar after a filter change (a picked rank lists its own ids)
 */

/**
 * The header's line about the trace.
 * @param {OpenedTrace} trace
 */
function traceTitle(trace) {
  const m = trace.manifest;
  const parts = [];
  if (m && m.torch_version) parts.push(`torch ${m.torch_version}`);
  if (trace.multiRank) parts.push(`${trace.parts.length} ranks`);
  const expected = trace.expectedEvents;
  if (expected !== null) parts.push(`${formatCount(expected)} events`);
  if (trace.mode === 'remote') parts.push('paged from the server');
  return parts.join(' · ');
}

/**
 * Rows of the table per compile id once loaded in the tab; the manifests' counts (which
 * include str and chromium_event lines) while paging from the server.
 * @param {OpenedTrace} trace
 * @returns {Map<string, number>}
 */
function cidEventCounts(trace) {
  if (trace.mode === 'local' && trace.complete) return trace.events.cidCounts();
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const part of trace.parts) {
    const list = part.manifest && Array.isArray(part.manifest.compile_ids) ? part.manifest.compile_ids : [];
    for (const entry of list) if (entry && typeof entry.id === 'string') counts.set(entry.id, (counts.get(entry.id) || 0) + (entry.events || 0));
  }
  return counts;
}

/** @param {App} app */
function drawSidebar(app) {
  const rank = app.filter.rank ?? null;
  const { compileIds, statuses } = app.sidebar.update(app.trace, cidEventCounts(app.trace), rank);
  const derived = app.trace.statusSource === 'none' && app.trace.indexesRead;
  byId('status-source').textContent = derived ? '(status from metrics)' : '';
  setTestHook({ compileIds, statuses, sidebarRank: rank });
}

/**
 * The main area's views (views.js): the event table, and the whole-trace views drawn in its place.
 * @param {App} app
 */
function makeViews(app) {
  /** @param {import('./breaks.js').Site} site */
  const pickBreak = async (site) => {
    app.views.show(EVENTS);
    await applyFilter(app, breakFilter(site));
    if (app.trace.events.total > 0) app.table.select(0);
  };
  /** @param {string} cid @param {number | null} rank */
  const pickRecompile = (cid, rank) => {
    app.views.show(EVENTS);
    app.filter.rank = rank;
    pickCompileId(app, cid);
  };
  /** @param {import('/lib/tlscope.js').ExportRef} ref @param {number | null} rank */
  const pickExport = async (ref, rank) => {
    if (ref.raw_line === null) return;
    app.views.show(EVENTS);
    // Export events are logged outside any compile (`[-/-]`).
    await selectRef(app, { ...ref, raw_line: ref.raw_line }, { cid: '[-/-]', rank });
  };
  const counted = (/** @type {number} */ n) => (app.trace.indexesRead ? `(${n})` : '');
  const defs = [
    { name: EVENTS, label: 'Events' },
    {
      name: 'recompiles', label: 'Recompiles',
      badge: () => counted(recompileRows(app.trace).length),
      draw: (/** @type {HTMLElement} */ pane) => {
        const rows = drawRecompiles(pane, app.trace, { onPick: pickRecompile });
        if (rows) setTestHook({ recompiles: rows.length, recompileList: rows.map((r) => ({ id: r.id, rank: r.rank, fn: r.fn, kind: r.recompile.recommended?.kind ?? null })) });
      },
    },
    {
      name: 'breaks', label: 'Graph breaks',
      badge: () => counted(app.trace.graphBreaks.length),
      draw: (/** @type {HTMLElement} */ pane) => drawBreaks(pane, app.trace, { onPick: (site) => pickBreak(site) }),
    },
    {
      // A trace of torch.compile alone has no export call: its button shows only when one has.
      name: 'exports', label: 'Exports',
      badge: () => counted(app.trace.exports.length),
      hidden: () => app.trace.indexesRead && app.trace.exports.length === 0 && app.trace.exportsNotes.length === 0,
      draw: (/** @type {HTMLElement} */ pane) => drawExports(pane, app.trace, { onPick: pickExport }),
    },
    app.graph.def,
    createProvenanceView(app.trace).def,
  ];
  return createViews({ bar: byId('views'), pane: byId('pane'), table: [byId('center'), byId('detail')] }, defs, () => saveState(app));
}

/** @param {App} app */
function wireSidebar(app) {
  byId('cids').addEventListener('click', (e) => {
    const row = e.target instanceof Element ? e.target.closest('[data-cid]') : null;
    if (row instanceof HTMLElement) {
      // A compile id picked while another view shows: the table and its Compile tab.
      if (app.views.current !== EVENTS) app.views.show(EVENTS);
      pickCompileId(app, row.dataset.cid || null);
    }
  });
}

/**
 * What compiles.json and ranks.json add, drawn: the views' counts, the breaks in the hook, the
 * divergence banner and the sidebar's markers.
 * @param {App} app
 */
function drawIndexes(app) {
  app.views.redraw();
  setTestHook({ graphBreaks: breaksForHook(app.trace), exports: exportsForHook(app.trace) });
  if (app.trace.indexesRead) setTestHook(drawDivergence(byId('divergence'), app.trace));
  if (!app.trace.indexesRead) return;
  setTestHook({ firstAnswers: app.trace.firstAnswers.map((a) => ({ kind: a.kind, compileId: a.compileId, rank: a.rank, text: a.text, who: a.who ?? null })) });
  // The pane drawn before compiles.json was read said "Select an event.": its answers now.
  if (app.detail.state.tab !== 'compile' && !app.detail.state.event) app.detail.redraw();
}

/** Once compiles.json is read (after the first rows: it can be megabytes), statuses and graph
 * breaks are drawn again; unreadable, statuses stay derived from the metrics, and the page says so.
 * @param {App} app
 */
async function whenIndexesRead(app) {
  const failed = await app.trace.indexes.then(() => null, (err) => ({ err }));
  if (failed) app.notes.push(`compiles.json unreadable (${messageOf(failed.err)}): statuses from metrics`);
  drawSidebar(app);
  drawIndexes(app);
  if (app.detail.state.tab === 'compile') app.detail.redraw();
}

/**
 * The compile id the Compile tab explains: the one picked in the sidebar, else the selected event's.
 * @param {App} app
 * @returns {string | null}
 */
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
 * @param {App} app
 * @param {PayloadRef} ref
 * @param {{ cid: string, rank: number | null }} target
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

/**
 * @param {App} app
 * @param {HTMLElement} body
 * @param {HTMLElement} title
 */
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

/**
 * A compile id picked in the sidebar (or a link): the table filtered to it, its Compile tab shown.
 * @param {App} app
 * @param {string | null} cid
 */
async function pickCompileId(app, cid) {
  await applyFilter(app, { cid: cid || null });
  if (cid) await app.detail.redraw('compile');
  else if (app.detail.state.tab === 'compile') await app.detail.redraw();
  saveState(app);
}

/**
 * A first answer's compile opened: the table filtered to it (on its rank, in a job), its Compile tab shown.
 * @param {App} app
 * @param {string} cid
 * @param {number | null} rank
 */
async function openAnswer(app, cid, rank) {
  setTestHook({ opened: { rank, cid } });
  await applyFilter(app, app.trace.multiRank ? { cid, rank } : { cid });
  await app.detail.redraw('compile');
  saveState(app);
}

/**
 * A row picked (`event`: its event, when already at hand).
 * @param {App} app
 * @param {number} row
 * @param {RawEvent | undefined} event
 */
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
  const trace = app.trace;
  const part = trace.mode === 'local' ? trace.events.partOfLine(trace.events.lineOf(row)) : trace.partOfRank(pick.rank);
  const shown = app.detail.show(pick, part);
  setTestHook({ selected: { row, key: eventKey(pick), cid: compileIdOf(pick), log_line: pick.log_line, rank: pick.rank ?? null } });
  shown.then(() => setTestHook({ payload: app.detail.state.payloadShown }));
}

/** @param {App} app */
function wirePerfetto(app) {
  const button = byId('perfetto');
  const target = perfettoUrl(queryParam('perfetto'));
  const files = app.trace.manifest && Array.isArray(app.trace.manifest.files) ? app.trace.manifest.files : null;
  button.hidden = !target || app.trace.source.kind !== 'http' || (files !== null && !files.includes('chromium_events.json') && !app.trace.multiRank);
  if (target) button.title = `Open chromium_events.json in ${new URL(target).origin}`;
  button.addEventListener('click', () => {
    setTestHook({ perfetto: { state: 'opening', target } });
    const buffer = app.trace.chromiumEvents().then((b) => b.slice().buffer);
    const title = `tlscope ${traceTitle(app.trace)}`.replace(/[^A-Za-z0-9.\-_#:/?=&;%+$ ]/g, ' ');
    openInPerfetto(buffer, { url: target || undefined, title, fileName: 'chromium_events.json' }).then(
      () => setTestHook({ perfetto: { state: 'sent', target } }),
      (err) => {
        byId('status').textContent = `Perfetto: ${messageOf(err)}`;
        setTestHook({ perfetto: { state: 'error', target, error: messageOf(err) } });
      },
    );
  });
}

/** @param {App} app */
function wireReportLink(app) {
  const href = app.trace.fileUrl('index.html');
  const link = byId('report-link', HTMLAnchorElement);
  link.hidden = !href;
  if (href) link.href = href;
  else packedLanding(app.trace, link);
}

/**
 * A served multi-rank job: its Ranks view (ranks.js) beside the other views, as a link: a page of
 * its own that reads ranks.json and timeline.bin, not the events this page holds.
 * @param {App} app
 */
function wireRanksLink(app) {
  const { source } = app.trace;
  // Served, or packed with the job's timeline.bin (tlscope pack): the view reads it from the page.
  const packedJob = source instanceof InlineSource && source.files.has('timeline.bin');
  if (!app.trace.multiRank || (source.kind !== 'http' && !packedJob)) return;
  const url = new URL(location.href);
  url.searchParams.set('view', 'ranks');
  url.hash = '';
  const link = Object.assign(document.createElement('a'), { href: url.href, textContent: 'Ranks', id: 'ranks-link', className: 'button' });
  link.title = 'Every rank at a glance: stragglers, divergence, a timeline of every rank';
  byId('views').appendChild(link);
}

/**
 * A packed multi-rank job holds its landing page (`tlscope pack`): the Report link opens it as a
 * page of its own (its links to the rank folders' reports are not in the pack).
 * @param {OpenedTrace} trace
 * @param {HTMLAnchorElement} link
 */
function packedLanding(trace, link) {
  const source = trace.source;
  if (!(source instanceof InlineSource) || !source.files.has('index.html')) return;
  source.bytes('index.html').then((bytes) => {
    link.href = URL.createObjectURL(new Blob([bytes], { type: 'text/html' }));
    // "Ranks" is the Ranks view's link (wireRanksLink) when the pack holds its timeline.
    link.textContent = source.files.has('timeline.bin') ? 'Report' : 'Ranks';
    link.title = 'The multi-rank landing page: every rank, how they diverge, the compile-id matrix';
    link.hidden = false;
  }, () => {});
}

/**
 * The Payload tab's link to the Graph view, for a payload printing an FX graph (format 1.11 on).
 * @param {App} app
 * @param {HTMLElement} body
 * @param {RawEvent} event
 * @param {string} text
 * @param {number} part
 */
function graphLink(app, body, event, text, part) {
  const minor = app.trace.manifest ? app.trace.manifest.format_minor ?? 0 : 0;
  if (minor < 11 || !printsGraph(text)) return;
  addGraphLink(body, () => {
    const { trace } = app;
    const row = app.table.selected;
    const n = trace.mode === 'local' && row >= 0 ? trace.events.lineOf(row) : null;
    app.graph.open(event, part, n);
    app.views.show('graph');
  });
}

/** The URL's `event=N` (the fragment's, else the query's), or null. */
function graphEventFromUrl() {
  const text = readState(location.hash).event ?? queryParam('event');
  const n = text === null || text === undefined || text === '' ? NaN : Number(text);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

/**
 * The page's parts made and drawn for an opened trace (the table has no model yet).
 * @param {OpenedTrace} trace
 * @param {Packed | null} [packed] a packed page's data (its --source-url)
 * @param {() => void} [release] lets the trace's loader go (held for a linked graph, graphfirst.js)
 * @returns {App}
 */
function createPage(trace, packed = null, release = () => {}) {
  /** @type {App} */
  const app = {
    trace,
    filter: { kind: null, cid: null, rank: null, q: null },
    pendingRow: -1,
    notes: [],
    table: createEventTable(byId('table'), { onSelect: (row, event) => onSelect(app, row, event) }),
    detail: createDetail(byId('detail'), trace, { onTab: () => saveState(app), compile: (body, title) => drawCompileTab(app, body, title), onPayload: (body, event, text, part) => graphLink(app, body, event, text, part), idle: (body) => drawFirstAnswers(body, trace.firstAnswers, trace.firstAnswersMore ?? 0, (cid, rank) => openAnswer(app, cid, rank)) }),
    sidebar: createSidebar(byId('cids'), { selected: () => app.filter.cid || '' }),
    views: /** @type {ReturnType<typeof createViews>} */ (/** @type {unknown} */ (null)), // just below
    graph: createGraphView(trace, graphEventFromUrl, sourceLinkFromUrl(packed), release),
    redrawSidebar: () => (app.sidebar.rank === (app.filter.rank ?? null) ? app.sidebar.draw() : drawSidebar(app)),
  };
  app.views = makeViews(app);
  restoreState(app);
  byId('trace-title').textContent = traceTitle(trace);
  fillRanks(app);
  fillKinds(app);
  drawSidebar(app);
  app.views.show(viewFromUrl(app.views.names), false);
  drawIndexes(app);
  wireSidebar(app);
  wireFilters(app);
  wirePerfetto(app);
  wireReportLink(app);
  wireRanksLink(app);
  return app;
}

/**
 * The table shown and kept up to date as events come (one redraw per frame at most).
 * @param {App} app
 * @param {Packed | null} packed
 */
function showTable(app, packed) {
  const { trace } = app;
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
}

/**
 * Everything in (events, and compiles.json read or failed): the page drawn with all of it.
 * @param {App} app
 * @param {Packed | null} packed
 */
function showLoaded(app, packed) {
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
  const { trace } = app;
  setTestHook({ loaded: true, loadedAt: performance.now(), bytesDropped: trace.mode === 'local' && trace.events.dropped });
  window.addEventListener('hashchange', () => {
    restoreState(app);
    const named = viewFromUrl(app.views.names);
    if (named !== app.views.current) app.views.show(named, false);
    applyFilter(app, app.filter, { keepRow: true }).then(() => {
      trySelectPending(app);
      if (app.detail.state.tab === 'compile') app.detail.redraw();
    });
  });
}

/**
 * Open the trace at `source` (a URL or a source object) on the trace page; `packed`: `tlscope pack`'s data.
 * @param {string | import('/lib/tlscope.js').Source} source
 * @param {Packed | null} [packed]
 */
export async function start(source, packed = null) {
  byId('landing').hidden = true;
  byId('main').hidden = false;
  byId('status').textContent = 'Opening…';
  /** @param {number} n */
  const onProgress = (n) => {
    byId('status').textContent = `Loading ${formatCount(n)} events…`;
  };
  // The first rows do not wait for compiles.json (whenIndexesRead draws what it adds). ?mode=remote
  // pages a served trace through the events API whatever its size (local: holds it in the tab).
  const asked = queryParam('mode');
  const mode = asked === 'local' || asked === 'remote' ? asked : 'auto';
  const prefetch = /** @type {Window & { __tlscopePrefetch?: import('/lib/tlscope.js').Prefetch }} */ (window).__tlscopePrefetch;
  // Served by tlscope serve: its parse's progress until ready, and which index files it has.
  const layout = typeof source === 'string' ? await prepared(source, prefetch && prefetch.status) : null;
  // A link to a graph (?view=graph&event=N): its graph is drawn before the events are loaded.
  const held = graphEventFromUrl() !== null && viewFromUrl(['graph']) === 'graph' ? createGate() : null;
  const trace = await openTrace(source, { prefetch, onProgress, waitForIndexes: false, mode, layout, hold: held ? held.promise : undefined });
  const app = createPage(trace, packed, held ? held.open : undefined);
  if (held && app.views.current !== 'graph') held.open();
  const indexesIn = whenIndexesRead(app);
  // Unfiltered, the table starts as the trace opened (a served trace's first rows may already be
  // there while the server indexes it): only a filter from the URL is waited for.
  if (Object.values(app.filter).some((v) => v !== null && v !== undefined && v !== '')) await trace.events.setFilter(app.filter);
  showTable(app, packed);
  byId('status').textContent = trace.mode === 'remote' ? '' : 'Loading…';
  await trace.loaded;
  await indexesIn;
  showLoaded(app, packed);
}
