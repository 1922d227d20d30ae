// The Graph breaks view (`?view=breaks`, in the main area): compiles.json's distinct graph breaks
// (docs/FORMAT.md section 14), most frequent first: the reason, where in the user's own code
// (file:line, function, the whole source line), where tracing stopped when that was library code,
// tlscope's fix where it knows one, torch's fix hints and docs page, how many times and under which compile ids. A compile id leads
// to its dynamo_graph_break_reason event in the table (whose payload holds the full reason and the
// user's traceback). Text goes in with textContent.

import { fixBox } from './compile.js';
import { el } from './dom.js';

const BREAK_ARTIFACT = 'dynamo_graph_break_reason';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').GraphBreak} GraphBreak */
/** @typedef {GraphBreak['sites'][number]} Site */


/**
 * `a/b/c.py` -> `c.py` (the whole path stays in the title).
 * @param {string} file
 */
function baseName(file) {
  const at = file.lastIndexOf('/');
  return at < 0 ? file : file.slice(at + 1);
}

/** @param {GraphBreak} entry */
function location(entry) {
  if (entry.file === null) return 'location not logged';
  const where = `${baseName(entry.file)}${entry.line === null ? '' : `:${entry.line}`}`;
  return entry.name ? `${where} in ${entry.name}` : where;
}

/**
 * Where tracing stopped (library code), tlscope's fix (format 1.50), torch's hints and its page
 * about the break.
 * @param {Document} doc
 * @param {HTMLElement} li
 * @param {GraphBreak} entry
 */
function appendNotes(doc, li, entry) {
  if (entry.stoppedAt) li.appendChild(el(doc, 'div', 'muted gb-stopped', `tracing stopped in library code at ${entry.stoppedAt}`));
  if (entry.fix) li.appendChild(fixBox(doc, entry.fix));
  for (const hint of entry.hints) li.appendChild(el(doc, 'div', 'gb-hint', `Hint: ${hint}`));
  if (entry.docsUrl) li.appendChild(el(doc, 'div', 'muted gb-docs', entry.docsUrl));
}

/**
 * The filter that shows the break's event of one compile id (and rank, in a multi-rank folder).
 * @param {Site} site
 */
export function breakFilter(site) {
  return { kind: 'artifact', cid: site.cid, rank: site.rank, q: BREAK_ARTIFACT };
}

/**
 * @param {Site} site
 * @param {boolean} multiRank
 */
function siteLabel(site, multiRank) {
  return multiRank && site.rank !== null ? `${site.cid} r${site.rank}` : site.cid;
}

/**
 * @param {Document} doc
 * @param {GraphBreak} entry
 * @param {number} index
 * @param {boolean} multiRank
 */
function breakItem(doc, entry, index, multiRank) {
  const li = el(doc, 'li', 'gb');
  li.dataset.break = String(index);
  const head = el(doc, 'div', 'gb-head');
  head.append(el(doc, 'span', 'badge gb-count', `×${entry.count}`), el(doc, 'span', 'gb-reason', entry.reason));
  const loc = el(doc, 'div', 'gb-loc', location(entry));
  if (entry.file !== null) loc.title = `${entry.file}${entry.line === null ? '' : `:${entry.line}`}`;
  li.append(head, loc);
  if (entry.code) li.appendChild(el(doc, 'code', 'gb-code', entry.code));
  appendNotes(doc, li, entry);
  const sites = el(doc, 'div', 'gb-cids');
  entry.sites.forEach((site, k) => {
    const chip = el(doc, 'button', 'gb-cid', siteLabel(site, multiRank));
    chip.type = 'button';
    chip.dataset.site = String(k);
    chip.title = `Show this graph break's ${BREAK_ARTIFACT} event`;
    sites.appendChild(chip);
  });
  li.appendChild(sites);
  return li;
}

/**
 * What the test hook shows of the graph breaks.
 * @param {OpenedTrace} trace
 */
export function breaksForHook(trace) {
  return trace.graphBreaks.map((b) => ({ reason: b.reason, file: b.file, line: b.line, count: b.count, compileIds: b.sites.map((s) => s.cid), ranks: b.ranks }));
}

/**
 * Draw `trace.graphBreaks` into `pane` (a list `#breaks`); `onPick(site)` when the user picks a
 * break (its first site) or one of its compile ids.
 * @param {HTMLElement} pane
 * @param {OpenedTrace} trace
 * @param {{ onPick: (site: Site) => void }} options
 */
export function drawBreaks(pane, trace, { onPick }) {
  const doc = pane.ownerDocument;
  const list = el(doc, 'ol', 'vw gb-list');
  list.id = 'breaks';
  pane.appendChild(list);
  const breaks = trace.graphBreaks;
  if (!breaks.length) {
    const none = trace.statusSource === 'compiles.json' ? 'No graph breaks.' : 'No compiles.json: graph breaks are not indexed.';
    list.appendChild(el(doc, 'li', 'muted gb-none', trace.indexesRead ? none : 'Reading compiles.json…'));
  }
  breaks.forEach((entry, i) => list.appendChild(breakItem(doc, entry, i, trace.multiRank)));
  list.onclick = (e) => {
    const target = e.target instanceof Element ? e.target : null;
    const item = target && target.closest('li.gb');
    if (!(item instanceof HTMLElement)) return;
    const entry = breaks[Number(item.dataset.break)];
    const chip = target && target.closest('.gb-cid');
    const site = entry && entry.sites[chip instanceof HTMLElement ? Number(chip.dataset.site) : 0];
    if (site) onPick(site);
  };
}
