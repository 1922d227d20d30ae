// Each torch.export call of a trace and how it ended, as tlscope wrote it in compiles.json
// (docs/FORMAT.md section 14, "Exports", format 1.18). Python cuts the log into calls, decides
// each one's status and sentence and each issue's fix; this module only checks the untrusted
// JSON and hands it to a view. It never decides anything itself.

import { isObject } from './format.js';

/**
 * Where a call or an issue is in the user's code.
 * @typedef {{ file: string | null, line: number | null, name: string | null, code: string | null }} ExportPlace
 */

/**
 * The change that removes an export issue: add `code` (before `where`), or change the line `where`.
 * @typedef {{ kind: string, code: string, where: ExportPlace | null, why: string, docsUrl: string | null }} ExportFixView
 */

/**
 * The event behind an issue or a program: raw.jsonl line, input-log line, event key or artifact name.
 * @typedef {{ kind: string, raw_line: number | null, log_line: number, payload_filename: string | null }} ExportRef
 */

/**
 * One issue of a call, as written.
 * @typedef {object} ExportIssueView
 * @property {string} kind
 * @property {string} title
 * @property {string} sentence
 * @property {string | null} codeExpr
 * @property {ExportPlace | null} userFrame
 * @property {ExportFixView | null} fix
 * @property {number} count
 * @property {ExportRef} ref the issue's first event (its partial graph's, for `partial_graph`)
 */

/**
 * One torch.export call, as written.
 * @typedef {object} ExportCallView
 * @property {number} index
 * @property {string} status `exported`, `exported_with_issues`, `failed` or `traced` (since 1.28)
 * @property {string | null} traceId a strict call's Dynamo trace, as its compile id (`[0/0]`; since 1.28)
 * @property {string} sentence
 * @property {ExportPlace | null} calledAt
 * @property {ExportRef | null} program
 * @property {ExportIssueView[]} issues
 * @property {number | null} rank the rank whose log holds it (a multi-rank job), else null
 */

/** The event key behind each issue kind (`partial_graph`'s is an artifact, named so). */
const ISSUE_EVENT = {
  data_dependent_error: 'guard_on_data_dependent_error',
  data_dependent: 'propagate_real_tensors_provenance',
  guard_evaluated: 'guard_added',
  missing_fake_kernel: 'missing_fake_kernel',
  mismatched_fake_kernel: 'mismatched_fake_kernel',
  partial_graph: 'make_fx_fail_partial',
  dynamo_error: 'compilation_metrics',
};

/**
 * @param {unknown} value
 * @returns {string | null}
 */
const text = (value) => (typeof value === 'string' ? value : null);

/**
 * @param {unknown} value
 * @returns {number | null}
 */
const int = (value) => (typeof value === 'number' && Number.isInteger(value) ? value : null);

/**
 * @param {unknown} value
 * @returns {ExportPlace | null}
 */
function place(value) {
  if (!isObject(value)) return null;
  return { file: text(value.file), line: int(value.line), name: text(value.name), code: text(value.code) };
}

/**
 * @param {unknown} value
 * @returns {ExportFixView | null}
 */
function fix(value) {
  if (!isObject(value) || typeof value.code !== 'string' || typeof value.why !== 'string') return null;
  const kind = value.kind === 'change_code' ? 'change_code' : 'add';
  return { kind, code: value.code, where: place(value.where), why: value.why, docsUrl: text(value.docs_url) };
}

/**
 * @param {unknown} value a payload reference
 * @param {string} kind the event key when the reference has none
 * @returns {ExportRef | null}
 */
function ref(value, kind) {
  if (!isObject(value)) return null;
  const logLine = int(value.log_line);
  if (logLine === null) return null;
  return { kind: text(value.kind) ?? kind, raw_line: int(value.raw_line), log_line: logLine, payload_filename: text(value.payload_filename) };
}

/**
 * @param {unknown} value
 * @returns {ExportIssueView[]}
 */
function issue(value) {
  if (!isObject(value) || typeof value.kind !== 'string' || typeof value.title !== 'string' || typeof value.sentence !== 'string') return [];
  // The event's kind as Python wrote it (format 1.23); the kind's usual event for older files.
  const event = text(value.event_kind) ?? /** @type {Record<string, string>} */ (ISSUE_EVENT)[value.kind] ?? value.kind;
  const own = ref({ kind: event, raw_line: value.raw_line, log_line: value.log_line, payload_filename: null }, event);
  const found = value.kind === 'partial_graph' ? ref(value.payload, event) ?? own : own;
  if (!found) return [];
  return [{
    kind: value.kind,
    title: value.title,
    sentence: value.sentence,
    codeExpr: text(value.code_expr),
    userFrame: place(value.user_frame),
    fix: fix(value.fix),
    count: int(value.count) ?? 1,
    ref: found,
  }];
}

/**
 * compiles.json's `exports_note` (format 1.19): what the calls cannot say (e.g. that without
 * TORCH_DTRACE only failed calls show), as Python wrote it; null when it has none.
 * @param {unknown} data a compiles.json
 * @returns {string | null}
 */
export function readExportsNote(data) {
  return isObject(data) && typeof data.exports_note === 'string' && data.exports_note ? data.exports_note : null;
}

/**
 * compiles.json's `exports` checked (malformed items dropped), or [] when `data` has none
 * (a torch.compile log, or a file written before format 1.18).
 * @param {unknown} data a compiles.json
 * @param {number | null} [rank]
 * @returns {ExportCallView[]}
 */
export function readExports(data, rank = null) {
  const calls = isObject(data) && Array.isArray(data.exports) ? data.exports : [];
  return calls.flatMap((call) => {
    if (!isObject(call) || typeof call.status !== 'string' || typeof call.sentence !== 'string') return [];
    return [{
      index: int(call.index) ?? 0,
      status: call.status,
      sentence: call.sentence,
      calledAt: place(call.called_at),
      program: ref(call.program, 'exported_program'),
      issues: (Array.isArray(call.issues) ? call.issues : []).flatMap(issue),
      traceId: typeof call.trace_id === 'string' && call.trace_id ? call.trace_id : null,
      rank,
    }];
  });
}
