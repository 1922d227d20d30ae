// The shared conformance cases (tests/conformance/cases.json) under node: the JS client must answer
// them as tlscope's Python does (tests/test_conformance.py runs the same file under pytest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  InlineSource, STATUS_ORDER, compiledFunctionName, UNKNOWN_COMPILE_ID, compileIdOf, describeCompile, eventKey, openTrace, readFirstAnswers, readRanks, recommendedFailure, sortCompileIds, statusFromMetrics,
} from '../../src/tlscope/viewers/lib/tlscope.js';

const CASES = JSON.parse(readFileSync(new URL('../conformance/cases.json', import.meta.url), 'utf8'));
const bytes = (text) => new TextEncoder().encode(text);

test('the built-in status order is the vocabulary order; a compiles.json order is the one used', async () => {
  assert.deepEqual([...STATUS_ORDER], CASES.status_order);
  // A file's own status_order wins (a later format may add a status): across ranks the first shows.
  const order = ['ok', ...CASES.status_order.filter((s) => s !== 'ok')];
  const compiles = (status) => JSON.stringify({ format: 'tlscope', format_version: 1, format_minor: 3, statuses: {}, status_order: order, compiles: [{ id: '[0/0]', status }], graph_breaks: [] });
  const manifest = JSON.stringify({ format: 'tlscope', format_version: 1, raw_jsonl_events: 0, compile_ids: [{ id: '[0/0]' }] });
  const files = new Map([['multi_rank_summary.json', bytes(JSON.stringify([{ rank: 0 }, { rank: 1 }]))]]);
  for (const [rank, status] of [[0, 'failed'], [1, 'ok']]) {
    files.set(`rank_${rank}/manifest.json`, bytes(manifest));
    files.set(`rank_${rank}/raw.jsonl`, bytes('{"string_table":[]}\n'));
    files.set(`rank_${rank}/compiles.json`, bytes(compiles(status)));
  }
  const trace = await openTrace(new InlineSource(files));
  assert.deepEqual([...trace.statusOrder], order);
  assert.equal(trace.status('[0/0]'), 'ok');
  assert.equal(trace.severity('ok'), 0);
  assert.equal(trace.severity('no such status'), order.length);
});

test('multi_rank_summary.json statuses (tlparse words) map into the vocabulary', async () => {
  const summary = Object.entries(CASES.tlparse_words).map(([word], rank) => ({ rank, compiles: { [`[${rank}/0]`]: { status: word } } }));
  const files = new Map([['multi_rank_summary.json', bytes(JSON.stringify(summary))]]);
  for (const { rank } of summary) files.set(`rank_${rank}/raw.jsonl`, bytes('{"string_table":[]}\n'));
  const trace = await openTrace(new InlineSource(files));
  Object.values(CASES.tlparse_words).forEach((status, rank) => assert.equal(trace.status(`[${rank}/0]`), status));
});

test('status from one compilation_metrics record', () => {
  for (const c of CASES.status_from_metrics) assert.equal(statusFromMetrics(c.metrics), c.status, JSON.stringify(c.metrics));
});

test('the recommended guard failure is the one compiles.json records', () => {
  for (const c of CASES.recommended_failure) {
    const n = c.failures.length;
    const failures = c.failures.map((f, i) => ({ cache_entry: `[0/${n - 1 - i}]`, kind: f.kind, guard: f.guard ?? 'g', explanation: `e${i}` }));
    const recompile = { guard_failures: failures, recommended: c.index === null ? null : { index: c.index, why: c.why } };
    const found = recommendedFailure(recompile);
    assert.deepEqual(found && [found.index, found.why], c.index === null ? null : [c.index, c.why]);
    const view = describeCompile({ id: '[0/9]', recompile });
    if (c.index !== null) assert.equal(view.recompile.recommended.explanation, `e${c.index}`);
    // A file older than 1.3 records none: the newest entry, never a rule of the client's own.
    if (n) assert.equal(recommendedFailure({ guard_failures: failures }).index, 0);
  }
});

test('a compile\'s function as said', () => {
  for (const c of CASES.function_names) assert.equal(compiledFunctionName(c.entry), c.name, JSON.stringify(c.entry));
});

test('compile id display and order', () => {
  for (const c of CASES.compile_id_display) assert.equal(compileIdOf(c.event), c.display, JSON.stringify(c.event));
  const order = CASES.compile_id_order;
  assert.deepEqual(sortCompileIds([...new Set(order.events.map(compileIdOf))]), order.sorted);
  assert.deepEqual(sortCompileIds([UNKNOWN_COMPILE_ID, ...order.sorted]), [...order.sorted, UNKNOWN_COMPILE_ID]);
});

test('event keys', () => {
  for (const c of CASES.event_key) assert.equal(eventKey(c.event), c.key);
});

test('a job\'s ranks from its multi_rank_summary.json', async () => {
  for (const { summary, ranks } of CASES.job_ranks) {
    // A summary that lists no rank leaves the folder's own raw.jsonl (a dropped file) to read.
    const files = new Map([['multi_rank_summary.json', bytes(JSON.stringify(summary))], ['raw.jsonl', bytes('{"string_table":[]}\n')]]);
    for (const rank of ranks) files.set(`rank_${rank}/raw.jsonl`, bytes('{"string_table":[]}\n'));
    const trace = await openTrace(new InlineSource(files));
    assert.deepEqual(trace.ranks, ranks, JSON.stringify(summary));
  }
});

test('event filters', async () => {
  const spec = CASES.filters;
  const raw = ['{"string_table":[]}', ...spec.events.map((e) => JSON.stringify(e))].join('\n') + '\n';
  const rank = spec.part_rank;
  const files = new Map([
    ['multi_rank_summary.json', bytes(JSON.stringify([{ rank }]))],
    [`rank_${rank}/manifest.json`, bytes(JSON.stringify({ format: 'tlscope', format_version: 1, raw_jsonl_events: spec.events.length, compile_ids: [] }))],
    [`rank_${rank}/raw.jsonl`, bytes(raw)],
  ]);
  const trace = await openTrace(new InlineSource(files));
  await trace.loaded;
  for (const c of spec.cases) {
    await trace.events.setFilter(c.filter);
    const rows = [];
    for (let i = 0; i < trace.events.total; i += 1) rows.push(trace.events.row(i).log_line - 1);
    assert.deepEqual(rows, c.rows, JSON.stringify(c.filter));
  }
});

/**
 * What `readRanks` gives a view, as the plain lists tests/test_conformance.py's `_ranks_read`
 * makes of tlscope's Python reader.
 */
function ranksRead(read) {
  const div = read.divergence;
  const slow = read.stragglers;
  return {
    ranks: read.ranks,
    diverges: div.diverges,
    groups: div.groups.map((g) => [g.ranks, g.onlyHere, g.missing, g.sentence]),
    not_on_every_rank: [...div.notOnEveryRank].map(([id, ranks]) => [id, ranks]),
    rows: div.rows.map((r) => [r.ranks, r.collectives, r.sentence, Object.fromEntries(r.columns)]),
    collectives: div.collectives.map((c) => [c.id, c.kind, c.sentence]),
    graphs: div.graphs.map((m) => [m.id, m.kind, m.sentence, m.groups.map((g) => [g.ranks, g.id, g.function, g.payload])]),
    settings: div.settings.map((s) => [s.id, s.ranks, s.than, s.sentence]),
    frames: div.frames.map((f) => [f.ranks, f.than, f.extra.map((r) => [r.id, r.function]), f.missing.map((r) => [r.id, r.function]), f.renumbered, f.sentence]),
    caches: div.caches.map((c) => [c.id, c.caches, c.sentence]),
    said: div.said.map((s) => [s.list, s.title]),
    first_answers: read.firstAnswers && [read.firstAnswers.lines.map((a) => [a.kind, a.compileId, a.text, a.ranks, a.who]), read.firstAnswers.more],
    stragglers: slow && [slow.rule, slow.factor, slow.margin_s, slow.median_compile_time_s, slow.median_rank, slow.ranks.map((s) => [s.rank, s.compile_time_s, s.over_median_s, s.ratio, s.why])],
  };
}

test("ranks.json read as tlscope's Python reads it (real jobs' files, and older formats')", () => {
  assert.ok(CASES.ranks_json.cases.length >= 7);
  for (const { file, read } of CASES.ranks_json.cases) {
    const json = JSON.parse(readFileSync(new URL(`../conformance/${file}`, import.meta.url), 'utf8'));
    assert.deepEqual(ranksRead(readRanks(json)), read, file);
  }
  assert.equal(readRanks({ divergence: {} }), null, 'not a ranks.json: no rank lines');
});

test("compiles.json's first answers read as tlscope's Python reads them", () => {
  assert.ok(CASES.first_answers.cases.length >= 3);
  for (const { name, file, read } of CASES.first_answers.cases) {
    assert.deepEqual(readFirstAnswers(file, 3).map((a) => [a.kind, a.compileId, a.text]), read, name);
    assert.ok(readFirstAnswers(file, 3).every((a) => a.rank === 3), name);
  }
  assert.deepEqual(readFirstAnswers({ first_answers: [{ kind: 'failure', compile_id: '[0/0]' }, 'x', null] }), [], 'no text: dropped');
  assert.deepEqual(readFirstAnswers(null), []);
});
