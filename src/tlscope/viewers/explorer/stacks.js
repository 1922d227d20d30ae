// The Stack tab of a graph break or a failed compile: the user's own line first, where tracing
// stopped when that was library code, and the whole stack one click away with the user's frame
// marked. What is the user's code is decided once, in Python (analyse/fold/usercode.py), and
// written into compiles.json (`user_frame`, `stopped_at`, `stack`): this module finds the entry of
// the selected event and shows it, it never judges a file itself.

import { compileIdOf, describeFix } from '/lib/tlscope.js';
import { fixBox } from './compile.js';
import { el } from './dom.js';

/** @typedef {import('/lib/tlscope.js').RawEvent} RawEvent */
/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').SourceLocation} SourceLocation */
/** @typedef {import('/lib/tlscope.js').CompileRecord} CompileRecord */

/**
 * What compiles.json attributes to an event: a graph break (its `dynamo_graph_break_reason`
 * artifact) or a failed compile (its `dynamo_error` artifact or failed metrics record).
 * @typedef {object} Attributed
 * @property {'break' | 'failure'} kind
 * @property {string} id the compile id of the entry
 * @property {string} headline the break's reason, or the failure's type and reason
 * @property {SourceLocation | null} user the innermost frame in the user's code (Python's choice)
 * @property {SourceLocation | null} stopped where tracing stopped, when that is library code
 * @property {SourceLocation[]} frames the stack, outermost first
 * @property {string[]} hints torch's own fix hints of the break or failure (compiles.json `hints`)
 * @property {string | null} docs torch's page about it (`docs_url`)
 * @property {import('/lib/tlscope.js').FixView | null} fix tlscope's fix of the break (`fix`, format 1.50), null for a failure
 */

/**
 * @param {CompileRecord} entry
 * @param {number} logLine
 * @returns {Attributed | null}
 */
function attributedIn(entry, logLine) {
  for (const gb of entry.graph_breaks || []) {
    if (gb.event && gb.event.log_line === logLine) {
      const found = { kind: /** @type {const} */ ('break'), id: entry.id, headline: gb.reason, user: gb.user_frame || null, stopped: gb.stopped_at || null };
      return { ...found, frames: gb.stack || [], hints: gb.hints || [], docs: gb.docs_url || null, fix: describeFix(gb.fix) };
    }
  }
  const failures = (entry.metrics_records || []).filter((r) => r.failure).map((r) => ({ line: r.log_line, failure: r.failure }));
  if (entry.failure) failures.push({ line: entry.failure.traceback ? entry.failure.traceback.log_line : -1, failure: entry.failure });
  for (const { line, failure } of failures) {
    if (!failure || line !== logLine) continue;
    // A failure's own frames are in its traceback payload; the stack here is the compile's (where
    // the compiled function was called from), with the compile's user frame marked.
    const user = failure.user_frame || entry.user_frame || null;
    return { kind: 'failure', id: entry.id, headline: `${failure.type}: ${failure.reason}`, user, stopped: null, frames: entry.stack || [], hints: failure.hints || [], docs: failure.docs_url || null, fix: null };
  }
  return null;
}

/**
 * The break or failure compiles.json attributes to `event` of part `part`, or null.
 * @param {OpenedTrace} trace
 * @param {RawEvent} event
 * @param {number} part
 * @returns {Attributed | null}
 */
export function attributedOf(trace, event, part) {
  const logLine = event.log_line;
  if (typeof logLine !== 'number') return null;
  const rank = trace.parts[part] ? trace.parts[part].rank : null;
  // Its own compile id first; then every other (a break can be filed under another attempt's id).
  const own = compileIdOf(event);
  const ids = [own, ...[...trace.compiles.keys()].filter((id) => id !== own)];
  for (const id of ids) {
    const entry = trace.compileEntry(id, rank);
    const found = entry ? attributedIn(entry, logLine) : null;
    if (found) return found;
  }
  return null;
}

/**
 * `file:line in name`, the file's last component only (the full path is in the title).
 * @param {SourceLocation} frame
 */
function place(frame) {
  const file = frame.file || '?';
  const short = file.split('/').pop() || file;
  return `${short}:${frame.line ?? '?'}${frame.name ? ` in ${frame.name}` : ''}`;
}

/**
 * @param {SourceLocation | null} a
 * @param {SourceLocation} b
 */
function same(a, b) {
  return !!a && a.file === b.file && a.line === b.line && (a.name || null) === (b.name || null);
}

/**
 * One frame as a block: where (full path in its title) and its code line.
 * @param {Document} doc
 * @param {string} label
 * @param {SourceLocation} frame
 * @param {string} cls
 */
function frameBlock(doc, label, frame, cls) {
  const box = el(doc, 'div', `attributed-frame ${cls}`);
  box.appendChild(el(doc, 'span', 'muted', `${label} `));
  const where = el(doc, 'code', 'where', place(frame));
  where.title = frame.file || '';
  box.appendChild(where);
  if (frame.code) box.appendChild(el(doc, 'pre', 'code-of', frame.code));
  return box;
}

/**
 * The full stack, outermost first, the user's frame and where tracing stopped marked.
 * @param {Document} doc
 * @param {Attributed} info
 */
function fullStack(doc, info) {
  const table = el(doc, 'table', 'frames attributed-stack');
  for (const frame of info.frames) {
    const mine = same(info.user, frame);
    const stop = same(info.stopped, frame);
    const tr = el(doc, 'tr', mine ? 'mine' : stop ? 'stopped' : '');
    tr.appendChild(el(doc, 'td', '', `${frame.file || '?'}:${frame.line ?? '?'}`));
    tr.appendChild(el(doc, 'td', '', frame.name || ''));
    tr.appendChild(el(doc, 'td', 'loc', frame.code || ''));
    tr.appendChild(el(doc, 'td', 'mark', mine ? '← your code' : stop ? '← tracing stopped' : ''));
    table.appendChild(tr);
  }
  return table;
}

/**
 * The attributed view: the user's line, where tracing stopped, and a button for the full stack.
 * @param {Document} doc
 * @param {Attributed} info
 * @returns {HTMLElement}
 */
export function attributedView(doc, info) {
  const box = el(doc, 'div', 'attributed');
  const what = info.kind === 'break' ? 'Graph break' : 'Compile failure';
  box.appendChild(el(doc, 'div', 'attributed-head', `${what} in ${info.id}: ${info.headline}`));
  if (info.user) box.appendChild(frameBlock(doc, 'Your code:', info.user, 'mine'));
  else box.appendChild(el(doc, 'p', 'muted', 'No frame of this stack is your code (see FORMAT.md, "What is user code", and --user-code).'));
  if (info.stopped) box.appendChild(frameBlock(doc, 'Tracing stopped in library code at:', info.stopped, 'stopped'));
  // tlscope's fix (format 1.50), then torch's own hints, beside the break or failure they belong to
  // (as summary and the report show them).
  if (info.fix) box.appendChild(fixBox(doc, info.fix));
  for (const hint of info.hints) box.appendChild(el(doc, 'p', 'attributed-hint', `torch's hint: ${hint}`));
  if (info.docs && /^https?:\/\//.test(info.docs)) {
    const link = el(doc, 'a', 'attributed-docs', `torch's page on this ${info.kind === 'break' ? 'break' : 'failure'}`);
    link.href = info.docs;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    box.appendChild(link);
  }
  if (info.frames.length) {
    const more = el(doc, 'button', 'full-stack', `Full stack (${info.frames.length} frames, innermost last)`);
    more.type = 'button';
    more.addEventListener('click', () => {
      const open = box.querySelector('.attributed-stack');
      if (open) open.remove();
      else box.appendChild(fullStack(doc, info));
      more.classList.toggle('on', !open);
    });
    box.appendChild(more);
  }
  return box;
}
