// The Provenance view (`?view=provenance&cid=[0/0]`, issue 23's "godbolt"): for each Inductor
// compilation that logged provenance, of every compile id, its pre-grad graph, post-grad graph and
// generated code side by side; clicking a line highlights the lines linked to it in the other two.
// The links are provenance.json's (docs/FORMAT.md section 19), decided by tlscope in Python: this
// module only looks them up.

import { queryParam, readState, setTestHook } from '/lib/tlscope.js';
import { el, messageOf } from './dom.js';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').ProvenanceEntry} ProvenanceEntry */
/** @typedef {import('/lib/tlscope.js').RawEvent} RawEvent */

/** @typedef {'pre' | 'post' | 'code'} Pane */
/** A compilation and the trace part (rank folder) whose provenance.json lists it. @typedef {{ entry: ProvenanceEntry, part: number, label: string }} Item */

const PANES = /** @type {Pane[]} */ (['pre', 'post', 'code']);
const TITLES = { pre: 'Pre-grad graph', post: 'Post-grad graph', code: 'Generated code' };

/** The test hook's `provenance`: the compilations listed, the one shown, lines highlighted by the last click. */
const shown = { compileIds: /** @type {string[]} */ ([]), shown: /** @type {string | null} */ (null), linked: 0, ready: false };

/** @param {Partial<typeof shown>} fields */
function report(fields) {
  Object.assign(shown, fields);
  setTestHook({ provenance: { ...shown } });
}

/**
 * Every compilation of every part's provenance.json, labelled `[0/0]`, `[0/0] #2`, `rank 1 [0/0]`.
 * @param {OpenedTrace} trace
 * @returns {Promise<Item[]>}
 */
async function loadItems(trace) {
  const files = await Promise.all(trace.parts.map((p) => p.source.jsonOr('provenance.json', null)));
  /** @type {Item[]} */
  const items = [];
  files.forEach((file, part) => {
    const read = /** @type {{ compilations?: unknown } | null} */ (file && typeof file === 'object' ? file : null);
    const list = read && Array.isArray(read.compilations) ? read.compilations : [];
    const rank = trace.parts[part].rank;
    for (const entry of /** @type {ProvenanceEntry[]} */ (list)) {
      const label = `${rank === null ? '' : `rank ${rank} `}${entry.id}${entry.n > 1 ? ` #${entry.n}` : ''}`;
      items.push({ entry, part, label });
    }
  });
  return items;
}

/**
 * The lines linked to `line` of `pane`, per pane (the clicked pane's own: just that line). Pre-grad
 * and code lines are linked through their post-grad lines.
 * @param {ProvenanceEntry} e
 * @param {Pane} pane
 * @param {number} line
 * @returns {Record<Pane, Set<number>>}
 */
export function linkedLines(e, pane, line) {
  const get = (/** @type {Record<string, number[]>} */ map, /** @type {number} */ n) => map[String(n)] || [];
  const out = { pre: new Set(), post: new Set(), code: new Set() };
  out[pane].add(line);
  const post = pane === 'post' ? [line] : get(pane === 'pre' ? e.pre_to_post : e.code_to_post, line);
  for (const p of post) {
    if (pane !== 'post') out.post.add(p);
    if (pane !== 'pre') for (const n of get(e.post_to_pre, p)) out.pre.add(n);
    if (pane !== 'code') for (const n of get(e.post_to_code, p)) out.code.add(n);
  }
  return /** @type {Record<Pane, Set<number>>} */ (out);
}

/**
 * The lines of one pane's text; lines that have links are marked.
 * @param {Document} doc
 * @param {Pane} pane
 * @param {string} text
 * @param {Record<string, number[]>} links
 */
function paneLines(doc, pane, text, links) {
  const body = el(doc, 'div', 'pv-text');
  body.dataset.pane = pane;
  text.split('\n').forEach((line, i) => {
    const row = el(doc, 'div', String(i + 1) in links ? 'pv-line pv-has' : 'pv-line');
    row.dataset.line = String(i + 1);
    row.append(el(doc, 'span', 'pv-no', String(i + 1)), el(doc, 'span', 'pv-src', line));
    body.appendChild(row);
  });
  return body;
}

/**
 * The texts of a compilation, fetched (an empty text for one not logged).
 * @param {OpenedTrace} trace
 * @param {Item} item
 * @returns {Promise<Record<Pane, string>>}
 */
async function loadTexts(trace, item) {
  const read = async (/** @type {string | null | undefined} */ name) => {
    if (!name) return '';
    const event = /** @type {RawEvent} */ ({ payload_filename: name });
    return (await trace.payload(event, item.part)) ?? '';
  };
  const [pre, post, code] = await Promise.all([read(item.entry.pre), read(item.entry.post), read(item.entry.code)]);
  return { pre, post, code };
}

/**
 * Highlight what is linked to the clicked row; the number of lines highlighted in the other panes.
 * @param {HTMLElement} root
 * @param {ProvenanceEntry} entry
 * @param {HTMLElement} row
 */
function select(root, entry, row) {
  const body = row.closest('.pv-text');
  const pane = /** @type {Pane} */ (body instanceof HTMLElement ? body.dataset.pane : 'post');
  const linked = linkedLines(entry, pane, Number(row.dataset.line));
  let count = 0;
  for (const name of PANES) {
    const text = root.querySelector(`.pv-text[data-pane="${name}"]`);
    if (!(text instanceof HTMLElement)) continue;
    for (const old of text.querySelectorAll('.pv-hl, .pv-sel')) old.classList.remove('pv-hl', 'pv-sel');
    let first = null;
    for (const n of linked[name]) {
      const hit = text.children[n - 1];
      if (!(hit instanceof HTMLElement)) continue;
      hit.classList.add(name === pane ? 'pv-sel' : 'pv-hl');
      if (name !== pane) count += 1;
      first = first || hit;
    }
    if (first && name !== pane) text.scrollTop = Math.max(0, first.offsetTop - text.clientHeight / 3);
  }
  return count;
}

/**
 * One compilation's three panes in `box`.
 * @param {HTMLElement} box
 * @param {OpenedTrace} trace
 * @param {Item} item
 */
async function drawItem(box, trace, item) {
  const doc = box.ownerDocument;
  report({ ready: false, shown: null, linked: 0 });
  box.replaceChildren(el(doc, 'p', 'pv-note muted', `Loading ${item.label}…`));
  const texts = await loadTexts(trace, item);
  const e = item.entry;
  const links = { pre: e.pre_to_post, post: { ...e.post_to_pre, ...e.post_to_code }, code: e.code_to_post };
  const columns = PANES.map((pane) => {
    const col = el(doc, 'div', 'pv-col');
    const lang = pane === 'code' && e.code_language ? ` (${e.code_language})` : '';
    col.append(el(doc, 'div', 'pv-title', `${TITLES[pane]}${lang}`), paneLines(doc, pane, texts[pane], links[pane]));
    return col;
  });
  box.replaceChildren(...columns);
  report({ shown: item.label, linked: 0, ready: true });
}

/**
 * The compilation the URL's `cid=` names (the fragment's, else the query's): its label or compile id.
 * @param {Item[]} items
 */
function itemFromUrl(items) {
  const asked = readState(location.hash).cid || queryParam('cid');
  return Math.max(0, items.findIndex((i) => i.label === asked || i.entry.id === asked));
}

/**
 * Draw the view into `pane`: the compilation picker, then the chosen compilation's panes.
 * @param {HTMLElement} pane
 * @param {OpenedTrace} trace
 */
async function drawProvenance(pane, trace) {
  const doc = pane.ownerDocument;
  report({ ready: false, shown: null, linked: 0 });
  pane.replaceChildren(el(doc, 'p', 'pv-note muted', 'Loading provenance.json…'));
  const items = await loadItems(trace);
  report({ compileIds: items.map((i) => i.label) });
  if (!items.length) {
    pane.replaceChildren(el(doc, 'p', 'pv-note muted', 'No compilation of this trace logged Inductor provenance (inductor_provenance_tracking_node_mappings; the folder may also predate format 1.13).'));
    report({ ready: true });
    return;
  }
  const picker = el(doc, 'select', 'pv-pick');
  picker.id = 'provenance-cid';
  items.forEach((item, i) => picker.appendChild(Object.assign(el(doc, 'option', '', item.label), { value: String(i) })));
  picker.value = String(itemFromUrl(items));
  const head = el(doc, 'div', 'pv-head');
  head.append(el(doc, 'label', '', 'Compilation '), picker, el(doc, 'span', 'muted', `${items.length} with provenance · click a line to see what it became`));
  const box = el(doc, 'div', 'pv-body');
  pane.replaceChildren(el(doc, 'div', 'pv-view'));
  pane.firstElementChild?.append(head, box);
  const current = () => items[Number(picker.value)];
  picker.addEventListener('change', () => void drawItem(box, trace, current()));
  box.addEventListener('click', (ev) => {
    const row = ev.target instanceof Element ? ev.target.closest('.pv-line') : null;
    if (row instanceof HTMLElement && shown.ready) report({ linked: select(box, current().entry, row) });
  });
  await drawItem(box, trace, current());
}

/**
 * The Provenance view as the views bar lists it.
 * @param {OpenedTrace} trace
 */
export function createProvenanceView(trace) {
  const draw = (/** @type {HTMLElement} */ pane) => drawProvenance(pane, trace).catch((err) => {
    pane.replaceChildren(el(pane.ownerDocument, 'p', 'pv-note error', `Could not show provenance: ${messageOf(err)}`));
    report({ ready: true });
  });
  return { def: { name: 'provenance', label: 'Provenance', draw: (/** @type {HTMLElement} */ pane) => void draw(pane) } };
}
