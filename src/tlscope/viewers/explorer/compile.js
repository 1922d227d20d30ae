// The detail pane's Compile tab: one compile id explained from compiles.json (docs/FORMAT.md
// section 14) through describeCompile (/lib/compiles.js): status (each rank's in a multi-rank
// folder), function, time and phases, why it recompiled (the recommended guard failure first,
// then every one, then what changed in the inputs), failure, graph breaks and cache lookups.
// Each payload reference is a button that selects its event in the table. Built only when the
// tab is shown; every log-derived string goes in with textContent.

import { NOT_LOGGED, describeCompile, frameText, settingsText } from '/lib/tlscope.js';
import { el } from './dom.js';

/**
 * @typedef {import('/lib/tlscope.js').CompileView} CompileView
 * @typedef {import('/lib/tlscope.js').PayloadRefView} PayloadRef
 * @typedef {import('/lib/tlscope.js').OpenedTrace} Trace
 * @typedef {{cid: string, rank: number | null}} CompileTarget
 * @typedef {{onRef: (ref: PayloadRef, target: CompileTarget) => void, onPickCid: (cid: string) => void, onRedraw: () => void}} Handlers
 * @typedef {import('/lib/tlscope.js').TraceCompile} TraceCompile
 * @typedef {{ ref: (ref: PayloadRef, label?: string) => HTMLButtonElement, cid: (id: string) => HTMLButtonElement }} Refs
 * @typedef {ReturnType<typeof hookOf>} CompileHook
 */


/**
 * @param {Document} doc
 * @param {string | null} status
 */
function badge(doc, status) {
  return el(doc, 'span', `badge s-${String(status || 'none').replace(/[^a-z_]/gi, '_')}`, status || 'no status');
}

/**
 * @param {Document} doc
 * @param {string} title
 */
function section(doc, title) {
  const box = el(doc, 'section', 'cp-sec');
  box.appendChild(el(doc, 'h4', '', title));
  return box;
}

/**
 * A button naming a payload reference's event; the caller wires its click.
 * @param {Document} doc
 * @param {PayloadRef} ref
 * @param {string} [label]
 */
function refButton(doc, ref, label) {
  const b = el(doc, 'button', 'cp-ref', `${label || ref.name || ref.kind} · log line ${ref.log_line ?? '?'}`);
  b.type = 'button';
  b.title = `Select this ${ref.kind} event (raw.jsonl line ${ref.raw_line}) in the table`;
  b.dataset.rawLine = String(ref.raw_line);
  return b;
}

/**
 * @param {Document} doc
 * @param {Array<[string, string | Node | null | undefined]>} rows
 */
function facts(doc, rows) {
  const dl = el(doc, 'dl', 'cp-facts');
  for (const [term, value] of rows) {
    if (value === null || value === undefined || value === '') continue;
    const dd = el(doc, 'dd');
    if (typeof value === 'string') dd.textContent = value;
    else dd.appendChild(value);
    dl.append(el(doc, 'dt', '', term), dd);
  }
  return dl;
}

/**
 * @param {Document} doc
 * @param {string[]} head
 * @param {Array<Array<string | Node | null | undefined>>} rows
 */
function table(doc, head, rows) {
  const t = el(doc, 'table', 'cp-table');
  const tr = el(doc, 'tr');
  for (const h of head) tr.appendChild(el(doc, 'th', '', h));
  t.appendChild(tr);
  for (const row of rows) {
    const r = el(doc, 'tr');
    for (const cell of row) {
      const td = el(doc, 'td');
      if (cell instanceof Node) td.appendChild(cell);
      else td.textContent = cell ?? '';
      r.appendChild(td);
    }
    t.appendChild(r);
  }
  return t;
}

/**
 * `where` and the source line under it, or "not logged".
 * @param {Document} doc
 * @param {string | null} where
 * @param {string | null} code
 */
function frameCell(doc, where, code) {
  const box = el(doc, 'div', 'cp-frame');
  box.appendChild(el(doc, 'span', where ? 'cp-where' : 'muted', where || NOT_LOGGED));
  if (code) box.appendChild(el(doc, 'code', 'cp-code', code));
  return box;
}

/** @param {CompileView} view */
function timeText(view) {
  if (view.durationS === null) return null;
  const phases = view.phases.map((p) => `${p.name} ${p.seconds.toFixed(3)} s${p.count > 1 ? ` (×${p.count})` : ''}`);
  // format 1.49: the backward AOTAutograd compiled at the first backward call, after the span.
  const backward = view.backwardS === null ? '' : `, and ${view.backwardS.toFixed(3)} s compiling its backward at the first backward call`;
  return `${view.durationS.toFixed(3)} s${backward}${phases.length ? ` — ${phases.join(', ')}` : ''}`;
}

/**
 * @param {Document} doc
 * @param {NonNullable<NonNullable<CompileView['recompile']>['recommended']>} rec
 */
function recommendedBox(doc, rec) {
  const box = el(doc, 'div', 'cp-rec');
  const head = el(doc, 'div', 'cp-rec-head');
  head.append(el(doc, 'span', 'cp-entry', rec.cacheEntry || '?'), el(doc, 'span', 'badge cp-kind', rec.kind), el(doc, 'span', 'cp-expl', rec.explanation));
  box.appendChild(head);
  if (rec.values) box.appendChild(el(doc, 'div', 'cp-values', rec.values));
  if (rec.where) box.appendChild(frameCell(doc, rec.where, rec.code));
  box.appendChild(el(doc, 'div', 'cp-why muted', `Recommended: ${rec.why}.`));
  return box;
}

/** The fix kinds whose `code` is an instruction in words, not code (format 1.46, 1.47, 1.49, 1.50). */
const INSTRUCTIONS = new Set(['pass_as_argument', 'stack_list', 'tensor_lr', 'compile_model', 'step_outside']);

/**
 * What to change so the size does not recompile (compiles.json's `fix`), so a slow compile is
 * faster (`time_fix`, kind `regional`), or so a graph break goes away (a distinct break's `fix`,
 * format 1.50: the Graph breaks view shows it too), as written.
 * @param {Document} doc
 * @param {NonNullable<NonNullable<CompileView['recompile']>['fix']>} fix
 */
export function fixBox(doc, fix) {
  const box = el(doc, 'div', 'cp-fix');
  // change_code: `code` is the user's line to change, at `where`; an instruction in words
  // (FORMAT.md "What to change": pass_as_argument, stack_list, tensor_lr) is said as it is; a slow
  // compile's `regional` time_fix (format 1.49) is a loop to run before the call; else a line to
  // add before the call.
  const change = fix.kind === 'change_code';
  box.append(el(doc, 'span', 'cp-sub', fixLead(fix.kind)), el(doc, INSTRUCTIONS.has(fix.kind) ? 'span' : 'code', 'cp-fix-code', fix.code));
  if (fix.where) box.appendChild(frameCell(doc, `${change || fix.kind === 'dynamic_false' ? 'at' : 'before'} ${fix.where}`, fix.whereCode));
  box.appendChild(el(doc, 'div', 'cp-why muted', fix.why));
  return box;
}

/**
 * The words before a fix's `code`, by its kind.
 * @param {string} kind
 */
function fixLead(kind) {
  if (kind === 'regional') return 'To compile faster, compile each block instead of the whole: ';
  if (INSTRUCTIONS.has(kind)) return 'To avoid it, ';
  return kind === 'change_code' ? 'To avoid it, change ' : 'To avoid it, add ';
}

/**
 * @param {Document} doc
 * @param {CompileView} view
 * @param {Refs} refs
 */
function recompileSection(doc, view, refs) {
  const sec = section(doc, 'Why it recompiled');
  const r = view.recompile;
  if (!r) {
    // A restarted attempt: the last attempt of the frame compile holds the metrics and the reasons.
    const text = view.restartedAs ? `This attempt was restarted as ${view.restartedAs}, whose entry holds why the frame was compiled again.` : 'A recompile, but no recompile_reasons were logged.';
    sec.appendChild(el(doc, 'p', 'muted', text));
    return sec;
  }
  if (r.recommended) sec.appendChild(recommendedBox(doc, r.recommended));
  if (r.fix) sec.appendChild(fixBox(doc, r.fix));
  // No values: Dynamo prints none for this kind of guard (dim_marking, grad_mode...), so a dash.
  const rows = r.guardFailures.map((g) => [g.cacheEntry || '?', g.kind, g.explanation, g.values ?? '—', frameCell(doc, g.where, g.code)]);
  sec.appendChild(el(doc, 'div', 'cp-sub', `Every cache entry's failed guard (${r.guardFailures.length}, newest first)`));
  sec.appendChild(table(doc, ['cache entry', 'kind', 'explanation', 'expected → actual', 'user frame'], rows));
  sec.appendChild(el(doc, 'div', 'cp-sub', `What changed in the inputs${r.comparedWith ? ` since ${r.comparedWith}` : ''}`));
  if (r.changes.length) sec.appendChild(table(doc, ['input', 'what', 'before → after'], r.changes.map((c) => [c.input, c.what, `${c.before} → ${c.after}`])));
  else sec.appendChild(el(doc, 'p', 'muted', 'No change to the inputs was logged.'));
  if (r.event) sec.appendChild(refs.ref(r.event, 'recompile_reasons'));
  return sec;
}

/**
 * Where this compile's dynamic dimensions come from: compiles.json's `symbols` created under it
 * (format 1.10), as the file says: source, range, the call that passed the input, and what
 * constrained it.
 * @param {Document} doc
 * @param {import('/lib/tlscope.js').SymbolEntry[]} symbols
 * @param {import('/lib/compiles.js').DynamicView | null} dynamic compiles.json's `dynamic` of the rank
 */
function symbolsSection(doc, symbols, dynamic) {
  const sec = section(doc, 'Dynamic dimensions');
  // format 1.18: an unbacked symbol torch's later passes made again stands for one listed here.
  const own = symbols.filter((s) => !s.retrace_of);
  const rows = own.map((s) => {
    const notes = (s.specializations || []).map((p) => `specialised to ${p.value ?? '?'}${p.user_frame ? ` at ${frameText(p.user_frame)}` : ''}${p.fix ? ` (fix: ${fixText(p.fix)})` : ''}`);
    if (s.guard_count) notes.push(`${s.guard_count} guard${s.guard_count === 1 ? '' : 's'}: ${(s.guards || []).slice(0, 3).join(', ')}`);
    if (s.failed_in && s.failed_in.length) notes.push(`its range failed ${s.failed_in.join(', ')}`);
    // format 1.15: a dimension kept dynamic under a guard a later size may break, and the line.
    if (s.fix) notes.push(`a size outside the guard compiles again (fix: ${fixText(s.fix)})`);
    const at = s.entered_at || s.traced_at || null;
    // format 1.29: why it is dynamic, decided by tlscope (null: the log does not say).
    const why = s.why ? WHY_WORDS[s.why] || s.why : '';
    // format 1.39: an unbacked symbol's operator (`item`, `nonzero`), decided by tlscope.
    const source = s.source || (s.op ? `${s.kind}: ${s.op}()` : s.kind || '');
    return [s.symbol, source, s.range || '', frameCell(doc, frameText(at), at && at.code ? at.code : null), why, notes.join('; ')];
  });
  sec.appendChild(table(doc, ['symbol', 'source', 'range', 'passed at', 'dynamic by', 'constrained by'], rows));
  // compiles.json `dynamic` (format 1.29): the run's answer, with the setting that asks for it.
  if (dynamic && own.some((s) => s.why === 'automatic' || s.why === 'profile' || s.why === 'configured')) {
    sec.appendChild(el(doc, 'p', 'cp-why-dynamic', `Why dynamic? ${dynamic.sentence}`));
  }
  const again = symbols.filter((s) => s.retrace_of);
  if (again.length) {
    const pairs = again.map((s) => `${s.symbol} = ${s.retrace_of}`).join(', ');
    sec.appendChild(el(doc, 'p', 'muted cp-retraces', `Made again by AOTAutograd and Inductor, with no line of their own: ${pairs}.`));
  }
  return sec;
}

/** `symbols[].why` (format 1.29; maybe_marked, dynamic_shapes and all_dynamic 1.32) in words. */
const WHY_WORDS = /** @type {Record<string, string>} */ ({
  marked: 'mark_dynamic',
  maybe_marked: 'maybe_mark_dynamic',
  all_dynamic: 'dynamic=True (every size starts dynamic)',
  dynamic_shapes: "torch.export's dynamic_shapes",
  configured: 'TORCH_COMPILE_DYNAMIC_SOURCES',
  automatic: 'automatic (a call changed it)',
  profile: 'the PGO profile read',
  data_dependent: 'the data (known only when the graph runs)',
});

/**
 * A specialisation's or a guard's fix (compiles.json, format 1.15) in a few words: compiles.json
 * decided it; this only says it.
 * @param {{ kind: string, code: string, where?: import('/lib/tlscope.js').SourceLocation | null }} fix
 */
function fixText(fix) {
  const at = fix.where ? frameText(fix.where) : '';
  if (fix.kind === 'dynamic_false') return `${fix.code}${at ? `, or change ${at}` : ''}`;
  return at ? `change ${at}: ${fix.code}` : fix.code;
}

/**
 * @param {Document} doc
 * @param {NonNullable<CompileView['failure']>} f
 * @param {Refs} refs
 */
function failureSection(doc, f, refs) {
  const sec = section(doc, 'Failure');
  sec.appendChild(facts(doc, [['type', f.type], ['reason', f.reason], ['user frame', frameCell(doc, f.where, f.code)]]));
  // torch's own fix hints in the failure (format 1.12), e.g. raising the recompile limit.
  for (const hint of [...f.hints, ...(f.docsUrl ? [f.docsUrl] : [])]) sec.appendChild(el(doc, 'p', 'cp-hint', `torch: ${hint}`));
  if (f.traceback) sec.appendChild(refs.ref(f.traceback, 'traceback'));
  else sec.appendChild(el(doc, 'p', 'muted', 'No traceback was logged (e.g. at the recompile limit).'));
  return sec;
}

/**
 * A vLLM compile logged under this compile id (compiles.json `vllm`, format 1.22): its config,
 * each compile range's sentence (tlscope's), and a row per piece with its graphs and code.
 * @param {Document} doc
 * @param {import('/lib/tlscope.js').VllmView} found
 * @param {Refs} refs
 */
function vllmSection(doc, found, refs) {
  const sec = section(doc, `vLLM compile ${found.index}: ${found.pieces.length} piecewise compiles`);
  sec.appendChild(facts(doc, found.config));
  for (const sentence of found.ranges) sec.appendChild(el(doc, 'p', '', sentence));
  if (found.splitGraph) sec.appendChild(refs.ref(found.splitGraph, 'split graph'));
  for (const piece of found.pieces) {
    const row = el(doc, 'div', 'cp-sub', `${piece.label}: `);
    for (const ref of piece.refs) row.append(refs.ref(ref, ref.name || ref.kind), ' ');
    sec.appendChild(row);
  }
  return sec;
}

/**
 * The AOT Inductor compiles (compiles.json `aot_inductor`, format 1.21): logged with no compile id,
 * among `[-/-]`'s events; tlscope read each from its span and decided its status.
 * @param {Document} doc
 * @param {import('/lib/tlscope.js').AotInductorView[]} compiles
 * @param {Refs} refs
 */
function aotInductorSection(doc, compiles, refs) {
  const sec = section(doc, `AOT Inductor compiles (${compiles.length})`);
  sec.appendChild(el(doc, 'p', 'muted', 'torch logs an AOT Inductor compile with no compile id: its events are among these.'));
  for (const c of compiles) {
    const time = c.durationS === null ? null : `${c.durationS.toFixed(2)} s`;
    const code = el(doc, 'span');
    for (const ref of [...c.code, ...c.graphs]) code.append(refs.ref(ref, ref.name || ref.kind), ' ');
    const failure = c.failure ? `${c.failure.type}: ${c.failure.reason}` : null;
    const rank = c.rank === null ? '' : ` (rank ${c.rank})`;
    sec.append(el(doc, 'div', 'cp-sub', `compile ${c.index}${rank}: ${c.status || '?'}`), facts(doc, [
      ['called at', c.calledAt ? `${c.calledAt}${c.calledCode ? `: ${c.calledCode}` : ''}` : null],
      ['time', time],
      ['failure', failure],
      ['code and graphs', code],
    ]));
  }
  return sec;
}

/**
 * @param {Document} doc
 * @param {CompileView['graphBreaks']} breaks
 * @param {Refs} refs
 */
function breaksSection(doc, breaks, refs) {
  const sec = section(doc, `Graph breaks (${breaks.length})`);
  sec.appendChild(table(doc, ['reason', 'user frame', 'event'], breaks.map((b) => [b.reason, frameCell(doc, b.where, b.code), b.event ? refs.ref(b.event) : ''])));
  return sec;
}

/**
 * @param {Document} doc
 * @param {CompileView['cache']} cache
 * @param {Refs} refs
 */
function cacheSection(doc, cache, refs) {
  const sec = section(doc, `Cache lookups (${cache.length})`);
  sec.appendChild(table(doc, ['cache', 'outcome', 'time', 'reason', 'event'], cache.map((c) => [c.cache, c.outcome, c.time ?? '', c.reason ?? '', c.event ? refs.ref(c.event) : ''])));
  return sec;
}

/**
 * What its graphs call and what Inductor scheduled (format 1.34): where a job's ranks hang, the
 * banner says which id and collective differ (ranks.json); this shows the rank's own, as logged.
 * @param {Document} doc
 * @param {CompileView} view
 */
function collectivesSection(doc, view) {
  const sec = section(doc, 'Collectives');
  /** @type {Array<[string, string]>} */
  const rows = view.collectives.length ? [['traced by Dynamo', view.collectives.join(', ')]] : [];
  view.scheduled.forEach((ops, n) => rows.push([`scheduled by Inductor${view.scheduled.length > 1 ? ` #${n + 1}` : ''}`, ops.join(', ') || 'none']));
  sec.appendChild(facts(doc, rows));
  return sec;
}

/**
 * The rank whose entry is shown: the one asked for, else the first with the merged status.
 * @param {Trace} trace
 * @param {TraceCompile} merged
 * @param {number | null | undefined} asked
 * @returns {number | null}
 */
function shownRank(trace, merged, asked) {
  if (!trace.multiRank || !merged || !merged.byRank) return null;
  const ranks = Object.keys(merged.byRank).map(Number).sort((a, b) => a - b);
  if (asked !== null && asked !== undefined && ranks.includes(asked)) return asked;
  return ranks.find((r) => merged.ranks && merged.ranks[r] === merged.status) ?? ranks[0] ?? null;
}

/**
 * @param {Document} doc
 * @param {TraceCompile} merged
 * @param {number | null} rank
 */
function rankButtons(doc, merged, rank) {
  const box = el(doc, 'span', 'cp-ranks');
  for (const [r, status] of Object.entries(merged.ranks || {})) {
    const b = el(doc, 'button', `cp-rank${Number(r) === rank ? ' on' : ''}`, `rank ${r}: ${status}`);
    b.type = 'button';
    b.dataset.rank = r;
    box.appendChild(b);
  }
  return box;
}

/**
 * @param {Document} doc
 * @param {string} cid
 * @param {string | null} status
 * @param {Node | null} [extra]
 */
function header(doc, cid, status, extra) {
  const head = el(doc, 'div', 'cp-head');
  head.append(el(doc, 'span', 'cp-id', cid), badge(doc, status));
  if (extra) head.appendChild(extra);
  return head;
}

/**
 * A fullgraph capture's API and call (compiles.json `capture`, decided by tlscope), else null.
 * @param {CompileView} view
 */
function captureText(view) {
  if (!view.capture) return null;
  const at = view.calledAt ? `, called at ${view.calledAt}` : '';
  return `${view.capture}${at}: its backend's records and metrics, logged outside any compile id, are this compile's`;
}

/**
 * What the test hook shows of a drawn compile id.
 * @param {CompileView} view
 * @param {number | null} rank
 * @param {string} source
 */
function hookOf(view, rank, source) {
  const rec = view.recompile && view.recompile.recommended;
  return {
    id: view.id,
    status: view.status,
    rank,
    ranks: view.ranks,
    source,
    recommended: rec ? { cache_entry: rec.cacheEntry, kind: rec.kind, explanation: rec.explanation, expected: rec.expected, actual: rec.actual, values: rec.values } : null,
    guardFailures: view.recompile ? view.recompile.guardFailures.length : 0,
    changes: view.recompile ? view.recompile.changes : [],
    fix: view.recompile && view.recompile.fix ? { code: view.recompile.fix.code, input: view.recompile.fix.input, dim: view.recompile.fix.dim, where: view.recompile.fix.where } : null,
    failure: view.failure ? { type: view.failure.type, reason: view.failure.reason, where: view.failure.where } : null,
    graphBreaks: view.graphBreaks.length,
    cache: view.cache.length,
    collectives: view.collectives,
    scheduled: view.scheduled,
    function: view.function,
    durationS: view.durationS,
    backwardS: view.backwardS,
    busiestLine: view.busiestLine,
    capture: view.capture,
    timeFix: view.timeFix ? { kind: view.timeFix.kind, code: view.timeFix.code, where: view.timeFix.where } : null,
  };
}

/**
 * What the test hook shows of a compile id drawn without its compiles.json entry.
 * @param {string} cid
 * @param {string | null} status
 * @param {string} source
 */
function bareHook(cid, status, source) {
  return { id: cid, status, rank: null, ranks: {}, source, recommended: null, guardFailures: 0, changes: [], fix: null, failure: null, graphBreaks: 0, cache: 0 };
}

/**
 * @param {Document} doc
 * @param {HTMLElement} body
 * @param {Trace} trace
 * @param {string} cid
 */
function withoutIndex(doc, body, trace, cid) {
  const status = trace.status(cid);
  body.append(header(doc, cid, status), el(doc, 'p', 'note', 'No compiles.json in this folder (written by an older tlscope): the status comes from compilation_metrics, and recompile reasons, failures, graph breaks and cache lookups are not indexed. Filter the table to this compile id to read its events.'));
  return bareHook(cid, status, trace.statusSource);
}

/**
 * The payload reference and compile id buttons of one drawn compile id.
 * @param {Document} doc
 * @param {CompileTarget} target
 * @param {Handlers} handlers
 * @returns {Refs}
 */
function refMaker(doc, target, handlers) {
  return {
    ref: (ref, label) => {
      const b = refButton(doc, ref, label);
      b.addEventListener('click', () => handlers.onRef(ref, target));
      return b;
    },
    cid: (id) => {
      const b = el(doc, 'button', 'cp-ref cp-cid', id);
      b.title = `Show compile id ${id}`;
      b.type = 'button';
      b.addEventListener('click', () => handlers.onPickCid(id));
      return b;
    },
  };
}

/**
 * Draw compile id `cid`'s entry (as rank `rank` logged it, in a multi-rank folder) into `box`.
 * @param {HTMLElement} box
 * @param {Trace} trace
 * @param {{ cid: string, rank: number | null, merged: TraceCompile, ranks: HTMLElement | null }} shown
 * @param {Handlers} handlers
 */
function drawEntry(box, trace, { cid, rank, merged, ranks }, handlers) {
  const doc = box.ownerDocument;
  const view = describeCompile(trace.compileEntry(cid, rank), { status: merged.status, ranks: merged.ranks });
  const refs = refMaker(doc, { cid, rank }, handlers);
  box.appendChild(header(doc, cid, view.status, ranks));
  if (view.status === 'outside') {
    box.appendChild(el(doc, 'p', 'muted', trace.statusText.get('outside') || 'Events logged outside any compilation.'));
    if (trace.aotInductor.length) box.appendChild(aotInductorSection(doc, trace.aotInductor, refs));
    return { ...hookOf(view, rank, trace.statusSource), aotInductor: trace.aotInductor.length };
  }
  if (rank !== null) box.appendChild(el(doc, 'div', 'cp-sub', `Details as rank ${rank} logged them`));
  box.appendChild(facts(doc, [
    ['function', view.function || NOT_LOGGED],
    ['captured by', captureText(view)],
    // format 1.48: the phases the log ended inside (tlscope read them; the page shows them).
    ['log ends inside', view.unfinished.length ? `${view.unfinished.join(' › ')}: no metrics were logged, as a compile that ends logs them` : null],
    ['time', timeText(view)],
    // format 1.49: the line a big Dynamo graph was mostly traced from (tlscope decided it).
    ['graph grew from', view.busiestLine ? `${view.busiestLine.nodes} of its graph's ${view.busiestLine.of} nodes: ${view.busiestLine.where}, \`${view.busiestLine.code}\`, traced again and again (a Python loop Dynamo unrolls, or a function called in one)` : null],
    ['recompile', view.isRecompile ? `yes: the frame was compiled before${view.recompile && view.recompile.comparedWith ? ` (compared with ${view.recompile.comparedWith}, the closest entry)` : ''}` : 'no: the first compile of this frame'],
    ['restart reasons', view.restartReasons.join('; ')],
    ['restarted as', view.restartedAs ? refs.cid(view.restartedAs) : null],
    // format 1.29: settings unlike the run's first compile's (a config changed, dynamic=False).
    ['settings', settingsText(trace.settingsOf(rank), cid)],
    ['status means', (view.status && trace.statusText.get(view.status)) || ''],
  ]));
  if (view.timeFix) box.appendChild(fixBox(doc, view.timeFix));
  const vllm = trace.vllm.filter((v) => v.compileId === cid && (rank === null || v.rank === null || v.rank === rank));
  for (const found of vllm) box.appendChild(vllmSection(doc, found, refs));
  if (view.recompile || view.isRecompile) box.appendChild(recompileSection(doc, view, refs));
  const symbols = trace.symbolsOf(cid, rank);
  if (symbols.length) box.appendChild(symbolsSection(doc, symbols, trace.dynamicOf(rank)));
  if (view.failure) box.appendChild(failureSection(doc, view.failure, refs));
  if (view.graphBreaks.length) box.appendChild(breaksSection(doc, view.graphBreaks, refs));
  if (view.cache.length) box.appendChild(cacheSection(doc, view.cache, refs));
  if (view.collectives.length || view.scheduled.length) box.appendChild(collectivesSection(doc, view));
  return { ...hookOf(view, rank, trace.statusSource), symbols: symbols.map((x) => x.symbol), vllm: vllm.map((v) => v.pieces.length) };
}

/**
 * The Compile tab. `draw(body, cid, rank)` fills `body` for compile id `cid` (`rank`: the rank
 * asked for in a multi-rank folder, or null) and returns what the test hook shows.
 * @param {Trace} trace
 * @param {Handlers} handlers
 */
export function createCompileTab(trace, handlers) {
  /** @type {Map<string, number>} compile id -> rank picked with the rank buttons */
  const picked = new Map();
  /**
   * @param {HTMLElement} body
   * @param {string | null} cid
   * @param {number | null} [asked]
   */
  function draw(body, cid, asked = null) {
    const doc = body.ownerDocument;
    const box = el(doc, 'div', 'cp');
    body.replaceChildren(box);
    if (!cid) {
      box.appendChild(el(doc, 'p', 'muted', 'Pick a compile id in the sidebar to see its status, why it recompiled, its failure, graph breaks and cache lookups.'));
      return null;
    }
    if (!trace.indexesRead) {
      // The explorer reads compiles.json after the first rows are drawn; this is drawn again then.
      box.append(header(doc, cid, trace.status(cid)), el(doc, 'p', 'muted', 'Reading compiles.json…'));
      return bareHook(cid, trace.status(cid), 'pending');
    }
    if (trace.statusSource !== 'compiles.json') return withoutIndex(doc, box, trace, cid);
    const merged = trace.compiles.get(cid);
    if (!merged) {
      box.append(header(doc, cid, trace.status(cid)), el(doc, 'p', 'muted', 'compiles.json has no entry for this compile id.'));
      return bareHook(cid, trace.status(cid), trace.statusSource);
    }
    const rank = shownRank(trace, merged, picked.has(cid) ? picked.get(cid) : asked);
    const ranks = trace.multiRank ? rankButtons(doc, merged, rank) : null;
    if (ranks) {
      ranks.addEventListener('click', (e) => {
        const b = e.target instanceof Element ? e.target.closest('[data-rank]') : null;
        if (!(b instanceof HTMLElement)) return;
        picked.set(cid, Number(b.dataset.rank));
        handlers.onRedraw();
      });
    }
    return drawEntry(box, trace, { cid, rank, merged, ranks }, handlers);
  }
  return { draw };
}
