// The sidebar's "Graph breaks" tab: compiles.json's distinct graph breaks (docs/FORMAT.md
// section 14), most frequent first: the reason, where in the user's code (file:line, function,
// the source line), how many times and under which compile ids. A compile id leads to its
// dynamo_graph_break_reason event in the table (whose payload holds the full reason and the
// user's traceback). Text goes in with textContent.

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
 * Draw `trace.graphBreaks` into `list`; `onPick(site)` when the user picks a break (its first
 * site) or one of its compile ids. Returns what the test hook shows of them.
 * @param {HTMLElement} list
 * @param {OpenedTrace} trace
 * @param {{ onPick: (site: Site) => void }} options
 */
export function drawBreaks(list, trace, { onPick }) {
  const doc = list.ownerDocument;
  list.replaceChildren();
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
  return breaks.map((b) => ({ reason: b.reason, file: b.file, line: b.line, count: b.count, compileIds: b.sites.map((s) => s.cid), ranks: b.ranks }));
}
