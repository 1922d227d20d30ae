// The Graph view (`?view=graph&event=N`): one FX graph payload's graphs/<md5>.json (docs/FORMAT.md
// section 18) as a virtualised table: inputs, then one row per node with its op, its call (every
// argument a link to its definition), shape and dtype inline, its users and its user line (a link
// to the source with --source-url). Filter by op and target, search, fold by user line or by
// nn.Module; the selected node's definition, users and line beside the table, and the module
// hierarchy as a tree when the graph names modules. The rows are graphrows.js's; text goes in
// with textContent only.

import { VirtualList, compileIdOf, eventLabel, setTestHook } from '/lib/tlscope.js';
import { el, messageOf, setText } from './dom.js';
import { graphEntries, graphRows, metaText, sourceHref, sourceText } from './graphrows.js';
import { afterPaint, eventBeforeLoad } from './graphfirst.js';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').RemoteTrace} RemoteTrace */
/** @typedef {import('/lib/tlscope.js').RawEvent} RawEvent */
/** @typedef {import('/lib/tlscope.js').StoredGraph} StoredGraph */
/** @typedef {import('/lib/tlscope.js').GraphFile} GraphFile */
/** @typedef {import('./graphrows.js').Entry} Entry */
/** @typedef {import('./graphrows.js').Row} Row */
/** @typedef {import('./graphrows.js').GraphFilter} GraphFilter */

const ROW_HEIGHT = 22;
/** Arguments drawn as links in a row (the rest are in the side pane's "Reads"). */
const ROW_ARGS = 12;

/**
 * A pooled row element, with the row (and the version of the rows) it last drew.
 * @typedef {HTMLElement & { shownRow?: number, shownVersion?: number }} GraphRow
 */

/**
 * The graph shown and the event it came from.
 * @typedef {{ event: RawEvent, part: number }} GraphTarget
 */

/**
 * Where the user lines link to (`--source-url`): an http(s) URL, and the local path prefix of the files.
 * @typedef {{ base: string | null, root: string }} SourceLink
 */

/**
 * The view's state, once its graph is in.
 * @typedef {object} GraphState
 * @property {Document} doc
 * @property {StoredGraph} root the file's graph
 * @property {StoredGraph} graph the (sub)graph shown
 * @property {Entry[]} entries
 * @property {Map<string, number>} byName
 * @property {GraphFilter} filter
 * @property {Set<string>} open the folds shown open
 * @property {Row[]} rows
 * @property {Map<number, string>} folds
 * @property {number} selected an entry's index, -1 for none
 * @property {number} version bumped on every change of the rows (a pooled row redraws)
 * @property {SourceLink} link
 * @property {VirtualList} list
 * @property {HTMLElement} side
 * @property {HTMLElement | null} hovered the row under the pointer (its call drawn with links)
 */

/**
 * Rebuild the rows from the filter and folds; the list, the side and the test hook follow.
 * @param {GraphState} s
 */
function refresh(s) {
  const { rows, folds } = graphRows(s.entries, s.filter, s.open);
  s.rows = rows;
  s.folds = folds;
  s.version += 1;
  s.list.setCount(rows.length);
  const shown = [];
  for (const r of rows) if (r.kind === 'entry') shown.push(s.entries[r.index].name);
  setTestHook({ graphNodes: shown, graphFolds: rows.filter((r) => r.kind === 'group').map((r) => (r.kind === 'group' ? { label: r.label, size: r.size, open: r.open } : null)) });
}

/**
 * Select entry `name`'s row (its definition): clear a filter hiding it, open the fold holding it,
 * scroll it into view and show it beside the table.
 * @param {GraphState} s
 * @param {string} name
 */
function jump(s, name) {
  const index = s.byName.get(name);
  if (index === undefined) return;
  let row = s.rows.findIndex((r) => r.kind === 'entry' && r.index === index);
  if (row < 0) {
    if (!s.folds.has(index)) s.filter = { ...s.filter, op: '', target: '', q: '' };
    refresh(s);
    const fold = s.folds.get(index);
    if (fold) s.open.add(fold);
    refresh(s);
    syncControls(s);
    row = s.rows.findIndex((r) => r.kind === 'entry' && r.index === index);
  }
  select(s, index);
  if (row >= 0) s.list.scrollToIndex(row, 'center');
}

/**
 * @param {GraphState} s
 * @param {number} index
 */
function select(s, index) {
  s.selected = index;
  s.version += 1;
  s.list.draw();
  drawSide(s);
  const e = s.entries[index];
  setTestHook({ graphSelected: e ? { name: e.name, op: e.op, target: e.target, args: e.args, users: e.users, shape: metaText(e.meta) } : null });
}

/**
 * A name that jumps to its definition.
 * @param {Document} doc
 * @param {string} name
 */
function nameLink(doc, name) {
  // A span, not a button: a screen of rows holds hundreds of them, and a form control's box
  // costs more to lay out each frame while scrolling (the table's clicks are delegated).
  const a = el(doc, 'span', 'g-ref', name);
  a.dataset.jump = name;
  a.setAttribute('role', 'link');
  return a;
}

/**
 * A pooled row's cells, made once and refilled as the list scrolls.
 * @param {Document} doc
 * @returns {HTMLElement}
 */
function createRow(doc) {
  const row = el(doc, 'div', 'g-row');
  const name = nameLink(doc, '');
  name.classList.add('g-name');
  row.append(el(doc, 'span', 'g-line'), name, el(doc, 'span', 'g-op'), el(doc, 'span', 'g-meta'), el(doc, 'span', 'g-call'), el(doc, 'span', 'g-users'), el(doc, 'span', 'g-src'));
  return row;
}

/**
 * The call as one line of text: `target(a, b, …)`, its first ROW_ARGS arguments (the row's width
 * holds a few; the side lists every one).
 * @param {Entry} e
 */
function callText(e) {
  if (e.op === 'input') return e.module !== null ? `input · ${e.module || 'self'}` : 'input';
  const more = e.args.length > ROW_ARGS ? `, … ${e.args.length - ROW_ARGS} more` : '';
  return `${e.target}(${e.args.slice(0, ROW_ARGS).join(', ')}${more})`;
}

/**
 * The row under the pointer: its call's arguments as links to their definitions, its user line's
 * full text as a tooltip. Only that row holds them: a screen of rows drawn with an element per
 * argument cost the scroll 4x the layout of plain text (bench/README.md, session 8), and a
 * pointer reaches one row at a time.
 * @param {Document} doc
 * @param {HTMLElement} row
 * @param {Entry} e
 */
function linkRow(doc, row, e) {
  const [call, src] = [row.children[4], row.children[6]];
  if (e.source) src.setAttribute('title', `${e.source.file}:${e.source.line} in ${e.source.function}: ${e.source.code}`);
  if (e.op === 'input') return;
  const parts = [el(doc, 'span', 'g-target', e.target), doc.createTextNode('(')];
  e.args.slice(0, ROW_ARGS).forEach((arg, i) => {
    if (i) parts.push(doc.createTextNode(', '));
    parts.push(nameLink(doc, arg));
  });
  parts.push(doc.createTextNode(e.args.length > ROW_ARGS ? `, … ${e.args.length - ROW_ARGS} more)` : ')'));
  call.replaceChildren(...parts);
}

/**
 * The texts of an entry's row, made once (a scrolled frame builds no strings, so leaves the
 * garbage collector less to do).
 * @param {Entry} e
 * @returns {string[]}
 */
function cellsOf(e) {
  if (!e.cells) {
    const src = e.source ? sourceText(e.source) : e.module ?? '';
    e.cells = [e.line ? String(e.line) : '', e.name, e.op, metaText(e.meta), callText(e), e.output ? `${e.users.length} → out` : String(e.users.length), src];
  }
  return e.cells;
}

/**
 * Fill a pooled row with entry `e`: one text node a cell, changed in place (setText).
 * @param {HTMLElement} row
 * @param {Entry} e
 */
function renderEntry(row, e) {
  if (row.children.length !== 7) row.replaceChildren(...createRow(row.ownerDocument).childNodes);
  const cells = row.children;
  const texts = cellsOf(e);
  for (let k = 0; k < 7; k += 1) setText(cells[k], texts[k]);
  /** @type {HTMLElement} */ (cells[1]).dataset.jump = e.name;
  cells[4].classList.toggle('muted', e.op === 'input');
  if (cells[6].hasAttribute('title')) cells[6].removeAttribute('title');
}

/**
 * @param {GraphState} s
 * @param {HTMLElement} row
 * @param {number} i
 */
function renderRow(s, row, i) {
  const r = s.rows[i];
  const shown = /** @type {GraphRow} */ (row);
  if (!r || (shown.shownRow === i && shown.shownVersion === s.version)) return;
  // Kept as properties, not data- attributes: a scrolled frame then writes no attribute a row.
  shown.shownRow = i;
  shown.shownVersion = s.version;
  if (r.kind === 'group') {
    row.className = 'g-row g-fold';
    row.dataset.fold = r.id;
    row.replaceChildren(el(s.doc, 'span', 'g-twist', r.open ? '▾' : '▸'), el(s.doc, 'span', 'g-fold-label', r.label), el(s.doc, 'span', 'muted', `${r.size} node${r.size === 1 ? '' : 's'}`));
    return;
  }
  if (row.classList.contains('g-fold')) row.classList.remove('g-fold');
  row.classList.toggle('on', r.index === s.selected);
  delete row.dataset.fold;
  renderEntry(row, s.entries[r.index]);
  if (row === s.hovered) linkRow(s.doc, row, s.entries[r.index]);
}

/**
 * The pointer is over `row` (or none): its call gets its argument links, the row it left goes
 * back to text.
 * @param {GraphState} s
 * @param {HTMLElement | null} row
 */
function hover(s, row) {
  if (row === s.hovered) return;
  const left = s.hovered;
  s.hovered = row;
  for (const r of [left, row]) {
    if (!r) continue;
    /** @type {GraphRow} */ (r).shownVersion = -1; // redrawn below, as text or with links
    renderRow(s, r, s.list.first + s.list.pool.indexOf(r));
  }
}

/**
 * The selected entry beside the table: what defines it, what it reads, who reads it, where it came from.
 * @param {GraphState} s
 */
function drawSide(s) {
  const doc = s.doc;
  const e = s.entries[s.selected];
  const box = el(doc, 'div', 'g-def');
  if (!e) {
    box.appendChild(el(doc, 'p', 'muted', 'Click a name to see its definition and its users.'));
  } else {
    box.appendChild(el(doc, 'h3', 'g-def-name', e.names.join(', ')));
    box.appendChild(el(doc, 'div', 'g-def-op', e.op === 'input' ? 'input of forward' : `${e.op} ${e.target}`));
    if (e.meta) box.appendChild(el(doc, 'div', 'g-def-meta', e.meta.text));
    box.appendChild(refList(doc, 'Reads', e.args, 'g-args'));
    box.appendChild(refList(doc, e.output ? 'Users (and the graph\'s output)' : 'Users', e.users, 'g-user-list'));
    if (e.module !== null) box.appendChild(el(doc, 'div', 'g-def-module', `module: ${e.module || '(the compiled module)'}`));
    if (e.source) box.appendChild(sourceLine(doc, s.link, e.source));
  }
  const tree = moduleTree(doc, s.entries);
  s.side.replaceChildren(box, ...(tree ? [tree] : []));
}

/**
 * @param {Document} doc
 * @param {string} label
 * @param {string[]} names
 * @param {string} cls
 */
function refList(doc, label, names, cls) {
  const div = el(doc, 'div', cls);
  div.appendChild(el(doc, 'span', 'muted', `${label} (${names.length}): `));
  const unique = [...new Set(names)];
  unique.slice(0, 200).forEach((n) => div.append(nameLink(doc, n), ' '));
  if (unique.length > 200) div.appendChild(el(doc, 'span', 'muted', `… ${unique.length - 200} more`));
  return div;
}

/**
 * The user line, linked to the source when --source-url says where it is.
 * @param {Document} doc
 * @param {SourceLink} link
 * @param {import('/lib/tlscope.js').FxSource} source
 */
function sourceLine(doc, link, source) {
  const div = el(doc, 'div', 'g-def-src');
  const href = sourceHref(link.base, link.root, source);
  const where = `${source.file}:${source.line} in ${source.function}`;
  if (href) {
    const a = el(doc, 'a', 'g-src-link', where);
    a.href = href;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    div.appendChild(a);
  } else div.appendChild(el(doc, 'span', 'g-src-where', where));
  div.appendChild(el(doc, 'pre', 'g-src-code', source.code));
  return div;
}

/**
 * The nn.Module hierarchy named by the graph (its parameters' modules) as a nested list, each
 * module with the entries that read its parameters; null when the graph names none.
 * @param {Document} doc
 * @param {Entry[]} entries
 * @returns {HTMLElement | null}
 */
function moduleTree(doc, entries) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const e of entries) if (e.module !== null) counts.set(e.module, (counts.get(e.module) || 0) + 1);
  if (!counts.size) return null;
  /** @typedef {{ children: Map<string, Tree>, path: string }} Tree */
  /** @type {Tree} */
  const top = { children: new Map(), path: '' };
  for (const path of counts.keys()) {
    let at = top;
    for (const [i, part] of (path ? path.split('.') : []).entries()) {
      const sub = at.children.get(part) || { children: new Map(), path: path.split('.').slice(0, i + 1).join('.') };
      at.children.set(part, sub);
      at = sub;
    }
  }
  /** @param {Tree} t @param {string} label */
  const item = (t, label) => {
    const li = el(doc, 'li', 'g-mod');
    const n = counts.get(t.path);
    const button = el(doc, 'button', 'g-mod-name', n ? `${label} (${n})` : label);
    button.type = 'button';
    button.dataset.module = t.path;
    li.appendChild(button);
    if (t.children.size) li.appendChild(el(doc, 'ul', 'g-mod-list')).append(...[...t.children].map(([k, c]) => item(c, k)));
    return li;
  };
  const box = el(doc, 'div', 'g-modules');
  box.appendChild(el(doc, 'h3', '', 'Module hierarchy'));
  box.appendChild(el(doc, 'ul', 'g-mod-list')).appendChild(item(top, 'self'));
  setTestHook({ graphModules: [...counts.keys()].sort() });
  return box;
}

/**
 * @param {Document} doc
 * @param {string} cls
 * @param {string} placeholder
 */
function textInput(doc, cls, placeholder) {
  const input = el(doc, 'input', cls);
  input.type = 'search';
  input.placeholder = placeholder;
  input.setAttribute('aria-label', placeholder);
  return input;
}

/**
 * The filter controls above the table (op, target, search, fold, subgraph), wired to `s`.
 * @param {GraphState} s
 * @returns {HTMLElement}
 */
function controls(s) {
  const doc = s.doc;
  const bar = el(doc, 'div', 'g-controls');
  const op = el(doc, 'select', 'g-f-op');
  op.setAttribute('aria-label', 'Op');
  const ops = [...new Set(s.entries.map((e) => e.op))].sort();
  op.append(new Option('all ops', ''), ...ops.map((o) => new Option(o, o)));
  const target = textInput(doc, 'g-f-target', 'target contains…');
  const q = textInput(doc, 'g-f-q', 'search names, shapes, lines…');
  const fold = el(doc, 'select', 'g-f-fold');
  fold.setAttribute('aria-label', 'Fold');
  fold.append(new Option('no folding', 'none'), new Option('fold by user line', 'source'), new Option('fold by module', 'module'));
  const expand = el(doc, 'button', 'g-expand', 'Open all');
  const collapse = el(doc, 'button', 'g-collapse', 'Close all');
  const apply = () => {
    s.filter = { op: op.value, target: target.value.trim(), q: q.value.trim(), fold: /** @type {GraphFilter['fold']} */ (fold.value) };
    refresh(s);
  };
  op.addEventListener('change', apply);
  target.addEventListener('input', apply);
  q.addEventListener('input', apply);
  fold.addEventListener('change', () => {
    s.open.clear();
    apply();
  });
  expand.addEventListener('click', () => {
    for (const r of s.rows) if (r.kind === 'group') s.open.add(r.id);
    refresh(s);
  });
  collapse.addEventListener('click', () => {
    s.open.clear();
    refresh(s);
  });
  bar.append(op, target, q, fold, expand, collapse);
  return bar;
}

/**
 * The controls show the filter (after a jump cleared it).
 * @param {GraphState} s
 */
function syncControls(s) {
  const root = s.list.container.closest('.g-view');
  if (!root) return;
  const set = (/** @type {string} */ sel, /** @type {string} */ value) => {
    const node = root.querySelector(sel);
    if (node instanceof HTMLInputElement || node instanceof HTMLSelectElement) node.value = value;
  };
  set('.g-f-op', s.filter.op);
  set('.g-f-target', s.filter.target);
  set('.g-f-q', s.filter.q);
}

/**
 * Clicks in the table: a name jumps to its definition, a fold opens or closes, a row selects.
 * @param {GraphState} s
 * @param {HTMLElement} table
 */
function wireTable(s, table) {
  table.addEventListener('mouseover', (event) => {
    const row = event.target instanceof Element ? event.target.closest('.g-row') : null;
    hover(s, row instanceof HTMLElement ? row : null);
  });
  table.addEventListener('mouseleave', () => hover(s, null));
  table.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const ref = target && target.closest('[data-jump]');
    if (ref instanceof HTMLElement && ref.dataset.jump) return jump(s, ref.dataset.jump);
    const row = target && target.closest('.g-row');
    if (!(row instanceof HTMLElement)) return undefined;
    if (row.dataset.fold) {
      const id = row.dataset.fold;
      if (s.open.has(id)) s.open.delete(id);
      else s.open.add(id);
      return refresh(s);
    }
    const r = s.rows[/** @type {GraphRow} */ (row).shownRow ?? -1];
    if (r && r.kind === 'entry') select(s, r.index);
    return undefined;
  });
}

/**
 * The graphs a file holds: its own and its nested ones (DDP submodules, higher-order-op bodies), by path.
 * @param {StoredGraph} graph
 * @param {string} [prefix]
 * @returns {Array<[string, StoredGraph]>}
 */
function allGraphs(graph, prefix = '') {
  /** @type {Array<[string, StoredGraph]>} */
  const out = [[prefix || graph.name, graph]];
  for (const [name, sub] of Object.entries(graph.subgraphs || {})) out.push(...allGraphs(sub, prefix ? `${prefix}.${name}` : name));
  return out;
}

/**
 * Show graph `graph` (the file's own or a nested one) in the view.
 * @param {GraphState} s
 * @param {StoredGraph} graph
 */
function showGraph(s, graph) {
  const { entries, byName } = graphEntries(graph);
  Object.assign(s, { graph, entries, byName, selected: -1 });
  s.open.clear();
  refresh(s);
  drawSide(s);
}

/**
 * The view's frame: title, subgraph picker, controls, the table and the side pane.
 * @param {HTMLElement} pane
 * @param {StoredGraph} root
 * @param {string} title
 * @param {SourceLink} link
 * @returns {GraphState}
 */
function buildView(pane, root, title, link) {
  const doc = pane.ownerDocument;
  const view = el(doc, 'div', 'g-view');
  const head = el(doc, 'div', 'g-head');
  head.appendChild(el(doc, 'strong', 'g-title', title));
  const table = el(doc, 'div', 'g-table');
  table.setAttribute('role', 'grid');
  table.setAttribute('aria-label', 'Graph nodes');
  const side = el(doc, 'aside', 'g-side');
  const body = el(doc, 'div', 'g-body');
  body.append(table, side);
  view.append(head, body);
  pane.replaceChildren(view);
  /** @type {GraphState} */
  const s = /** @type {GraphState} */ (/** @type {unknown} */ ({ doc, root, graph: root, entries: [], byName: new Map(), filter: { op: '', target: '', q: '', fold: 'none' }, open: new Set(), rows: [], folds: new Map(), selected: -1, version: 0, link, side, hovered: null }));
  s.list = new VirtualList(table, { rowHeight: ROW_HEIGHT, createRow: () => createRow(doc), renderRow: (row, i) => renderRow(s, row, i) });
  showGraph(s, root);
  const graphs = allGraphs(root);
  if (graphs.length > 1) {
    const pick = el(doc, 'select', 'g-f-graph');
    pick.setAttribute('aria-label', 'Graph');
    pick.append(...graphs.map(([name], i) => new Option(name, String(i))));
    pick.addEventListener('change', () => showGraph(s, graphs[Number(pick.value)][1]));
    head.appendChild(pick);
  }
  head.appendChild(el(doc, 'span', 'muted g-counts', `${root.inputs.length} inputs · ${root.nodes.length} nodes · returns ${root.outputs.length}`));
  view.insertBefore(controls(s), body);
  wireTable(s, table);
  side.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('[data-jump], [data-module]') : null;
    if (!(target instanceof HTMLElement)) return;
    if (target.dataset.jump) jump(s, target.dataset.jump);
    else if (target.dataset.module !== undefined) moduleFilter(s, target.dataset.module);
  });
  return s;
}

/**
 * Fold by module and open the module's folds (a module picked in the tree).
 * @param {GraphState} s
 * @param {string} module
 */
function moduleFilter(s, module) {
  s.filter = { ...s.filter, fold: 'module' };
  const root = s.list.container.closest('.g-view');
  const fold = root && root.querySelector('.g-f-fold');
  if (fold instanceof HTMLSelectElement) fold.value = 'module';
  s.open.clear();
  refresh(s);
  for (const r of s.rows) if (r.kind === 'group' && r.id.startsWith(`${module}@`)) s.open.add(r.id);
  refresh(s);
  const first = s.rows.findIndex((r) => r.kind === 'group' && r.id.startsWith(`${module}@`));
  if (first >= 0) s.list.scrollToIndex(first, 'top');
}

/**
 * Draw the Graph view of `target`'s payload into `pane` (or say why there is none).
 * @param {HTMLElement} pane
 * @param {OpenedTrace} trace
 * @param {GraphTarget | null} target
 * @param {SourceLink} link
 * @param {Map<string, Promise<GraphFile | null>>} [files] fetched before, by payload name
 * @returns {Promise<GraphState | null>}
 */
export async function drawGraph(pane, trace, target, link, files = new Map()) {
  const doc = pane.ownerDocument;
  const started = performance.now();
  setTestHook({ graphNodes: [], graphReady: false, graphError: null });
  const say = (/** @type {string} */ text, cls = 'muted') => {
    pane.replaceChildren(el(doc, 'p', `g-note ${cls}`, text));
    setTestHook({ graphReady: true, graphError: text });
    return null;
  };
  if (!target) return say('Open an FX graph from an event\'s Payload tab (“Graph view”), or name it in the URL: ?view=graph&event=N.');
  pane.replaceChildren(el(doc, 'p', 'g-note muted', `Loading the graph of ${target.event.payload_filename ?? 'this event'}…`));
  let file;
  const key = `${target.part}:${target.event.payload_filename}`;
  try {
    if (!files.has(key)) files.set(key, trace.graph(target.event, target.part));
    file = await files.get(key);
  } catch (err) {
    files.delete(key);
    return say(`Could not load the graph: ${messageOf(err)}`, 'error');
  }
  if (!file) return say('This event\'s payload is no FX graph (or the trace was written before format 1.11: parse it again).');
  if (!file.graph) return say(`tlscope could not read this payload as a graph: ${file.failure || 'no reason given'}. Its text is in the Payload tab.`, 'error');
  const title = `${compileIdOf(target.event)} ${eventLabel(target.event)} · log line ${target.event.log_line ?? '?'} · ${file.graph.name}`;
  const s = buildView(pane, file.graph, title, link);
  setTestHook({ graphReady: true, graphShownMs: performance.now() - started, graphRows: s.rows.length });
  return s;
}

/** A payload printing an FX graph: a `class <name>(torch.nn.Module):` line (FORMAT.md section 18). */
const GRAPH_CLASS = /^[ \t]*class [^\s(]+\(torch\.nn\.Module\):[ \t]*$/m;

/**
 * Whether a payload's text prints an FX graph (its graphs file is then worth a link).
 * @param {string} text
 */
export function printsGraph(text) {
  return text.includes('(torch.nn.Module):') && GRAPH_CLASS.test(text);
}

/**
 * `--source-url` as the page gets it: a packed page's (`tlscope pack --source-url`), else the
 * query's `source_url` (`tlscope serve --source-url` adds it to the viewer links) and
 * `source_root`; http(s) only.
 * @param {{ source_url?: string, source_root?: string } | null} [packed]
 * @returns {SourceLink}
 */
export function sourceLinkFromUrl(packed = null) {
  const params = new URL(location.href).searchParams;
  const base = packed && packed.source_url ? packed.source_url : params.get('source_url');
  const root = packed && packed.source_url ? packed.source_root || '' : params.get('source_root') || '';
  return { base: base && /^https?:\/\//i.test(base) ? base : null, root };
}

/**
 * The event named by the URL's `event=N` (the fragment's, else the query's): the trace's N-th
 * event (0-based, ranks one after another, as the unfiltered table lists them), held in the tab
 * or asked of the events API when the trace is paged from the server; null when there is none.
 * @param {OpenedTrace} trace
 * @param {number} n
 * @param {() => void} release lets the trace's loader go (held until the graph is drawn)
 * @returns {Promise<GraphTarget | null>}
 */
async function eventAt(trace, n, release) {
  if (!Number.isInteger(n) || n < 0) return null;
  if (trace.mode === 'remote') return remoteEventAt(trace, n);
  const events = trace.events;
  if (n >= events.loadedEvents && !trace.complete) {
    // Not in yet (a cold link: the loader waits for this graph, graphfirst.js): read it alone.
    const early = await eventBeforeLoad(trace, n);
    if (early) return early;
    release();
    await trace.loaded;
  }
  if (n >= events.loadedEvents) return null;
  let event = events.event(n);
  if (event === undefined) {
    await events.loadBlock(events.lines.blockOf[n]).catch(() => {}); // its bytes were dropped: read again
    event = events.event(n);
  }
  return event ? { event, part: events.partOfLine(n) } : null;
}

/**
 * Event N of a trace paged from `tlscope serve`: one row of the events API with no filter (its
 * order is the unfiltered table's: raw.jsonl's, ranks one after another, docs/SERVER.md), whatever
 * the table shows now and whichever page it has; null when the API has no such row or fails.
 * @param {RemoteTrace} trace
 * @param {number} n
 * @returns {Promise<GraphTarget | null>}
 */
async function remoteEventAt(trace, n) {
  const events = trace.events;
  try {
    const response = await events.fetch(`${events.api}?${new URLSearchParams({ offset: String(n), limit: '1' })}`);
    if (!response.ok) return null;
    /** @type {{ events?: RawEvent[] }} */
    const body = await response.json();
    const event = body && Array.isArray(body.events) ? body.events[0] : undefined;
    return event ? { event, part: trace.partOfRank(event.rank ?? undefined) } : null;
  } catch {
    return null;
  }
}

/**
 * The Graph view as the views bar lists it, and how the rest of the page opens a graph in it.
 * `named()` reads the URL's `event=`; `open(event, part, n)` is the Payload tab's link.
 * @param {OpenedTrace} trace
 * @param {() => number | null} named
 * @param {SourceLink} [link] where user lines link to
 * @param {() => void} [release] called once the first graph is painted (or cannot be): the page's
 *   loader of the trace's events, held for a cold `?view=graph&event=N` (graphfirst.js), goes on
 */
export function createGraphView(trace, named, link = sourceLinkFromUrl(), release = () => {}) {
  /** @type {{ target: Promise<GraphTarget | null>, n: number | null, token: number, opened: boolean, drawn: boolean }} */
  const state = { target: Promise.resolve(null), n: null, token: 0, opened: false, drawn: false };
  /** @type {Map<string, Promise<GraphFile | null>>} graphs files fetched, by payload name (a redraw fetches none again) */
  const files = new Map();
  const draw = async (/** @type {HTMLElement} */ pane) => {
    const token = (state.token += 1);
    const asked = named();
    // Opened from a Payload tab: the URL names the event only once the view is shown. The event
    // is asked once (kept as a promise): a redraw while it comes waits for the same answer.
    if (!state.opened && asked !== null && asked !== state.n) Object.assign(state, { n: asked, target: eventAt(trace, asked, release) });
    state.opened = false;
    try {
      const target = await state.target;
      const shown = token === state.token ? await drawGraph(pane, trace, target, link, files) : null;
      // The page's first graph: when, and the table's events in by then (0 for a cold link, graphfirst.js).
      if (shown && !state.drawn) setTestHook({ graphFirst: { at: performance.now(), eventsLoaded: trace.events.loadedEvents } });
      state.drawn = state.drawn || Boolean(shown);
      await afterPaint();
    } finally {
      // Only the latest draw lets the loader go (an earlier one ends first, its graph not drawn).
      if (token === state.token) release();
    }
  };
  return {
    // keep: the graph is its graphs file's, whatever compiles.json says (a redraw would rebuild
    // thousands of rows and lose the scroll and selection).
    def: { name: 'graph', label: 'Graph', keep: true, draw: (/** @type {HTMLElement} */ pane) => void draw(pane) },
    /**
     * @param {RawEvent} event
     * @param {number} part
     * @param {number | null} n the event's index in the trace (null: not known, paged from the server)
     */
    open(event, part, n) {
      Object.assign(state, { target: Promise.resolve({ event, part }), n, opened: true });
    },
    /** The event shown, as the URL names it. */
    get event() {
      return state.n;
    },
  };
}

/**
 * The Payload tab's link to the Graph view, above a payload that prints a graph.
 * @param {HTMLElement} body the Payload tab
 * @param {() => void} onOpen
 */
export function addGraphLink(body, onOpen) {
  const doc = body.ownerDocument;
  const bar = el(doc, 'div', 'g-open');
  const button = el(doc, 'button', 'g-open-button', 'Graph view');
  button.type = 'button';
  button.title = 'This payload as a table of nodes: shapes inline, definitions and users one click away';
  button.addEventListener('click', onOpen);
  bar.append(button, el(doc, 'span', 'muted', ' nodes, shapes, def/use, folds by user line and module'));
  body.prepend(bar);
}
