// The Ranks view (`?view=ranks&trace=JOB`): a multi-rank job at a glance, built for a thousand
// ranks. A rank table (virtualised, sortable, stragglers marked), a rank × compile-id matrix of
// the divergence groups, a timeline of every rank's compile phases from timeline.bin, and "why is
// rank K slow" against the median rank. It reads ranks.json, timeline.bin and a few ranks'
// compiles.json, never the events: what it shows was decided in Python (ranks.json's stragglers
// and groups, compiles.json's statuses and phase times); this page arranges and draws it.

import { HttpSource, VirtualList, decodeTimeline, formatState, setTestHook, waitServed } from '/lib/tlscope.js';
import { byId, el, messageOf } from './dom.js';
import { SORT_KEYS, compileEntries, comparePhases, idsBetween, markedColumns, matrixColumns, rankRanges, readRanksFile, sortRanks } from './ranks-data.js';
import { RankMatrix, entriesById } from './ranks-matrix.js';
import { RankTimeline } from './ranks-timeline.js';
import { wireTimeline } from './ranks-input.js';

/** @typedef {import('./ranks-data.js').RanksFile} RanksFile */
/** @typedef {import('./ranks-data.js').RankLine} RankLine */
/** @typedef {import('./ranks-data.js').SortKey} SortKey */
/** @typedef {import('/lib/tlscope.js').CompileEntry} CompileEntry */
/** @typedef {import('/lib/tlscope.js').Source} Source */

/**
 * The page's state.
 * @typedef {object} RanksPage
 * @property {Source} source the job's folder
 * @property {string | null} base its URL (null: the files are inlined, by `tlscope pack`)
 * @property {RanksFile} file
 * @property {Set<number>} slow straggler ranks
 * @property {Map<number, number>} groupOf rank -> its group's number (1-based)
 * @property {Map<number, Promise<CompileEntry[]>>} compiles each rank's compiles.json, read once
 * @property {{ key: SortKey, descending: boolean, lines: RankLine[] }} sort
 * @property {VirtualList} [list]
 * @property {RankTimeline} [timeline]
 * @property {number | null} picked the rank "why" explains
 */

/**
 * The view's markup: built here, so the explorer's page stays as it is for the other views.
 * @returns {Record<string, HTMLElement>}
 */
function build() {
  const doc = document;
  const root = el(doc, 'section', 'rk');
  root.id = 'ranks-view';
  const head = el(doc, 'div', 'rk-head');
  const left = el(doc, 'div', 'rk-left');
  const thead = el(doc, 'div', 'rk-row rk-thead');
  const table = el(doc, 'div', 'rk-table');
  table.id = 'rk-table';
  left.append(thead, table);
  const right = el(doc, 'div', 'rk-right');
  const matrix = el(doc, 'div', 'rk-matrix');
  const lanes = el(doc, 'div', 'rk-lanes');
  const canvas = el(doc, 'canvas', 'rk-canvas');
  canvas.tabIndex = 0;
  canvas.setAttribute('aria-label', 'Timeline of every rank: wheel or W/S to zoom, drag or A/D and arrows to pan, click a slice to open its compile');
  const tip = el(doc, 'div', 'rk-tip');
  tip.hidden = true;
  lanes.append(canvas, tip);
  const why = el(doc, 'div', 'rk-why');
  right.append(matrix, lanes);
  root.append(head, left, right, why);
  byId('main').after(root);
  return { root, head, thead, table, matrix, canvas, tip, why };
}

/**
 * The explorer at compile id `cid` on rank `rank`: the rank's own folder, its Compile tab. A packed
 * job (no base: every rank's events are in this page) opens its event table filtered to the rank.
 * @param {string | null} base
 * @param {number} rank
 * @param {string} cid
 */
export function compileUrl(base, rank, cid) {
  if (base === null) return `${location.pathname}${formatState({ cid, rank, tab: 'compile' })}`;
  const folder = new URL(`rank_${rank}/`, base).href;
  const here = new URL(location.href);
  const trace = folder.startsWith(here.origin) ? folder.slice(here.origin.length) : folder;
  return `${here.pathname}?trace=${encodeURIComponent(trace)}#cid=${encodeURIComponent(cid)}&tab=compile`;
}

/**
 * Open compile `cid` of `rank` (the hook says which, for tests, before the page goes).
 * @param {RanksPage} page
 * @param {number} rank
 * @param {string} cid
 */
function openCompile(page, rank, cid) {
  setTestHook({ opened: { rank, cid } });
  location.href = compileUrl(page.base, rank, cid);
}

/**
 * A rank's compiles.json entries (read once; none when unreadable).
 * @param {RanksPage} page
 * @param {number} rank
 */
function compilesOf(page, rank) {
  let found = page.compiles.get(rank);
  if (!found) {
    found = page.source.json(`rank_${rank}/compiles.json`, { gz: false }).then(compileEntries, () => []);
    page.compiles.set(rank, found);
  }
  return found;
}

/**
 * The header: ranks, stragglers and divergence in words (ranks.json's).
 * @param {RanksPage} page
 * @param {HTMLElement} head
 */
function drawHead(page, head) {
  const { file } = page;
  const div = file.divergence;
  const s = file.stragglers;
  const parts = [`${file.ranks.length} ranks`];
  parts.push(s && s.ranks.length ? `${s.ranks.length} straggler(s): ${s.ranks.map((r) => r.rank).join(', ')} (${s.rule})` : 'no stragglers');
  if (!div.diverges) parts.push('every rank compiled the same compile ids');
  // Each list in a few words, in ranks.json's `said` order (format 1.40), as the lists below.
  const ids = (/** @type {number} */ n) => `${n} compile id${n === 1 ? '' : 's'}`;
  /** @type {Record<string, string>} */
  const words = {
    groups: `diverge in ${file.groups.length} groups`, frames: 'functions differ', settings: 'settings differ',
    collectives: `collectives differ at ${ids(div.collectives.length)}`, graphs: `graphs differ at ${ids(div.graphs.length)}`, caches: `caches differ at ${ids(div.caches.length)}`,
  };
  for (const { list } of div.said) parts.push(words[list]);
  head.replaceChildren(el(document, 'strong', '', 'Ranks'), el(document, 'span', 'muted', parts.join(' · ')));
  if (file.firstAnswers && file.firstAnswers.lines.length) head.appendChild(answersList(page, file.firstAnswers));
  // ranks.json's sentences, as written, each list in the order tlscope says it (`said`, format
  // 1.40): the groups, the ranks that compiled other functions or numbered them differently
  // (format 1.31: what explains the groups), a desync the compile ids do not show (format 1.17),
  // the ranks that ran under other settings (format 1.30), the graphs (format 1.30, with links),
  // the compiles whose caches answered differently (format 1.36).
  for (const { list: name } of div.said) {
    const list = el(document, 'ul', `rk-${name}`);
    if (name === 'groups') for (const g of file.groups) list.appendChild(el(document, 'li', '', groupLine(g)));
    else if (name === 'graphs') for (const g of div.graphs) list.appendChild(graphItem(page, g));
    else for (const item of div[name]) list.appendChild(el(document, 'li', '', item.sentence));
    head.appendChild(list);
  }
}

/**
 * The ranks' first answers (ranks.json's `first_answers`, format 1.42), each line after the
 * ranks that say it, with a link to its compile on the lowest of them.
 * @param {RanksPage} page
 * @param {import('/lib/divergence.js').JobAnswersView} answers
 * @returns {HTMLElement}
 */
function answersList(page, answers) {
  const list = el(document, 'ul', 'rk-answers');
  for (const { who, text, compileId, rank } of answers.lines) {
    const item = el(document, 'li', '', `${who}: ${text}`);
    if (compileId !== null && rank !== null) item.append(' · ', compileLink(page, 'rk-answer-open', rank, compileId));
    list.appendChild(item);
  }
  if (answers.more) list.appendChild(el(document, 'li', 'muted', `and ${answers.more} more line${answers.more === 1 ? '' : 's'} on some ranks`));
  return list;
}

/**
 * A graph mismatch's sentence, as written, with a link per group to its lowest rank's compile (the
 * graphs one click away), each under its own number for the function (format 1.31).
 * @param {RanksPage} page
 * @param {import('/lib/divergence.js').GraphMismatch} g
 * @returns {HTMLElement}
 */
function graphItem(page, g) {
  const item = el(document, 'li', '');
  item.appendChild(el(document, 'span', 'rk-graph-sentence', g.sentence));
  for (const { ranks: [rank], id } of g.groups.slice(0, 5)) item.append(' · ', compileLink(page, 'rk-graph-open', rank, id));
  return item;
}

/**
 * A link `[6/0] on rank 1` to compile `cid` of `rank`, opened by `openCompile` (the hook says which).
 * @param {RanksPage} page
 * @param {string} cls
 * @param {number} rank
 * @param {string} cid
 * @returns {HTMLAnchorElement}
 */
function compileLink(page, cls, rank, cid) {
  const link = /** @type {HTMLAnchorElement} */ (el(document, 'a', cls, `${cid} on rank ${rank}`));
  link.href = compileUrl(page.base, rank, cid);
  link.addEventListener('click', (event) => {
    event.preventDefault();
    openCompile(page, rank, cid);
  });
  return link;
}

/**
 * A group's sentence (ranks.json's) with its ranks as ranges: a thousand ranks listed one by one
 * would fill the page.
 * @param {import('./ranks-data.js').RankGroup} group
 */
function groupLine(group) {
  const cut = group.sentence.indexOf(': ');
  const what = cut >= 0 ? group.sentence.slice(cut + 2) : group.sentence;
  const ranges = rankRanges(group.ranks);
  const who = `${group.ranks.length} rank${group.ranks.length === 1 ? '' : 's'} (${ranges.length > 90 ? `${ranges.slice(0, 90)}…` : ranges})`;
  return `${who}: ${what}`;
}

/**
 * The rank table: sortable headings, a virtualised row per rank.
 * @param {RanksPage} page
 * @param {Record<string, HTMLElement>} ui
 */
function drawTable(page, ui) {
  const cells = [...SORT_KEYS.map(([key, title]) => ({ key, title })), { key: null, title: 'group' }];
  ui.thead.replaceChildren(...cells.map(({ key, title }) => {
    const b = el(document, key ? 'button' : 'span', `rk-c${key ? '' : ' rk-g'}`, title);
    if (key) {
      b.dataset.sort = key;
      b.classList.toggle('on', page.sort.key === key);
      b.addEventListener('click', () => sortBy(page, ui, key));
    }
    return b;
  }));
  const list = new VirtualList(ui.table, {
    rowHeight: 22,
    createRow: () => el(document, 'div', 'rk-row'),
    renderRow: (row, i) => renderRank(page, row, page.sort.lines[i]),
  });
  ui.table.addEventListener('click', (e) => {
    const row = e.target instanceof Element ? e.target.closest('[data-rank]') : null;
    if (row instanceof HTMLElement) pickRank(page, ui, Number(row.dataset.rank));
  });
  page.list = list;
  list.setCount(page.sort.lines.length);
}

/**
 * @param {RanksPage} page
 * @param {HTMLElement} row
 * @param {RankLine} line
 */
function renderRank(page, row, line) {
  const slow = page.slow.has(line.rank);
  row.dataset.rank = String(line.rank);
  row.className = `rk-row${slow ? ' slow' : ''}${page.picked === line.rank ? ' on' : ''}`;
  const values = [
    `${line.rank}${slow ? ' ▲' : ''}`, line.compile_time_s.toFixed(2), line.compiles, line.graph_breaks,
    line.recompiles, line.failures, line.cache_hits, page.groupOf.get(line.rank) ?? '',
  ];
  row.replaceChildren(...values.map((v, i) => el(document, 'span', i === 7 ? 'rk-g' : 'rk-c', String(v))));
  if (slow) row.title = `rank ${line.rank} straggles: ${stragglerWhy(page, line.rank) || (page.file.stragglers ? page.file.stragglers.rule : '')}`;
}

/**
 * @param {RanksPage} page
 * @param {Record<string, HTMLElement>} ui
 * @param {SortKey} key
 */
function sortBy(page, ui, key) {
  const descending = page.sort.key === key ? !page.sort.descending : key !== 'rank';
  page.sort = { key, descending, lines: sortRanks(page.file.ranks, key, descending) };
  for (const b of ui.thead.querySelectorAll('button')) b.classList.toggle('on', b instanceof HTMLElement && b.dataset.sort === key);
  if (page.list) page.list.setCount(page.sort.lines.length);
  if (page.list) page.list.draw();
  setTestHook({ ranksOrder: page.sort.lines.slice(0, 20).map((l) => l.rank), ranksSort: { key, descending } });
}

/**
 * The matrix of the divergence groups, once their first ranks' compiles.json are in.
 * @param {RanksPage} page
 * @param {RankMatrix} matrix
 */
async function drawMatrix(page, matrix) {
  const rows = await Promise.all(page.file.rows.map(async (group) => ({ group, entries: entriesById(await compilesOf(page, group.ranks[0]), group.columns) })));
  // The marked columns first, each kind counted once (ranks.json's), then the groups' other ids.
  const marked = markedColumns(page.file);
  const columns = matrixColumns(marked.ids, rows.map((r) => [...r.entries.keys()]));
  matrix.set(rows, columns, marked.counts);
}

/**
 * "Why is rank K slow": K's compile ids against the median rank's, phase by phase.
 * @param {RanksPage} page
 * @param {HTMLElement} box
 * @param {number} rank
 */
async function drawWhy(page, box, rank) {
  // ranks.json names the median rank (decided in Python: tlscope.analyse.ranks.stragglers).
  const median = page.file.stragglers ? page.file.stragglers.median_rank : null;
  const line = page.file.ranks.find((l) => l.rank === rank);
  const other = page.file.ranks.find((l) => l.rank === median);
  if (median === null || !line || !other) return;
  box.replaceChildren(el(document, 'p', 'muted', `Reading rank ${rank}'s and rank ${median}'s compiles.json…`));
  const [mine, theirs] = await Promise.all([compilesOf(page, rank), compilesOf(page, median)]);
  if (page.picked !== rank) return;
  // The same functions compared, whatever each rank numbered them (ranks.json's frames, 1.31).
  const rows = comparePhases(mine, theirs, idsBetween(page.file.divergence.frames, rank, median));
  const diff = line.compile_time_s - other.compile_time_s;
  const title = `Why is rank ${rank} slow? ${line.compile_time_s.toFixed(2)} s of compiles against ${other.compile_time_s.toFixed(2)} s on rank ${median}, the median rank (${diff >= 0 ? '+' : ''}${diff.toFixed(2)} s). Its compile ids against rank ${median}'s of the same functions, phase by phase, the largest excess first:`;
  const table = el(document, 'table', 'rk-why-t');
  const headRow = el(document, 'tr');
  for (const h of ['compile id', 'phase', `rank ${rank}`, `rank ${median}`, 'difference']) headRow.appendChild(el(document, 'th', '', h));
  table.appendChild(headRow);
  for (const r of rows.slice(0, 40)) {
    const tr = el(document, 'tr');
    const cells = [r.theirs && r.theirs !== r.id ? `${r.id} (rank ${median}'s ${r.theirs})` : r.id, r.phase, `${r.mine.toFixed(3)} s`, r.median === null ? `not compiled on rank ${median}` : `${r.median.toFixed(3)} s`, `${r.delta >= 0 ? '+' : ''}${r.delta.toFixed(3)} s`];
    for (const c of cells) tr.appendChild(el(document, 'td', '', c));
    table.appendChild(tr);
  }
  // A straggler's own sentence first (ranks.json's `why`, format 1.35: decided in Python).
  const said = stragglerWhy(page, rank);
  box.replaceChildren(...(said ? [el(document, 'p', 'rk-why-s', `Rank ${rank} straggles: ${said}.`)] : []), el(document, 'p', 'rk-why-h', title), table);
  setTestHook({ why: { rank, median, rows: rows.slice(0, 40), said } });
}

/**
 * ranks.json's sentence of where straggler `rank`'s time went ("" for a rank that is none, or unsaid).
 * @param {RanksPage} page
 * @param {number} rank
 * @returns {string}
 */
function stragglerWhy(page, rank) {
  const found = page.file.stragglers ? page.file.stragglers.ranks.find((s) => s.rank === rank) : undefined;
  return found ? found.why : '';
}

/**
 * A rank picked in the table: outlined in the timeline (scrolled to it) and explained.
 * @param {RanksPage} page
 * @param {Record<string, HTMLElement>} ui
 * @param {number} rank
 */
function pickRank(page, ui, rank) {
  page.picked = rank;
  if (page.list) page.list.draw();
  const tl = page.timeline;
  if (tl) {
    tl.selected = rank;
    const at = tl.ranks.indexOf(rank);
    if (at >= 0 && (at < tl.view.y0 || at >= tl.view.y0 + tl.view.span)) {
      tl.view.y0 = Math.max(0, Math.min(tl.ranks.length - tl.view.span, at - tl.view.span / 2));
    }
    tl.request();
  }
  drawWhy(page, ui.why, rank);
}

/**
 * The canvases sized to their boxes, again on every resize.
 * @param {RanksPage} page
 * @param {Record<string, HTMLElement>} ui
 * @param {RankMatrix} matrix
 */
function fit(page, ui, matrix) {
  const canvas = /** @type {HTMLCanvasElement} */ (ui.canvas);
  let drawnFor = '';
  const resize = () => {
    const box = /** @type {HTMLElement} */ (canvas.parentElement);
    // The observer's first call (before the first paint) finds the sizes just drawn for: a second
    // drawing of every lane there cost 20-50 ms of the first paint on a thousand ranks.
    const size = `${box.clientWidth}x${box.clientHeight}x${ui.matrix.clientWidth}`;
    if (size === drawnFor) return;
    drawnFor = size;
    canvas.width = Math.max(100, box.clientWidth);
    canvas.height = Math.max(60, box.clientHeight);
    matrix.resize();
    if (page.timeline) page.timeline.draw();
  };
  resize();
  new ResizeObserver(resize).observe(/** @type {HTMLElement} */ (canvas.parentElement));
}

/**
 * The ranks of the job as ranks.json and timeline.bin say them, then drawn.
 * @param {string | Source} target the job's folder: its URL, or its files (a packed page's)
 */
async function load(target) {
  if (typeof target !== 'string') return { source: target, ...(await readBoth(target)) };
  const url = target;
  const prefetch = /** @type {Window & { __tlscopePrefetch?: import('/lib/tlscope.js').Prefetch }} */ (window).__tlscopePrefetch;
  /** @param {import('/lib/tlscope.js').ServedStatus} s */
  const onStatus = (s) => {
    byId('status').textContent = s.state === 'ready' ? '' : `Preparing the job (${s.state})…`;
  };
  const first = prefetch && prefetch.status ? /** @type {Promise<import('/lib/tlscope.js').ServedStatus | null>} */ (prefetch.status) : null;
  const status = await waitServed(url, { onStatus, first });
  if (status && status.summary && status.summary.multi_rank === false) throw new Error('this trace is one log, not a multi-rank job: the Ranks view needs a job');
  const source = new HttpSource(url, { prefetch });
  return { source, ...(await readBoth(source)) };
}

/**
 * ranks.json and timeline.bin of the job at `source`, read at once and decoded.
 * @param {Source} source
 */
async function readBoth(source) {
  const [json, bytes] = await Promise.all([source.json('ranks.json', { gz: false }), source.bytes('timeline.bin', { gz: false })]);
  return { file: readRanksFile(json), timeline: decodeTimeline(bytes) };
}

/**
 * The test hook's sentences of each mismatch list, as ranks.json says them.
 * @param {import('/lib/tlscope.js').Divergence} div
 */
function sentencesOf(div) {
  const said = (/** @type {{ sentence: string }[]} */ items) => items.map((item) => item.sentence);
  return { collectives: said(div.collectives), graphs: said(div.graphs), settings: said(div.settings), frames: said(div.frames), caches: said(div.caches) };
}

/**
 * Open the Ranks view of the job at `url` (or in `url`'s files: a packed job's).
 * @param {string | Source} url
 */
export async function startRanks(url) {
  byId('landing').hidden = true;
  byId('main').hidden = true;
  byId('status').textContent = 'Reading ranks.json and timeline.bin…';
  const startedAt = performance.now();
  const { source, file, timeline } = await load(url).catch((err) => {
    throw new Error(`the Ranks view could not read the job: ${messageOf(err)}`);
  });
  const readAt = performance.now();
  byId('trace-title').textContent = `${file.ranks.length} ranks · ${timeline.count.toLocaleString('en-US')} timeline events`;
  const events = new URL(location.href);
  events.searchParams.delete('view');
  byId('report-link').before(Object.assign(el(document, 'a', '', 'Events'), { id: 'events-link', href: events.href, title: 'Every event of the job in the explorer (each rank\'s raw.jsonl)' }));
  const ui = build();
  /** @type {RanksPage} */
  const page = {
    source, base: typeof url === 'string' ? new HttpSource(url).base.href : null, file, picked: null, compiles: new Map(),
    slow: new Set(file.stragglers ? file.stragglers.ranks.map((s) => s.rank) : []),
    groupOf: new Map(file.rows.flatMap((g, i) => g.ranks.map((r) => [r, i + 1]))),
    sort: { key: 'compile_time_s', descending: true, lines: sortRanks(file.ranks, 'compile_time_s', true) },
  };
  drawHead(page, ui.head);
  drawTable(page, ui);
  const matrix = new RankMatrix(ui.matrix, {
    onOpen: (r, c) => openCompile(page, r, c), onPick: (r) => pickRank(page, ui, r), load: (r) => compilesOf(page, r),
  });
  const ranks = file.ranks.map((l) => l.rank);
  page.timeline = new RankTimeline(/** @type {HTMLCanvasElement} */ (ui.canvas), timeline, {
    ranks, stragglers: page.slow, tip: ui.tip, onOpen: (r, c) => openCompile(page, r, c),
  });
  wireTimeline(page.timeline);
  if (page.timeline.aligned) {
    ui.head.appendChild(el(document, 'span', 'rk-note', "the ranks' clocks are more than an hour apart (logs of different runs?): each lane starts at its rank's first event"));
  }
  fit(page, ui, matrix);
  byId('status').textContent = '';
  setTestHook({ view: 'ranks', ranks: file.ranks.length, timelineEvents: timeline.count, stragglers: [...page.slow], groups: file.groups.map((g) => g.ranks.length), rows: file.rows.map((g) => g.ranks.length), rankAnswers: (file.firstAnswers ? file.firstAnswers.lines : []).map((a) => `${a.who}: ${a.text}`), ...sentencesOf(file.divergence) });
  // ms after navigation start: this script's start, both files read and decoded, the view drawn
  // (bench/ranks_view.py); ranksPaintedAt is the frame after it.
  const drawnAt = performance.now();
  const tl = page.timeline;
  requestAnimationFrame(() => {
    setTestHook({ ready: true, ranksPaintedAt: performance.now(), ranksTimings: { startedAt, readAt, drawnAt } });
    // The zoom levels' details once the view is on screen, not before it.
    tl.prepareLevels();
  });
  const first = page.sort.lines[0];
  if (first) pickRank(page, ui, first.rank);
  drawMatrix(page, matrix).catch((err) => setTestHook({ matrixError: messageOf(err) }));
}
