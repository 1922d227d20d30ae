// One compile id explained, from its compiles.json entry (docs/FORMAT.md section 14): status,
// function, time and phases, why it recompiled (the recommended guard failure first), failure,
// graph breaks and cache lookups, each payload reference kept so a viewer can select its event.
// Pure functions over untrusted JSON: every value is checked and turned into plain strings or
// numbers; nothing here touches the DOM.

import { isObject } from './format.js';

/** @typedef {import('./format.js').JsonObject} JsonObject */

/** @typedef {import('./compiles-json.js').CompileEntry} CompileEntry */

/**
 * compiles.json's entries in the file's order, an entry without a string `id` dropped; null when
 * `data` is not a compiles.json (a bare list of entries, as the first folders held, is read as
 * one). The one reader of the entries: a trace's index and the Ranks view's matrix and "why is
 * rank K slow" read them here.
 * @param {unknown} data
 * @returns {CompileEntry[] | null}
 */
export function readCompileEntries(data) {
  const entries = Array.isArray(data) ? data : isObject(data) && Array.isArray(data.compiles) ? data.compiles : null;
  return entries && /** @type {CompileEntry[]} */ (entries.filter((entry) => isObject(entry) && typeof entry.id === 'string'));
}

/**
 * A payload reference of compiles.json, checked: the event is raw.jsonl line `raw_line`.
 * @typedef {{ kind: string, raw_line: number, log_line: number | null, payload_filename: string | null, name?: string | null }} PayloadRefView
 */

/**
 * A guard failure for display; `values` is `expected → actual` ("not logged" for a null side).
 * @typedef {object} GuardFailureView
 * @property {string | null} cacheEntry
 * @property {string} kind
 * @property {string} explanation
 * @property {string | null} guard
 * @property {string | null} expected
 * @property {string | null} actual
 * @property {string | null} values
 * @property {string | null} where
 * @property {string | null} code
 */

/**
 * A recompile's input change for display: `input` as the code names it (format 1.47 `name`; as
 * Dynamo does before), `source` as Dynamo does (`L['x']`).
 * @typedef {{ input: string, source: string, what: string, before: string, after: string }} ChangeView
 */
/**
 * What to change so a size does not recompile (compiles.json `recompile.fix`, since format 1.10),
 * or so a slow compile is faster (`time_fix`, since 1.49).
 * @typedef {{ kind: string, input: string, dim: number | null, code: string, where: string | null, whereCode: string | null, why: string }} FixView
 */
/** @typedef {{ name: string, seconds: number, count: number }} PhaseView */

/**
 * Why a compile id recompiled, for display.
 * @typedef {object} RecompileView
 * @property {string | null} reason
 * @property {string | null} comparedWith
 * @property {(GuardFailureView & { index: number, why: string }) | null} recommended
 * @property {GuardFailureView[]} guardFailures
 * @property {ChangeView[]} changes
 * @property {PayloadRefView | null} event
 * @property {FixView | null} fix The change that avoids it, when a size caused it (format 1.10).
 */

/**
 * A failure for display; `hints` and `docsUrl`: torch's own fix hints and page (format 1.12; none before).
 * @typedef {{ type: string, reason: string, where: string | null, code: string | null, traceback: PayloadRefView | null, hints: string[], docsUrl: string | null }} FailureView
 */

/**
 * What a view shows of one compile id (describeCompile): every string is plain, untrusted text.
 * @typedef {object} CompileView
 * @property {string} id
 * @property {string | null} status
 * @property {Record<string, string>} ranks
 * @property {string | null} function `name at file:line`
 * @property {number | null} durationS
 * @property {PhaseView[]} phases The slowest phases, `dynamo` (the whole) left out.
 * @property {string[]} restartReasons
 * @property {boolean} isRecompile
 * @property {string | null} restartedAs
 * @property {RecompileView | null} recompile
 * @property {FailureView | null} failure
 * @property {Array<{ reason: string, where: string | null, code: string | null, event: PayloadRefView | null }>} graphBreaks
 * @property {Array<{ cache: string, outcome: string, reason: string | null, event: PayloadRefView | null, time: string | null }>} cache `time`: what a hit saved or a miss's compile took, as logged (`saved 8.81 s`)
 * @property {string[]} collectives each collective its Dynamo graphs call (compiles.json `graphs[].collectives`,
 *   format 1.17), as `op tensor args`, in order
 * @property {string[][]} scheduled each collective schedule Inductor logged for it (`collective_schedules`,
 *   format 1.34): its op names, as logged, in the order the compiled code runs them
 * @property {string | null} capture compiles.json `capture` (format 1.20): the API of a fullgraph capture, else null
 * @property {string | null} calledAt `file:line` of the entry's user frame (for a capture: the call to it)
 * @property {string[]} unfinished compiles.json `unfinished` (format 1.48): the phases a compile with no
 *   metrics record was still in when the log ended, outermost first; [] for every other compile
 * @property {{ where: string, code: string, nodes: number, of: number } | null} busiestLine the line most of its
 *   Dynamo graph's nodes were traced from (compiles.json `graphs[].busiest_line`, format 1.49: a big graph's, decided
 *   by tlscope), with its nodes and the graph's; null when none was written
 * @property {number | null} backwardS compiles.json `backward_s` (format 1.49): the seconds its backward took to
 *   compile at the first backward call, after `durationS`'s span; null when none was logged
 * @property {FixView | null} timeFix compiles.json `time_fix` (format 1.49): the change that makes this
 *   slow compile faster (kind `regional`: compile each repeated block), as tlscope decided it; else null
 */

/** What a view shows where the log holds no value (never an invented one). */
export const NOT_LOGGED = 'not logged';

const PHASES_SHOWN = 5;

/**
 * A logged scalar as text (null stays null; objects as JSON).
 * @param {unknown} value
 * @returns {string | null}
 */
function text(value) {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * The objects of `value` when it is an array.
 * @param {unknown} value
 * @returns {JsonObject[]}
 */
function list(value) {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/**
 * A user frame ({file, line, name, code}) as `file:line in name`, or null when it has no file.
 * @param {unknown} frame
 * @returns {string | null}
 */
export function frameText(frame) {
  if (!isObject(frame) || typeof frame.file !== 'string') return null;
  const where = typeof frame.line === 'number' && Number.isInteger(frame.line) ? `${frame.file}:${frame.line}` : frame.file;
  return typeof frame.name === 'string' && frame.name ? `${where} in ${frame.name}` : where;
}

/**
 * @param {unknown} frame
 * @returns {string | null}
 */
function frameCode(frame) {
  return isObject(frame) && typeof frame.code === 'string' && frame.code ? frame.code : null;
}

/**
 * @param {unknown} value
 * @returns {value is number}
 */
function isInt(value) {
  return typeof value === 'number' && Number.isInteger(value);
}

/**
 * A payload reference ({kind, payload_filename, payload_size, raw_line, log_line, name}) checked, or
 * null when it names no raw.jsonl line.
 * @param {unknown} ref
 * @returns {PayloadRefView | null}
 */
export function payloadRef(ref) {
  if (!isObject(ref) || !isInt(ref.raw_line) || ref.raw_line < 2) return null;
  return {
    kind: typeof ref.kind === 'string' ? ref.kind : '',
    raw_line: ref.raw_line,
    log_line: isInt(ref.log_line) ? ref.log_line : null,
    payload_filename: typeof ref.payload_filename === 'string' ? ref.payload_filename : null,
    // A graph_dump's name (since 1.25): what the reference is labelled with; absent otherwise.
    ...(typeof ref.name === 'string' && ref.name ? { name: ref.name } : {}),
  };
}

/**
 * What a cache lookup's time says (compiles.json `time_saved_s`, `time_taken_s`, since 1.26):
 * `saved 8.81 s` for a hit, `took 8.62 s` for a miss; null when neither was logged.
 * @param {Record<string, unknown>} c
 * @returns {string | null}
 */
function cacheTime(c) {
  const seconds = (/** @type {unknown} */ v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? `${v.toFixed(2)} s` : null);
  const saved = seconds(c.time_saved_s);
  if (saved) return `saved ${saved}`;
  const taken = seconds(c.time_taken_s);
  return taken ? `took ${taken}` : null;
}

/**
 * One guard failure of `recompile.guard_failures` for display: `values` is `expected → actual`
 * with "not logged" for a null side, or null when Dynamo printed neither.
 * @param {unknown} failure
 * @returns {GuardFailureView}
 */
export function formatGuardFailure(failure) {
  const f = isObject(failure) ? failure : {};
  const expected = text(f.expected);
  const actual = text(f.actual);
  const guard = text(f.guard);
  return {
    cacheEntry: text(f.cache_entry),
    kind: typeof f.kind === 'string' && f.kind ? f.kind : 'other',
    explanation: text(f.explanation) || guard || '',
    guard,
    expected,
    actual,
    values: expected === null && actual === null ? null : `${expected ?? NOT_LOGGED} → ${actual ?? NOT_LOGGED}`,
    where: frameText(f.user_frame),
    code: frameCode(f.user_frame),
  };
}

/**
 * The guard failure to show first for a recompile, as compiles.json records it (`recommended`,
 * since format 1.9: tlscope decides it, FORMAT.md "Which failure is the cause"); `why` says why
 * it was chosen. A file older than 1.9 records none: then the newest entry (`guard_failures[0]`),
 * with `why` saying so. Null when there are no guard failures.
 * @param {unknown} recompile
 * @returns {{index: number, failure: unknown, why: string} | null}
 */
export function recommendedFailure(recompile) {
  /** @type {unknown[]} */
  const failures = isObject(recompile) && Array.isArray(recompile.guard_failures) ? recompile.guard_failures : [];
  if (!isObject(recompile) || !failures.length) return null;
  const rec = recompile.recommended;
  if (isObject(rec) && typeof rec.index === 'number' && Number.isInteger(rec.index) && rec.index >= 0 && rec.index < failures.length) {
    return { index: rec.index, failure: failures[rec.index], why: typeof rec.why === 'string' ? rec.why : '' };
  }
  return { index: 0, failure: failures[0], why: 'the newest cache entry (this compiles.json predates recommendations)' };
}

/**
 * A `changes` item ({input, what, before, after}) as strings.
 * @param {unknown} change
 * @returns {ChangeView}
 */
export function formatChange(change) {
  const c = isObject(change) ? change : {};
  const source = text(c.input) || '';
  return { input: text(c.name) || source, source, what: text(c.what) || '', before: text(c.before) ?? NOT_LOGGED, after: text(c.after) ?? NOT_LOGGED };
}

/**
 * The slowest phases, the whole (`dynamo`) left out.
 * @param {unknown} phases
 * @param {number} [n]
 * @returns {PhaseView[]}
 */
export function topPhases(phases, n = PHASES_SHOWN) {
  return list(phases)
    .flatMap((p) => {
      if (typeof p.name !== 'string' || p.name === 'dynamo' || typeof p.seconds !== 'number' || !Number.isFinite(p.seconds)) return [];
      return [{ name: p.name, seconds: p.seconds, count: isInt(p.count) ? p.count : 1 }];
    })
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, n);
}

/** The file of torch's wrapper `inner`, the frame torch compiles for a torch.nn built-in module. */
const WRAPPER_FILE = 'torch/_dynamo/external_utils.py';

/**
 * The compiled function as compiles.json names it (tlscope's CompileEntry.function_name, held to
 * the same answers by tests/conformance/cases.json): `Sequential.forward` when torch compiled a
 * module through its wrapper `inner` (format 1.46 `module`), `Block.forward` for a method
 * (1.47: `module` is `self`'s class), else `function.name`; '' when unknown.
 * @param {unknown} entry a compiles.json entry
 * @returns {string}
 */
export function compiledFunctionName(entry) {
  const e = isObject(entry) ? entry : {};
  const fn = isObject(e.function) ? e.function : {};
  const name = typeof fn.name === 'string' ? fn.name : '';
  if (typeof e.module !== 'string' || !e.module) return name;
  const file = typeof fn.file === 'string' ? fn.file.replaceAll('\\', '/') : '';
  const wrapper = name === 'inner' && file.endsWith(WRAPPER_FILE);
  return `${e.module}.${name && !wrapper ? name : 'forward'}`;
}

/**
 * @param {unknown} fn
 * @param {unknown} [module] format 1.46 `module`: the class torch's wrapper compiled
 * @returns {string | null}
 */
function describeFunction(fn, module) {
  if (!isObject(fn)) return null;
  const name = compiledFunctionName({ function: fn, module }) || '?';
  const where = frameText({ file: fn.file, line: fn.line });
  return where ? `${name} at ${where}` : name;
}

/**
 * @param {unknown} recompile
 * @returns {RecompileView | null}
 */
function describeRecompile(recompile) {
  if (!isObject(recompile)) return null;
  const best = recommendedFailure(recompile);
  return {
    reason: text(recompile.reason),
    comparedWith: text(recompile.compared_with),
    recommended: best ? { index: best.index, why: best.why, ...formatGuardFailure(best.failure) } : null,
    guardFailures: (Array.isArray(recompile.guard_failures) ? recompile.guard_failures : []).map(formatGuardFailure),
    changes: list(recompile.changes).map(formatChange),
    event: payloadRef(recompile.event),
    fix: describeFix(recompile.fix),
  };
}

/**
 * A recompile's fix as the file says it (null when absent: not a size, or a folder before 1.10).
 * @param {unknown} fix
 * @returns {FixView | null}
 */
export function describeFix(fix) {
  if (!isObject(fix) || typeof fix.code !== 'string') return null;
  return {
    kind: text(fix.kind) || '?',
    input: text(fix.input) || '?',
    dim: isInt(fix.dim) ? fix.dim : null,
    code: fix.code,
    where: frameText(fix.where),
    whereCode: frameCode(fix.where),
    why: text(fix.why) || '',
  };
}

/**
 * @param {unknown} failure
 * @returns {FailureView | null}
 */
function describeFailure(failure) {
  if (!isObject(failure)) return null;
  return {
    type: text(failure.type) || '?',
    reason: text(failure.reason) || '',
    where: frameText(failure.user_frame),
    code: frameCode(failure.user_frame),
    traceback: payloadRef(failure.traceback),
    hints: (Array.isArray(failure.hints) ? failure.hints : []).filter((h) => typeof h === 'string'),
    docsUrl: typeof failure.docs_url === 'string' ? failure.docs_url : null,
  };
}

/**
 * What a view shows of one compiles.json entry, as plain data (CompileView).
 * `status` and `ranks` are the merged ones of a multi-rank folder when given.
 * @param {unknown} entry
 * @param {{status?: string | null, ranks?: Record<string, string>}} [merged]
 * @returns {CompileView}
 */
export function describeCompile(entry, merged = {}) {
  const e = isObject(entry) ? entry : {};
  const time = isObject(e.time) ? e.time : {};
  return {
    id: text(e.id) || '',
    status: merged.status ?? text(e.status),
    ranks: merged.ranks && typeof merged.ranks === 'object' ? merged.ranks : {},
    function: describeFunction(e.function, e.module),
    durationS: typeof time.duration_s === 'number' && Number.isFinite(time.duration_s) ? time.duration_s : null,
    phases: topPhases(e.phases),
    restartReasons: (Array.isArray(e.restart_reasons) ? e.restart_reasons : []).flatMap((r) => text(r) ?? []),
    isRecompile: e.is_recompile === true,
    restartedAs: text(e.restarted_as),
    recompile: describeRecompile(e.recompile),
    failure: describeFailure(e.failure),
    graphBreaks: list(e.graph_breaks).map((b) => ({ reason: text(b.reason) || '', where: frameText(b.user_frame), code: frameCode(b.user_frame), event: payloadRef(b.event) })),
    cache: list(e.cache).map((c) => ({ cache: text(c.cache) || '', outcome: text(c.outcome) || '', reason: text(c.reason), event: payloadRef(c.event), time: cacheTime(c) })),
    collectives: list(e.graphs).filter((g) => g.kind === 'dynamo_output_graph').flatMap((g) => list(g.collectives))
      .map((c) => [text(c.op) || '?', text(c.tensor), ...(Array.isArray(c.args) ? c.args : []).flatMap((a) => text(a) ?? [])].filter(Boolean).join(' ')),
    scheduled: (Array.isArray(e.collective_schedules) ? e.collective_schedules : [])
      .map((ops) => (Array.isArray(ops) ? ops.flatMap((op) => (typeof op === 'string' ? [op] : [])) : [])),
    capture: text(e.capture),
    calledAt: frameText(e.user_frame),
    unfinished: (Array.isArray(e.unfinished) ? e.unfinished : []).filter((p) => typeof p === 'string'),
    busiestLine: busiestLine(e.graphs),
    backwardS: typeof e.backward_s === 'number' && Number.isFinite(e.backward_s) ? e.backward_s : null,
    timeFix: describeFix(e.time_fix),
  };
}

/**
 * The first graph's `busiest_line` (format 1.49) as shown, or null.
 * @param {unknown} graphs compiles.json `graphs`
 * @returns {{ where: string, code: string, nodes: number, of: number } | null}
 */
function busiestLine(graphs) {
  for (const g of list(graphs)) {
    const line = isObject(g.busiest_line) ? g.busiest_line : null;
    const where = line ? frameText({ file: line.file, line: line.line }) : null;
    if (line && where && isInt(line.nodes) && isInt(g.nodes)) return { where, code: text(line.code) || '', nodes: line.nodes, of: g.nodes };
  }
  return null;
}

/**
 * A list of payload references, the malformed ones dropped.
 * @param {unknown} refs
 * @returns {PayloadRefView[]}
 */
function refsOf(refs) {
  return (Array.isArray(refs) ? refs : []).flatMap((r) => payloadRef(r) ?? []);
}

/**
 * One AOT Inductor compile (compiles.json `aot_inductor`, format 1.21) for display: tlscope read
 * it from its `compile_fx_aot` span and decided its status; every string is plain, untrusted text.
 * @typedef {object} AotInductorView
 * @property {number} index
 * @property {string | null} status
 * @property {string | null} calledAt `file:line` of the user line that called AOT Inductor
 * @property {string | null} calledCode that line's source
 * @property {number | null} durationS
 * @property {FailureView | null} failure
 * @property {PayloadRefView[]} graphs
 * @property {PayloadRefView[]} code
 * @property {number | null} rank the rank whose log holds it (a multi-rank job), else null
 */

/**
 * compiles.json's `aot_inductor` checked (malformed items dropped), or [] when `data` has none
 * (no AOT Inductor compile, or a file written before format 1.21).
 * @param {unknown} data a compiles.json
 * @param {number | null} [rank]
 * @returns {AotInductorView[]}
 */
export function readAotInductor(data, rank = null) {
  const items = isObject(data) && Array.isArray(data.aot_inductor) ? data.aot_inductor : [];
  return items.flatMap((item) => {
    if (!isObject(item) || !isInt(item.index)) return [];
    const time = isObject(item.time) ? item.time : {};
    return [{
      index: item.index,
      status: text(item.status),
      calledAt: frameText(item.user_frame),
      calledCode: frameCode(item.user_frame),
      durationS: typeof time.duration_s === 'number' && Number.isFinite(time.duration_s) ? time.duration_s : null,
      failure: describeFailure(item.failure),
      graphs: refsOf(item.graphs),
      code: refsOf(item.code),
      rank,
    }];
  });
}

/**
 * One vLLM compile (compiles.json `vllm`, format 1.22) for display, as tlscope read it: its config
 * as logged, each compile range's sentence (decided by tlscope) and each piece's references.
 * @typedef {object} VllmView
 * @property {number} index
 * @property {string | null} compileId the compile id it was logged under
 * @property {Array<[string, string]>} config each key and its value as text
 * @property {string[]} ranges each compile range's sentence
 * @property {Array<{ label: string, refs: PayloadRefView[] }>} pieces `submod_N, sizes a-b`, then the piece's graphs and code
 * @property {PayloadRefView | null} splitGraph
 * @property {number | null} rank the rank whose log holds it (a multi-rank job), else null
 */

/**
 * compiles.json's `vllm` checked (malformed items dropped), or [] when `data` has none.
 * @param {unknown} data a compiles.json
 * @param {number | null} [rank]
 * @returns {VllmView[]}
 */
export function readVllm(data, rank = null) {
  const items = isObject(data) && Array.isArray(data.vllm) ? data.vllm : [];
  return items.flatMap((item) => {
    if (!isObject(item) || !isInt(item.index)) return [];
    const config = isObject(item.config) ? item.config : {};
    return [{
      index: item.index,
      compileId: text(item.compile_id),
      config: Object.entries(config).map(([key, value]) => /** @type {[string, string]} */ ([key, String(value)])),
      ranges: (Array.isArray(item.ranges) ? item.ranges : []).flatMap((r) => (isObject(r) && typeof r.sentence === 'string' ? [r.sentence] : [])),
      pieces: (Array.isArray(item.piecewise) ? item.piecewise : []).flatMap((p) => {
        if (!isObject(p)) return [];
        const sizes = p.single_size === true ? `size ${p.range_start}` : `sizes ${p.range_start}-${p.range_end}`;
        return [{ label: `${text(p.submod) ?? '?'}, ${sizes}`, refs: [...refsOf(p.graphs), ...refsOf(p.code)] }];
      }),
      splitGraph: payloadRef(item.split_graph),
      rank,
    }];
  });
}

/**
 * What made inputs dynamic that no line of the code marked (compiles.json `dynamic`, format
 * 1.29), as tlscope decided it: its sentence, the TORCH_COMPILE_DYNAMIC_SOURCES value it
 * recommends, and each source; every string is plain, untrusted text.
 * @typedef {object} DynamicView
 * @property {string} sentence
 * @property {string | null} recommended
 * @property {string | null} configured
 * @property {Array<{ source: string, by: string, compileId: string | null, entries: string[] }>} sources
 * @property {PayloadRefView | null} profile the PGO profile read, if any
 * @property {number | null} rank the rank whose log says it (a multi-rank job), else null
 */

/**
 * compiles.json's `dynamic` checked, or null when `data` has none (nothing was made dynamic on
 * torch's own, or a file written before format 1.29).
 * @param {unknown} data a compiles.json
 * @param {number | null} [rank]
 * @returns {DynamicView | null}
 */
export function readDynamic(data, rank = null) {
  const found = isObject(data) && isObject(data.dynamic) ? data.dynamic : null;
  if (!found || typeof found.sentence !== 'string') return null;
  const sources = (Array.isArray(found.sources) ? found.sources : []).flatMap((s) => (isObject(s) && typeof s.source === 'string' ? [{
    source: s.source,
    by: text(s.by) ?? '',
    compileId: text(s.compile_id),
    entries: Array.isArray(s.entries) ? s.entries.filter((e) => typeof e === 'string') : [],
  }] : []));
  const profile = isObject(found.profile) ? payloadRef(found.profile.event) : null;
  return { sentence: found.sentence, recommended: text(found.recommended), configured: text(found.configured), sources, profile, rank };
}

/**
 * The compiles that ran under other settings than the run's first (compiles.json `settings`,
 * format 1.29), as tlscope decided them; every string is plain, untrusted text.
 * @typedef {object} SettingsView
 * @property {string | null} firstCompile
 * @property {Array<{ compileIds: string[], settings: Array<{ section: string, key: string, value: string | null, first: string | null }>, more: number }>} groups
 * @property {string} sentence
 * @property {number | null} rank the rank whose log says it (a multi-rank job), else null
 */

/**
 * compiles.json's `settings` checked, or null when `data` has none (every compile ran under the
 * first's settings, or a file written before format 1.29).
 * @param {unknown} data a compiles.json
 * @param {number | null} [rank]
 * @returns {SettingsView | null}
 */
export function readSettings(data, rank = null) {
  const found = isObject(data) && isObject(data.settings) ? data.settings : null;
  if (!found || typeof found.sentence !== 'string') return null;
  const groups = (Array.isArray(found.groups) ? found.groups : []).flatMap((g) => {
    if (!isObject(g) || !Array.isArray(g.compile_ids) || !Array.isArray(g.settings)) return [];
    const settings = g.settings.flatMap((s) => (isObject(s) && typeof s.section === 'string' && typeof s.key === 'string'
      ? [{ section: s.section, key: s.key, value: text(s.value), first: text(s.first) }] : []));
    return [{ compileIds: g.compile_ids.filter((c) => typeof c === 'string'), settings, more: isInt(g.more) ? g.more : 0 }];
  });
  return { firstCompile: text(found.first_compile), groups, sentence: found.sentence, rank };
}

/**
 * The kinds of compiles.json's `first_answers` (format 1.41; `slow_compile` since 1.43, `no_graph` 1.45, `unfinished` 1.48), in the
 * order a run says them.
 */
export const FIRST_ANSWER_KINDS = ['failure', 'unfinished', 'no_graph', 'graph_break', 'recompile', 'slow_compile'];

/**
 * One of the run's first answers (compiles.json `first_answers`, format 1.41), as tlscope decided
 * it: `text` is the whole line `tlscope LOG` printed (plain, untrusted text), `compileId` the
 * compile it is about.
 * @typedef {object} FirstAnswerView
 * @property {string} kind one of FIRST_ANSWER_KINDS
 * @property {string | null} compileId
 * @property {string} text
 * @property {number | null} rank the rank whose log says it (a multi-rank job; the lowest of
 *   those that say it, in ranks.json's `first_answers`), else null
 * @property {string | null} [who] the ranks that say it in words (`every rank`, `ranks 0-6`), in a job
 */

/**
 * compiles.json's `first_answers` checked, in the file's order: an item of a kind this reader
 * does not know, or without a string `text`, dropped; none in a file written before 1.41 (a
 * viewer does not find them again: tlscope decides them).
 * @param {unknown} data a compiles.json
 * @param {number | null} [rank]
 * @returns {FirstAnswerView[]}
 */
export function readFirstAnswers(data, rank = null) {
  return list(isObject(data) ? data.first_answers : null).flatMap((a) => firstAnswerOf(a, rank) ?? []);
}

/**
 * One first answer checked (compiles.json's, or a line of ranks.json's): null when its kind is
 * one this reader does not know or its `text` is no string.
 * @param {unknown} a
 * @param {number | null} rank
 * @returns {FirstAnswerView | null}
 */
export function firstAnswerOf(a, rank) {
  if (!isObject(a) || typeof a.kind !== 'string' || !FIRST_ANSWER_KINDS.includes(a.kind) || typeof a.text !== 'string') return null;
  return { kind: a.kind, compileId: typeof a.compile_id === 'string' ? a.compile_id : null, text: a.text, rank };
}

/**
 * What a compile's settings group says of it, in a line: `dynamo recompile_limit 2 (8 in [0/0])`;
 * null when the compile ran under the first compile's settings.
 * @param {SettingsView | null} settings
 * @param {string} cid
 * @returns {string | null}
 */
export function settingsText(settings, cid) {
  const group = settings ? settings.groups.find((g) => g.compileIds.includes(cid)) : undefined;
  if (!settings || !group) return null;
  const at = settings.firstCompile ? ` in ${settings.firstCompile}` : '';
  const said = group.settings.map((s) => `${s.section} ${s.key} ${s.value ?? 'absent'} (${s.first ?? 'absent'}${at})`);
  return said.join('; ') + (group.more ? `; ${group.more} more` : '');
}
