// The detail pane's Compile tab: one compile id explained from compiles.json (docs/FORMAT.md
// section 14) through describeCompile (/lib/compiles.js): status (each rank's in a multi-rank
// folder), function, time and phases, why it recompiled (the recommended guard failure first,
// then every one, then what changed in the inputs), failure, graph breaks and cache lookups.
// Each payload reference is a button that selects its event in the table. Built only when the
// tab is shown; every log-derived string goes in with textContent.

import { NOT_LOGGED, describeCompile } from '/lib/tlscope.js';

/**
 * @typedef {import('/lib/tlscope.d.ts').CompileView} CompileView
 * @typedef {import('/lib/tlscope.d.ts').PayloadRef} PayloadRef
 * @typedef {import('/lib/tlscope.d.ts').Trace} Trace
 * @typedef {{cid: string, rank: number | null}} CompileTarget
 * @typedef {{onRef: (ref: PayloadRef, target: CompileTarget) => void, onPickCid: (cid: string) => void, onRedraw: () => void}} Handlers
 */

function el(doc, tag, cls, text) {
  const node = doc.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function badge(doc, status) {
  return el(doc, 'span', `badge s-${String(status || 'none').replace(/[^a-z_]/gi, '_')}`, status || 'no status');
}

function section(doc, title) {
  const box = el(doc, 'section', 'cp-sec');
  box.appendChild(el(doc, 'h4', '', title));
  return box;
}

/** A button naming a payload reference's event; the caller wires its click. */
function refButton(doc, ref, label) {
  const b = el(doc, 'button', 'cp-ref', `${label || ref.kind} · log line ${ref.log_line ?? '?'}`);
  b.type = 'button';
  b.title = `Select this ${ref.kind} event (raw.jsonl line ${ref.raw_line}) in the table`;
  b.dataset.rawLine = String(ref.raw_line);
  return b;
}

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

function table(doc, head, rows) {
  const t = el(doc, 'table', 'cp-table');
  const tr = el(doc, 'tr');
  for (const h of head) tr.appendChild(el(doc, 'th', '', h));
  t.appendChild(tr);
  for (const row of rows) {
    const r = el(doc, 'tr');
    for (const cell of row) {
      const td = el(doc, 'td');
      if (cell && typeof cell === 'object') td.appendChild(cell);
      else td.textContent = cell ?? '';
      r.appendChild(td);
    }
    t.appendChild(r);
  }
  return t;
}

/** `where` and the source line under it, or "not logged". */
function frameCell(doc, where, code) {
  const box = el(doc, 'div', 'cp-frame');
  box.appendChild(el(doc, 'span', where ? 'cp-where' : 'muted', where || NOT_LOGGED));
  if (code) box.appendChild(el(doc, 'code', 'cp-code', code));
  return box;
}

function timeText(view) {
  if (view.durationS === null) return null;
  const phases = view.phases.map((p) => `${p.name} ${p.seconds.toFixed(3)} s${p.count > 1 ? ` (×${p.count})` : ''}`);
  return `${view.durationS.toFixed(3)} s${phases.length ? ` — ${phases.join(', ')}` : ''}`;
}

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

function failureSection(doc, f, refs) {
  const sec = section(doc, 'Failure');
  sec.appendChild(facts(doc, [['type', f.type], ['reason', f.reason], ['user frame', frameCell(doc, f.where, f.code)]]));
  if (f.traceback) sec.appendChild(refs.ref(f.traceback, 'traceback'));
  else sec.appendChild(el(doc, 'p', 'muted', 'No traceback was logged (e.g. at the recompile limit).'));
  return sec;
}

function breaksSection(doc, breaks, refs) {
  const sec = section(doc, `Graph breaks (${breaks.length})`);
  sec.appendChild(table(doc, ['reason', 'user frame', 'event'], breaks.map((b) => [b.reason, frameCell(doc, b.where, b.code), b.event ? refs.ref(b.event) : ''])));
  return sec;
}

function cacheSection(doc, cache, refs) {
  const sec = section(doc, `Cache lookups (${cache.length})`);
  sec.appendChild(table(doc, ['cache', 'outcome', 'reason', 'event'], cache.map((c) => [c.cache, c.outcome, c.reason ?? '', c.event ? refs.ref(c.event) : ''])));
  return sec;
}

/** The rank whose entry is shown: the one asked for, else the first with the merged status. */
function shownRank(trace, merged, asked) {
  if (!trace.multiRank || !merged || !merged.byRank) return null;
  const ranks = Object.keys(merged.byRank).map(Number).sort((a, b) => a - b);
  if (asked !== null && ranks.includes(asked)) return asked;
  return ranks.find((r) => merged.ranks && merged.ranks[r] === merged.status) ?? ranks[0] ?? null;
}

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

function header(doc, cid, status, extra) {
  const head = el(doc, 'div', 'cp-head');
  head.append(el(doc, 'span', 'cp-id', cid), badge(doc, status));
  if (extra) head.appendChild(extra);
  return head;
}

/** What the test hook shows of a drawn compile id. */
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
    failure: view.failure ? { type: view.failure.type, reason: view.failure.reason, where: view.failure.where } : null,
    graphBreaks: view.graphBreaks.length,
    cache: view.cache.length,
    function: view.function,
    durationS: view.durationS,
  };
}

function withoutIndex(doc, body, trace, cid) {
  const status = trace.status(cid);
  body.append(header(doc, cid, status), el(doc, 'p', 'note', 'No compiles.json in this folder (written by an older tlscope): the status comes from compilation_metrics, and recompile reasons, failures, graph breaks and cache lookups are not indexed. Filter the table to this compile id to read its events.'));
  return { id: cid, status, rank: null, ranks: {}, source: trace.statusSource, recommended: null, guardFailures: 0, changes: [], failure: null, graphBreaks: 0, cache: 0 };
}

/**
 * The Compile tab. `draw(body, cid, rank)` fills `body` for compile id `cid` (`rank`: the rank
 * asked for in a multi-rank folder, or null) and returns what the test hook shows.
 * @param {Trace} trace
 * @param {Handlers} handlers
 */
export function createCompileTab(trace, handlers) {
  const picked = new Map(); // compile id -> rank picked with the rank buttons
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
      return { id: cid, status: trace.status(cid), rank: null, ranks: {}, source: 'pending', recommended: null, guardFailures: 0, changes: [], failure: null, graphBreaks: 0, cache: 0 };
    }
    if (trace.statusSource !== 'compiles.json') return withoutIndex(doc, box, trace, cid);
    const merged = trace.compiles.get(cid);
    if (!merged) {
      box.append(header(doc, cid, trace.status(cid)), el(doc, 'p', 'muted', 'compiles.json has no entry for this compile id.'));
      return { id: cid, status: trace.status(cid), rank: null, ranks: {}, source: trace.statusSource, recommended: null, guardFailures: 0, changes: [], failure: null, graphBreaks: 0, cache: 0 };
    }
    const rank = shownRank(trace, merged, picked.has(cid) ? picked.get(cid) : asked);
    const view = describeCompile(trace.compileEntry(cid, rank), { status: merged.status, ranks: merged.ranks });
    const target = { cid, rank };
    const refs = {
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
    const ranks = trace.multiRank ? rankButtons(doc, merged, rank) : null;
    if (ranks) {
      ranks.addEventListener('click', (e) => {
        const b = e.target.closest('[data-rank]');
        if (!b) return;
        picked.set(cid, Number(b.dataset.rank));
        handlers.onRedraw();
      });
    }
    box.appendChild(header(doc, cid, view.status, ranks));
    if (view.status === 'outside') {
      box.appendChild(el(doc, 'p', 'muted', trace.statusText.get('outside') || 'Events logged outside any compilation.'));
      return hookOf(view, rank, trace.statusSource);
    }
    if (rank !== null) box.appendChild(el(doc, 'div', 'cp-sub', `Details as rank ${rank} logged them`));
    box.appendChild(facts(doc, [
      ['function', view.function || NOT_LOGGED],
      ['time', timeText(view)],
      ['recompile', view.isRecompile ? `yes: the frame was compiled before${view.recompile && view.recompile.comparedWith ? ` (newest entry ${view.recompile.comparedWith})` : ''}` : 'no: the first compile of this frame'],
      ['restart reasons', view.restartReasons.join('; ')],
      ['restarted as', view.restartedAs ? refs.cid(view.restartedAs) : null],
      ['status means', trace.statusText.get(view.status) || ''],
    ]));
    if (view.recompile || view.isRecompile) box.appendChild(recompileSection(doc, view, refs));
    if (view.failure) box.appendChild(failureSection(doc, view.failure, refs));
    if (view.graphBreaks.length) box.appendChild(breaksSection(doc, view.graphBreaks, refs));
    if (view.cache.length) box.appendChild(cacheSection(doc, view.cache, refs));
    return hookOf(view, rank, trace.statusSource);
  }
  return { draw };
}
