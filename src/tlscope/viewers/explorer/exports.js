// The Exports view (`?view=exports`, in the main area): each torch.export call of the trace and
// how it ended, as compiles.json's `exports` says it (docs/FORMAT.md section 14, "Exports"):
// the call's status and sentence, the user's line that called it, then each issue with its
// sentence and fix (the line to add or change, where, and why). Python decided all of it; this
// view only lays it out. An issue's button leads to its event in the table. Text goes in with
// textContent; a docs address is shown as text, never followed by the page.

import { el } from './dom.js';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').ExportCallView} ExportCallView */
/** @typedef {import('/lib/tlscope.js').ExportIssueView} ExportIssueView */
/** @typedef {import('/lib/tlscope.js').ExportPlace} ExportPlace */
/** @typedef {import('/lib/tlscope.js').ExportRef} ExportRef */

const STATUS_TEXT = { exported: 'exported', exported_with_issues: 'exported with issues', failed: 'failed', traced: 'traced, end not logged' };

/**
 * `model.py:22`, `line 22` when the log lacks the file's name.
 * @param {ExportPlace} at
 */
function placeText(at) {
  const file = at.file && at.file !== '(unknown)' ? at.file.slice(at.file.lastIndexOf('/') + 1) : null;
  return file ? `${file}:${at.line ?? '?'}` : `line ${at.line ?? '?'}`;
}

/**
 * The fix of an issue: what to add or change, where, and why.
 * @param {Document} doc
 * @param {NonNullable<ExportIssueView['fix']>} fix
 */
function fixBlock(doc, fix) {
  const box = el(doc, 'div', 'ex-fix');
  const head = el(doc, 'div', 'ex-fix-head');
  if (fix.kind === 'change_code' && fix.where) {
    head.append(el(doc, 'span', 'ex-fix-label', `fix: change the line ${placeText(fix.where)}: `), el(doc, 'code', 'ex-fix-code', fix.code));
  } else {
    head.append(el(doc, 'span', 'ex-fix-label', 'fix: '), el(doc, 'code', 'ex-fix-code', fix.code));
    if (fix.where) head.append(el(doc, 'span', 'ex-fix-where', ` before ${placeText(fix.where)}`));
  }
  box.append(head);
  if (fix.where && fix.where.code) box.append(el(doc, 'code', 'ex-line', fix.where.code.trim()));
  box.append(el(doc, 'div', 'muted ex-why', fix.why));
  if (fix.docsUrl) box.append(el(doc, 'div', 'muted ex-docs', fix.docsUrl));
  return box;
}

/**
 * @param {Document} doc
 * @param {ExportIssueView} issue
 * @param {number} index
 * @param {boolean} said the call's sentence says this issue's already (a failed call's cause)
 */
function issueItem(doc, issue, index, said) {
  const li = el(doc, 'li', `ex-issue ex-${issue.kind}`);
  li.dataset.issue = String(index);
  const head = el(doc, 'div', 'ex-issue-head');
  head.append(el(doc, 'span', 'badge ex-title', issue.title));
  if (issue.count > 1) head.append(el(doc, 'span', 'muted', ` ${issue.count} times`));
  const show = el(doc, 'button', 'ex-show', 'show event');
  show.type = 'button';
  show.title = `Show this issue's ${issue.ref.kind} event (log line ${issue.ref.log_line})`;
  head.append(show);
  li.append(head);
  if (!said) li.append(el(doc, 'div', 'ex-sentence', issue.sentence));
  if (issue.fix) li.append(fixBlock(doc, issue.fix));
  return li;
}

/**
 * @param {Document} doc
 * @param {ExportCallView} call
 * @param {number} index its place in the list
 * @param {boolean} multiRank
 */
function callItem(doc, call, index, multiRank) {
  const li = el(doc, 'li', `ex-call ex-${call.status}`);
  li.dataset.call = String(index);
  const head = el(doc, 'div', 'ex-head');
  const label = /** @type {Record<string, string>} */ (STATUS_TEXT)[call.status] ?? call.status;
  const rank = multiRank && call.rank !== null ? ` · rank ${call.rank}` : '';
  head.append(el(doc, 'span', `badge ex-status ex-status-${call.status}`, label), el(doc, 'span', 'ex-index', ` call ${call.index}${rank}`));
  if (call.program) {
    const program = el(doc, 'button', 'ex-program', 'exported program');
    program.type = 'button';
    program.title = 'Show the exported_program event (the printed program)';
    head.append(program);
  }
  li.append(head, el(doc, 'div', 'ex-sentence ex-call-sentence', call.sentence));
  if (call.calledAt) li.append(el(doc, 'div', 'muted ex-called', `called at ${placeText(call.calledAt)}${call.calledAt.code ? `: ${call.calledAt.code.trim()}` : ''}`));
  if (call.traceId) li.append(el(doc, 'div', 'muted ex-trace', `strict export's Dynamo trace: compile ${call.traceId}`));
  const issues = el(doc, 'ol', 'ex-issues');
  call.issues.forEach((issue, k) => issues.appendChild(issueItem(doc, issue, k, call.status === 'failed' && call.sentence.includes(issue.sentence))));
  if (call.issues.length) li.append(issues);
  return li;
}

/**
 * What the test hook shows of the exports.
 * @param {OpenedTrace} trace
 */
export function exportsForHook(trace) {
  return trace.exports.map((c) => ({ status: c.status, sentence: c.sentence, issues: c.issues.map((i) => i.kind), fixes: c.issues.map((i) => (i.fix ? i.fix.code : null)) }));
}

/**
 * Draw `trace.exports` into `pane` (a list `#exports`); `onPick(ref, rank)` when the user asks for
 * an issue's event or a call's program.
 * @param {HTMLElement} pane
 * @param {OpenedTrace} trace
 * @param {{ onPick: (ref: ExportRef, rank: number | null) => void }} options
 */
export function drawExports(pane, trace, { onPick }) {
  const doc = pane.ownerDocument;
  for (const note of trace.exportsNotes) pane.appendChild(el(doc, 'p', 'ex-note', note));
  const list = el(doc, 'ol', 'vw ex-list');
  list.id = 'exports';
  pane.appendChild(list);
  const calls = trace.exports;
  if (!calls.length) list.appendChild(el(doc, 'li', 'muted ex-none', trace.indexesRead ? 'No torch.export call in this trace.' : 'Reading compiles.json…'));
  calls.forEach((call, i) => list.appendChild(callItem(doc, call, i, trace.multiRank)));
  list.onclick = (e) => {
    const target = e.target instanceof Element ? e.target : null;
    const item = target && target.closest('li.ex-call');
    const call = item instanceof HTMLElement ? calls[Number(item.dataset.call)] : null;
    if (!call || !target) return;
    if (target.closest('.ex-program') && call.program) onPick(call.program, call.rank);
    const issue = target.closest('.ex-show') ? target.closest('li.ex-issue') : null;
    const picked = issue instanceof HTMLElement ? call.issues[Number(issue.dataset.issue)] : null;
    if (picked) onPick(picked.ref, call.rank);
  };
}
