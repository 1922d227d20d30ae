// The Recompiles view (`?view=recompiles`): every recompile of the trace on one screen, one row per
// compiles.json entry that has a `recompile` (per rank in a multi-rank job), in compile order: the
// compile id, the function, why it recompiled (the guard failure tlscope recommends showing first,
// `recompile.recommended`, and its `why`), what changed in the inputs (`recompile.changes`), and
// what to change: tlscope's fix for a size recompile (`recompile.fix`: e.g. mark_dynamic, where),
// and beside it what torch itself said, when logged: the compile's failure (e.g. the recompile
// limit) with its fix hints, and those of its graph breaks. Picking a row opens that compile.
// Everything shown is compiles.json's (docs/FORMAT.md section 14); text goes in with textContent.

import { compiledFunctionName, describeCompile, frameText, isObject } from '/lib/tlscope.js';
import { el } from './dom.js';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').CompileRecord} CompileRecord */
/** @typedef {import('/lib/tlscope.js').RecompileView} RecompileView */
/** @typedef {import('/lib/tlscope.js').FailureView} FailureView */

/**
 * One recompile as the view lists it.
 * @typedef {object} RecompileRow
 * @property {string} id
 * @property {number | null} rank null for a single log
 * @property {string} fn the compiled function's name ('?' when not logged)
 * @property {string | null} where the function's file:line
 * @property {RecompileView} recompile
 * @property {FailureView | null} failure
 * @property {string[]} hints torch's fix hints of the compile's failure and graph breaks (and their docs pages)
 * @property {{ code: string, where: string | null, line: string | null, why: string } | null} fix tlscope's fix (`recompile.fix`): the call, where (file:line in fn) and its source line
 */

/**
 * torch's fix hints and docs pages of an entry's failure and graph breaks, each once.
 * @param {CompileRecord} entry
 * @returns {string[]}
 */
function hintsOf(entry) {
  /** @type {string[]} */
  const out = [];
  const breaks = Array.isArray(entry.graph_breaks) ? entry.graph_breaks : [];
  for (const b of [entry.failure, ...breaks]) {
    if (!isObject(b)) continue;
    const found = [...(Array.isArray(b.hints) ? b.hints : []), b.docs_url];
    for (const h of found) if (typeof h === 'string' && h && !out.includes(h)) out.push(h);
  }
  return out;
}

/**
 * A size recompile's fix as tlscope wrote it (`recompile.fix`, since format 1.10), or null.
 * @param {CompileRecord} entry
 * @returns {RecompileRow['fix']}
 */
function fixOf(entry) {
  const fix = isObject(entry.recompile) && isObject(entry.recompile.fix) ? entry.recompile.fix : null;
  if (!fix || typeof fix.code !== 'string') return null;
  const line = isObject(fix.where) && typeof fix.where.code === 'string' ? fix.where.code : null;
  return { code: fix.code, where: frameText(fix.where), line, why: typeof fix.why === 'string' ? fix.why : '' };
}

/**
 * @param {CompileRecord} entry
 * @param {number | null} rank
 * @returns {RecompileRow | null}
 */
function rowOf(entry, rank) {
  const view = describeCompile(entry);
  if (!view.recompile) return null;
  const name = compiledFunctionName(entry) || '?';
  const where = view.function && view.function.startsWith(`${name} at `) ? view.function.slice(name.length + 4) : null;
  return { id: view.id, rank, fn: name, where, recompile: view.recompile, failure: view.failure, hints: hintsOf(entry), fix: fixOf(entry) };
}

/**
 * Every recompile of the trace: compiles.json's entries with a `recompile`, in compile order,
 * each rank's own entry in a multi-rank job (ranks ascending).
 * @param {OpenedTrace} trace
 * @returns {RecompileRow[]}
 */
export function recompileRows(trace) {
  /** @type {RecompileRow[]} */
  const rows = [];
  for (const id of trace.compileIds) {
    const merged = trace.compiles.get(id);
    if (!merged) continue;
    const perRank = trace.multiRank ? Object.entries(merged.byRank || {}) : [];
    const entries = perRank.length ? perRank.map(([r, e]) => /** @type {const} */ ([Number(r), e])) : [/** @type {const} */ ([null, merged])];
    for (const [rank, entry] of entries.sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0))) {
      const row = rowOf(entry, rank);
      if (row) rows.push(row);
    }
  }
  return rows;
}

/**
 * The "why" cell: the recommended guard failure (kind, explanation, the user's line of the guard)
 * and why tlscope shows that one first.
 * @param {Document} doc
 * @param {RecompileView} rec
 */
function whyCell(doc, rec) {
  const td = el(doc, 'td', 'rc-why');
  const best = rec.recommended;
  if (!best) {
    td.appendChild(el(doc, 'div', 'rc-expl', rec.reason || 'no guard failure logged'));
    return td;
  }
  const head = el(doc, 'div', 'rc-head');
  head.append(el(doc, 'span', 'badge cp-kind', best.kind), el(doc, 'span', 'rc-expl', best.explanation));
  td.appendChild(head);
  if (best.where) {
    // The guard's user line, its file by name (the whole path in the title).
    const where = best.where.slice(best.where.lastIndexOf('/') + 1);
    const loc = el(doc, 'div', 'rc-loc', best.code ? `${where}: ${best.code}` : where);
    loc.title = best.where;
    td.appendChild(loc);
  }
  const why = best.cacheEntry ? `cache entry ${best.cacheEntry}: ${best.why}` : best.why;
  if (why) td.appendChild(el(doc, 'div', 'muted rc-because', why));
  return td;
}

/**
 * @param {Document} doc
 * @param {RecompileView} rec
 */
function changesCell(doc, rec) {
  const td = el(doc, 'td', 'rc-changes');
  if (!rec.changes.length) td.appendChild(el(doc, 'span', 'muted', 'no input change logged'));
  for (const c of rec.changes) td.appendChild(el(doc, 'div', 'rc-change', `${c.input} ${c.what}: ${c.before} → ${c.after}`));
  return td;
}

/**
 * What to change, under what changed: tlscope's fix, then torch's failure and hints.
 * @param {Document} doc
 * @param {HTMLElement} td
 * @param {RecompileRow} row
 */
function appendToChange(doc, td, row) {
  if (row.fix) {
    const fix = el(doc, 'div', 'rc-fix');
    fix.append(el(doc, 'code', 'rc-fix-code', row.fix.code));
    // The file's name and line (the whole place, its source line and why, in the title): compact.
    const where = row.fix.where;
    if (where) fix.append(el(doc, 'div', 'muted rc-loc', `before ${where.slice(where.lastIndexOf('/') + 1)}`));
    fix.title = [where && row.fix.line ? `${where}: ${row.fix.line}` : where, row.fix.why].filter(Boolean).join('\n');
    td.appendChild(fix);
  }
  if (row.failure) td.appendChild(el(doc, 'div', 'rc-failure', `${row.failure.type}: ${row.failure.reason}`));
  for (const h of row.hints) td.appendChild(el(doc, 'div', 'rc-hint', `torch: ${h}`));
}

/**
 * @param {Document} doc
 * @param {RecompileRow} row
 * @param {number} index
 * @param {boolean} multiRank
 */
function recompileItem(doc, row, index, multiRank) {
  const tr = el(doc, 'tr', 'rc');
  tr.dataset.recompile = String(index);
  const idCell = el(doc, 'td', 'rc-id');
  const open = el(doc, 'button', 'rc-open', multiRank && row.rank !== null ? `${row.id} r${row.rank}` : row.id);
  open.type = 'button';
  open.title = 'Open this compile';
  idCell.appendChild(open);
  const fnCell = el(doc, 'td', 'rc-fn');
  fnCell.appendChild(el(doc, 'div', 'rc-name', row.fn));
  if (row.where) {
    // The file's name (its whole path in the title): the column stays narrow.
    const loc = el(doc, 'div', 'muted rc-loc', row.where.slice(row.where.lastIndexOf('/') + 1));
    loc.title = row.where;
    fnCell.appendChild(loc);
  }
  const changes = changesCell(doc, row.recompile);
  appendToChange(doc, changes, row);
  tr.append(idCell, fnCell, whyCell(doc, row.recompile), changes);
  return tr;
}

/**
 * The Recompiles view drawn into `pane`; `onPick(id, rank)` when a recompile is picked. Returns the
 * rows listed (null while compiles.json is being read).
 * @param {HTMLElement} pane
 * @param {OpenedTrace} trace
 * @param {{ onPick: (id: string, rank: number | null) => void }} options
 * @returns {RecompileRow[] | null}
 */
export function drawRecompiles(pane, trace, { onPick }) {
  const doc = pane.ownerDocument;
  const section = el(doc, 'div', 'vw recompiles');
  pane.appendChild(section);
  if (!trace.indexesRead) {
    section.appendChild(el(doc, 'p', 'muted', 'Reading compiles.json…'));
    return null;
  }
  const rows = recompileRows(trace);
  const none = trace.statusSource === 'compiles.json' ? 'No recompiles: every frame was compiled once.' : 'No compiles.json: recompiles are not indexed.';
  section.appendChild(el(doc, 'h3', '', rows.length ? `${rows.length} recompile${rows.length === 1 ? '' : 's'}` : none));
  // Why inputs are dynamic that no line marked, and the setting that asks for it (compiles.json
  // `dynamic`, format 1.29): decided by tlscope, a sentence per log (a rank's named in a job).
  // One line, opened on demand: the recompiles stay on one screen.
  for (const d of trace.dynamic) {
    const who = trace.multiRank && d.rank !== null ? ` (rank ${d.rank})` : '';
    const box = el(doc, 'details', 'rc-why-dynamic');
    box.appendChild(el(doc, 'summary', '', `Why dynamic${who}? What made inputs dynamic that no line marked${d.recommended ? ', and the setting that asks for it' : ''}`));
    box.appendChild(el(doc, 'p', 'rc-why-sentence', d.sentence));
    section.appendChild(box);
  }
  if (!rows.length) return rows;
  const table = el(doc, 'table', 'cp-table rc-table');
  const head = el(doc, 'tr', '');
  for (const h of ['compile id', 'function', 'why it recompiled', 'what changed · what to change']) head.appendChild(el(doc, 'th', '', h));
  table.appendChild(head);
  rows.forEach((row, i) => table.appendChild(recompileItem(doc, row, i, trace.multiRank)));
  table.onclick = (e) => {
    const tr = e.target instanceof Element ? e.target.closest('tr.rc') : null;
    const row = tr instanceof HTMLElement ? rows[Number(tr.dataset.recompile)] : undefined;
    if (row) onPick(row.id, row.rank);
  };
  section.appendChild(table);
  return rows;
}
