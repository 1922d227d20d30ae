import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareCompileIds, sortCompileIds, compileIdOf, eventKey, eventLabel, eventSummary, formatState, guessLanguage,
  highlightJson, highlightPython, isSafeRelative, LazyHighlighter, perfettoUrl, readState, resolveFrames,
  scrollMapping, scrollTopFor, statusFromMetrics, MAX_HEIGHT, eventsApiFor, normalizeFilter,
} from '../../src/tlscope/viewers/lib/tlscope.js';

test('event key is the one non-context key', () => {
  assert.equal(eventKey({ timestamp: 't', frame_id: 0, dynamo_start: {}, log_line: 3 }), 'dynamo_start');
  assert.equal(eventKey({ timestamp: 't' }), '(none)');
  assert.equal(eventLabel({ artifact: { name: 'recompile_reasons' } }), 'artifact: recompile_reasons');
});

test('compile ids render as FORMAT.md section 7 says', () => {
  assert.equal(compileIdOf({ frame_id: 0, frame_compile_id: 0, attempt: 0 }), '[0/0]');
  assert.equal(compileIdOf({ frame_id: 0, frame_compile_id: 1, attempt: 1 }), '[0/1_1]');
  assert.equal(compileIdOf({ compiled_autograd_id: 0, frame_id: 2, frame_compile_id: 0 }), '[!0/2/0]');
  assert.equal(compileIdOf({}), '[-/-]');
  assert.equal(compileIdOf({ compiled_autograd_id: null, frame_id: null, frame_compile_id: null }), '[-/-]');
  assert.equal(compileIdOf({ frame_id: 3 }), '[3/-]');
  const ids = ['[1/0]', '[0/0_1]', '[-/-]', '[!0/2/0]', '[0/0]', '[10/0]', '[2/0]'];
  assert.deepEqual(ids.sort(compareCompileIds), ['[-/-]', '[0/0]', '[0/0_1]', '[1/0]', '[2/0]', '[10/0]', '[!0/2/0]']);
});

test('summaries are short plain text', () => {
  const s = eventSummary({ compilation_metrics: { fail_type: 'X', fail_reason: 'y'.repeat(500), co_name: 'f' } }, 100);
  assert.ok(s.length <= 100);
  assert.match(s, /^fail_type=X fail_reason=y+/);
  assert.equal(eventSummary({ export: null }), '');
  const stack = [{ filename: 0, line: 3, name: 'main' }, { filename: 1, line: 9, name: 'step' }];
  assert.equal(eventSummary({ dynamo_start: { stack } }), 'stack=2 frames, innermost step:9');
});

test('only relative paths inside the folder are safe', () => {
  for (const ok of ['payloads/a.txt', '-_0_0_0/x.html', 'rank_0/raw.jsonl']) assert.ok(isSafeRelative(ok), ok);
  for (const bad of ['/etc/passwd', '../x', 'a/../../b', 'javascript:alert(1)', 'https://evil/', 'a\\b', '', './a', 'C:/x']) {
    assert.ok(!isSafeRelative(bad), bad);
  }
});

test('frames resolve through the string table', () => {
  const table = ['a.py', null, 'c.py'];
  const frames = [
    { filename: 0, line: 1, name: 'f', loc: 'x = 1' },
    { filename: 1, line: 2, name: 'g' },
    { filename: 9, line: 3, name: 'h' },
    { uninterned_filename: 'u.py', filename: 0, line: 4, name: 'i' },
  ];
  assert.deepEqual(resolveFrames(frames, table).map((f) => f.file), ['a.py', '(unknown)', '(unknown)', 'u.py']);
  assert.deepEqual(resolveFrames('nope', table), []);
});

test('statuses derived from compilation metrics', () => {
  assert.equal(statusFromMetrics({ fail_type: 'E' }), 'failed');
  assert.equal(statusFromMetrics({ restart_reasons: ['graph break'] }), 'graph_break');
  assert.equal(statusFromMetrics({ graph_op_count: 0 }), 'empty');
  assert.equal(statusFromMetrics({ has_guarded_code: false }), 'empty');
  assert.equal(statusFromMetrics({ restart_reasons: [] }), 'ok');
  assert.equal(statusFromMetrics(null), null);
});

test('URL state round-trips, empty values dropped', () => {
  const state = { kind: 'artifact', cid: '[0/1_1]', q: 'a b&c=#', rank: 3, sel: '', row: null };
  const hash = formatState(state);
  assert.ok(!hash.includes('sel') && !hash.includes('row'));
  assert.deepEqual(readState(hash), { cid: '[0/1_1]', kind: 'artifact', q: 'a b&c=#', rank: '3' });
  assert.equal(formatState({}), '');
});

test('filters normalise', () => {
  assert.deepEqual(normalizeFilter({ kind: '', cid: '[0/0]', rank: '2', q: null }), { kind: null, cid: '[0/0]', rank: 2, q: null });
  assert.deepEqual(normalizeFilter({ rank: 'x' }), { kind: null, cid: null, rank: null, q: null });
});

test('Perfetto target: the public UI or a loopback one, nothing else', () => {
  assert.equal(perfettoUrl(null), 'https://ui.perfetto.dev/');
  assert.equal(perfettoUrl('http://127.0.0.1:9001/x.html'), 'http://127.0.0.1:9001/x.html');
  assert.equal(perfettoUrl('http://localhost:10000/'), 'http://localhost:10000/');
  assert.equal(perfettoUrl('https://evil.example/'), null);
  assert.equal(perfettoUrl('javascript:alert(1)'), null);
  assert.equal(perfettoUrl('http://127.0.0.1.evil.example/'), null);
});

test('events API URL of a served trace', () => {
  assert.equal(eventsApiFor('http://127.0.0.1:5/traces/abc/'), 'http://127.0.0.1:5/api/traces/abc/events');
  assert.equal(eventsApiFor('http://127.0.0.1:5/some/folder/'), null);
});

test('highlighting keeps every character and finds the obvious tokens', () => {
  const line = 'def forward(self, x: "f32[3]"):  # comment';
  const { tokens } = highlightPython(line);
  assert.equal(tokens.map((t) => t[1]).join(''), line);
  assert.deepEqual(tokens.filter((t) => t[0] === 'kw').map((t) => t[1]), ['def']);
  assert.deepEqual(tokens.filter((t) => t[0] === 'fn').map((t) => t[1]), ['forward']);
  assert.ok(tokens.some((t) => t[0] === 'com' && t[1] === '# comment'));
  const j = highlightJson('  "a": [1, "b", true],');
  assert.equal(j.tokens.map((t) => t[1]).join(''), '  "a": [1, "b", true],');
  assert.deepEqual(j.tokens.filter((t) => t[0]).map((t) => t[0]), ['key', 'num', 'str', 'kw']);
});

test('multi-line strings carry state to the lines on screen only', () => {
  const code = ['x = 1', "s = '''", 'inside def', "'''", 'def f(): pass'];
  const text = Array.from({ length: 300 }, () => code.join('\n')).join('\n');
  const h = new LazyHighlighter(text, 'python');
  assert.deepEqual(h.tokens(2), [['str', 'inside def']]);
  const far = 5 * 299 + 2;
  assert.deepEqual(h.tokens(far), [['str', 'inside def']]);
  assert.equal(h.tokens(far + 2).find((t) => t[0] === 'kw')[1], 'def');
  assert.equal(guessLanguage('{"a": 1}'), 'json');
  assert.equal(guessLanguage('class GraphModule(torch.nn.Module):\n    def forward'), 'python');
});

test('scaled scroll reaches the last of a million rows', () => {
  const args = { count: 1_000_000, rowHeight: 24, viewport: 600 };
  const top = scrollMapping({ ...args, scrollTop: 0 });
  assert.equal(top.first, 0);
  assert.equal(top.virtual, MAX_HEIGHT);
  const end = scrollMapping({ ...args, scrollTop: MAX_HEIGHT - 600 });
  assert.equal(end.first + Math.ceil((600 + end.offset) / 24) - 1, 999_999);
  for (const index of [0, 1, 12345, 500_000, 999_975]) {
    const st = Math.ceil(scrollTopFor({ ...args, index }));
    assert.equal(scrollMapping({ ...args, scrollTop: st }).first, index, `row ${index}`);
  }
  const small = scrollMapping({ count: 100, rowHeight: 24, viewport: 600, scrollTop: 48 });
  assert.deepEqual([small.first, small.offset, small.scale], [2, 0, 1]);
});

test('sortCompileIds orders as compareCompileIds does, with every kind of id', () => {
  const ids = ['[10/0]', '[-/-]', '[0/0_1]', '[!0/2/0]', '[0/0]', '[2/0]', '[1/0]', '[!1/0/0_2]', '[0/-]', '[-/3]', '[3/1_12]', '[3/1_2]'];
  for (let round = 0; round < 20; round += 1) {
    const shuffled = [...ids].sort(() => Math.random() - 0.5);
    const sorted = sortCompileIds(shuffled);
    assert.deepEqual(sorted, [...shuffled].sort(compareCompileIds));
    assert.notEqual(sorted, shuffled); // a new array: the caller's is left as it was
  }
});

test("ranks.json's collective mismatches are read as written, untrusted parts dropped", async () => {
  const { readDivergence } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const sentence = "[0/0]: ranks call different collectives: collective 1 is all_reduce f32[8, 16] 'sum' '0' on rank 0, all_reduce f32[9, 16] 'sum' '0' on rank 1; …";
  const div = readDivergence({
    divergence: {
      diverges: false, groups: [], not_on_every_rank: [],
      collectives: [{ id: '[0/0]', groups: [], at: 0, sentence }, { id: 3, sentence: 'x' }, 'junk', { id: '[1/0]' }],
    },
  });
  // Before format 1.34 a mismatch had no kind: read as `graph`, the Dynamo graphs' collectives.
  assert.deepEqual(div && div.collectives, [{ id: '[0/0]', kind: 'graph', sentence }]);
  // A ranks.json written before format 1.17 has none.
  assert.deepEqual(readDivergence({ divergence: { diverges: false } })?.collectives, []);
});

test("ranks.json's graph and settings mismatches are read as written (format 1.30), untrusted parts dropped", async () => {
  const { readDivergence } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const sentence = '[6/0] branchy_fn (_ranks.py:59): ranks traced different graphs: rank 0 calls sin(l_x_) at _ranks.py:62 (return x.sin() + rank), rank 1 cos(l_x_) at _ranks.py:63 (return x.cos() * rank); …';
  const div = readDivergence({
    divergence: {
      diverges: false, groups: [], not_on_every_rank: [], collectives: [],
      graphs: [
        { id: '[6/0]', kind: 'graph', groups: [{ ranks: [0, 2], function: 'branchy_fn (_ranks.py:59)', payload: 'payloads/a.txt' }, { ranks: [1, 'x'], function: 'branchy_fn (_ranks.py:59)', id: '[7/0]' }, { ranks: [] }, 'junk'], sentence },
        { id: '[7/0]', sentence: 'no kind' }, { id: 3, sentence: 'x' }, null, { id: '[1/0]' },
      ],
    },
  });
  // A group names its own compile id where its ranks number the function otherwise (1.31), else
  // the mismatch's; one naming no rank is dropped.
  const groups = [
    { ranks: [0, 2], id: '[6/0]', function: 'branchy_fn (_ranks.py:59)', payload: 'payloads/a.txt' },
    { ranks: [1], id: '[7/0]', function: 'branchy_fn (_ranks.py:59)', payload: null },
  ];
  assert.deepEqual(div && div.graphs, [{ id: '[6/0]', kind: 'graph', sentence, groups }, { id: '[7/0]', kind: 'graph', sentence: 'no kind', groups: [] }]);
  // A ranks.json written before format 1.30 has none.
  assert.deepEqual(readDivergence({ divergence: { diverges: false } })?.graphs, []);
  const settings = readDivergence({
    divergence: { settings: [{ ranks: [5, 6], than: [0], changed: [], sentence: 'ranks 5, 6 compiled under other settings than rank 0' }, { ranks: [1] }, 7] },
  });
  assert.deepEqual(settings && settings.settings, [{ id: null, ranks: [5, 6], than: [0], sentence: 'ranks 5, 6 compiled under other settings than rank 0' }]);
  // Format 1.38: a compile run under other settings on some ranks names its compile id.
  const patched = readDivergence({ divergence: { settings: [{ id: '[1/0]', ranks: [1], than: [0], sentence: '[1/0] step: rank 1 compiled it under other settings than rank 0' }, { id: 7, ranks: [2], than: [0], sentence: 'x' }] } });
  assert.deepEqual(patched && patched.settings.map((m) => m.id), ['[1/0]', null]);
  assert.deepEqual(readDivergence({ divergence: { diverges: false } })?.settings, []);
});

test("ranks.json's cache mismatches are read as written (format 1.36), untrusted parts dropped", async () => {
  const { readDivergence } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const sentence = '[4/0] forward (_ranks.py:40): caches answered differently on different ranks: fx_graph (ranks 0, 2, 3: 6 misses; rank 1: 2 hits and 4 misses); a rank whose cache missed compiled what a hit loads';
  const div = readDivergence({
    divergence: {
      caches: [
        { id: '[4/0]', groups: [{ ranks: [0, 2, 3], lookups: { fx_graph: { miss: 6 } } }], caches: ['fx_graph', 3], sentence },
        { id: '[5/0]', sentence: 'no caches named' }, { id: 5, sentence: 'x' }, null, { id: '[6/0]' },
      ],
    },
  });
  assert.deepEqual(div && div.caches, [{ id: '[4/0]', caches: ['fx_graph'], sentence }, { id: '[5/0]', caches: [], sentence: 'no caches named' }]);
  // A ranks.json written before format 1.36 compared none.
  assert.deepEqual(readDivergence({ divergence: { diverges: false } })?.caches, []);
});

test("ranks.json's frames are read as written (format 1.31), untrusted parts dropped", async () => {
  const { readDivergence } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const sentence = 'rank 0 compiled 1 function ranks 1, 2, 3 did not ([1/0] log_stats (ranks_shifted_4.py:22)); …';
  const div = readDivergence({
    divergence: {
      frames: [
        { ranks: [0, 'x'], than: [1, 2, 3], extra: [{ id: '[1/0]', function: 'log_stats (ranks_shifted_4.py:22)' }, { id: 1 }], missing: 'junk', renumbered: [[2, 1], [3, 2], [4], [5, 'x'], 'junk'], sentence },
        { ranks: [1] }, 'junk', null,
      ],
    },
  });
  const frame = { ranks: [0], than: [1, 2, 3], sentence, extra: [{ id: '[1/0]', function: 'log_stats (ranks_shifted_4.py:22)' }], missing: [], renumbered: [[2, 1], [3, 2]] };
  assert.deepEqual(div && div.frames, [frame]);
  // A ranks.json written before format 1.31 has none.
  assert.deepEqual(readDivergence({ divergence: { diverges: false } })?.frames, []);
});

test("ranks.json's rows' columns: a picked rank's id looked up by its function's column (format 1.33)", async () => {
  const { readDivergence, columnOf } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const log = '[1/0] log_stats (ranks_shifted_4.py:24)';
  const div = readDivergence({
    divergence: {
      not_on_every_rank: [{ id: log, ranks: [0] }],
      rows: [
        { ranks: [0, 'x'], collectives: [], sentence: 'rank 0: …', columns: { '[1/0]': log, '[2/0]': '[1/0]', '[3/0]': '[2/0]', '[4/0]': 7 } },
        { ranks: [1, 2, 3], collectives: [], sentence: 'ranks 1, 2, 3: …' },
        'junk',
      ],
    },
  });
  assert.ok(div);
  assert.deepEqual([...div.columns.keys()], [0]);
  // Rank 0's [1/0] is log_stats, which rank 0 alone compiled; its [3/0] (head) is every rank's [2/0].
  assert.deepEqual(div.notOnEveryRank.get(columnOf(div, 0, '[1/0]')), [0]);
  assert.equal(columnOf(div, 0, '[3/0]'), '[2/0]');
  assert.equal(div.notOnEveryRank.get(columnOf(div, 1, '[1/0]')), undefined);
  assert.equal(columnOf(div, 0, '[4/0]'), '[4/0]'); // not a string: dropped
  assert.deepEqual(readDivergence({ divergence: { diverges: false } })?.columns, new Map());
});

test('readExports: compiles.json exports as written (format 1.18, dynamo_error 1.19), malformed items dropped', async () => {
  const { readExports } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const where = { file: '/w/model.py', line: 22, name: 'forward', code: 'if k > 2:' };
  const file = {
    exports: [
      {
        index: 0, status: 'failed', sentence: 'Failed: export could not decide `k > 2`.', log_line: 3, called_at: null, program: null,
        issues: [
          { kind: 'data_dependent_error', title: 'Data Dependent Error (export failed)', sentence: 's', code_expr: 'k > 2', user_frame: where,
            fix: { kind: 'add', code: 'torch._check(k > 2)', where, why: 'w', docs_url: 'https://docs.pytorch.org/docs/stable/cond.html' }, count: 2, log_line: 9, raw_line: 7 },
          { kind: 'partial_graph', title: 'Tracing Failed', sentence: 'p', payload: { kind: 'make_fx_fail_partial', payload_filename: 'payloads/ab.txt', raw_line: 8, log_line: 10 }, log_line: 10, raw_line: 8 },
          { kind: 'dynamo_error', title: 'Dynamo Error (strict export)', sentence: 'd', reason: 'Constraints violated (b)!', log_line: 11, raw_line: 9 },
          { kind: 'guard_evaluated', title: 'Guard Evaluated', sentence: 'no line' },
          { kind: 3, title: 'x', sentence: 'y', log_line: 1 },
        ],
      },
      { index: 1, status: 'exported', sentence: 'Exported.', log_line: 20, program: { kind: 'exported_program', raw_line: 12, log_line: 20, payload_filename: 'payloads/cd.txt' } },
      { index: 2, status: 5, sentence: 'bad' },
      'junk',
    ],
  };
  const calls = readExports(file, 3);
  assert.deepEqual(calls.map((c) => [c.status, c.rank, c.issues.length]), [['failed', 3, 3], ['exported', 3, 0]]);
  const [dd, partial, dynamo] = calls[0].issues;
  assert.deepEqual(dd.ref, { kind: 'guard_on_data_dependent_error', raw_line: 7, log_line: 9, payload_filename: null });
  assert.deepEqual(dd.fix, { kind: 'add', code: 'torch._check(k > 2)', where, why: 'w', docsUrl: 'https://docs.pytorch.org/docs/stable/cond.html' });
  assert.equal(dd.count, 2);
  // A partial graph leads to its artifact (the payload reference).
  assert.deepEqual(partial.ref, { kind: 'make_fx_fail_partial', raw_line: 8, log_line: 10, payload_filename: 'payloads/ab.txt' });
  // Strict export's Dynamo failure (1.19) leads to the metrics record that holds it.
  assert.deepEqual(dynamo.ref, { kind: 'compilation_metrics', raw_line: 9, log_line: 11, payload_filename: null });
  assert.equal(calls[1].program && calls[1].program.raw_line, 12);
  // Since 1.23 Python names each issue's event: a data-dependent error read from strict export's
  // metrics is at its compilation_metrics record, not at a guard_on_data_dependent_error.
  const strict = readExports({ exports: [{ index: 0, status: 'failed', sentence: 's', issues: [
    { kind: 'data_dependent_error', title: 't', sentence: 's', log_line: 40, raw_line: 30, event_kind: 'compilation_metrics' },
  ] }] });
  assert.deepEqual(strict[0].issues[0].ref, { kind: 'compilation_metrics', raw_line: 30, log_line: 40, payload_filename: null });
  // A compiles.json written before format 1.18, or not a compiles.json, has none.
  assert.deepEqual(readExports({ compiles: [] }), []);
  assert.deepEqual(readExports(null), []);
});

test('readExportsNote: compiles.json exports_note (format 1.19) as written, else null', async () => {
  const { readExportsNote } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const note = 'torch logged none of torch.export\'s own events (TORCH_DTRACE was not set): only failed calls show.';
  assert.equal(readExportsNote({ exports: [], exports_note: note }), note);
  for (const data of [{ exports: [], exports_note: null }, { exports_note: '' }, { exports_note: 3 }, { compiles: [] }, null, 'junk']) {
    assert.equal(readExportsNote(data), null);
  }
});

test('readExports: a strict call traced, its end not logged (1.28 status traced, trace_id)', async () => {
  const { readExports } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  // corpus export_strict's third call, as compiles.json writes it.
  const traced = { index: 2, status: 'traced', sentence: "Traced: strict export's Dynamo trace of this call ended without error.", log_line: 40, called_at: null, program: null, issues: [], trace_id: '[0/0]' };
  const [call, older, odd] = readExports({ exports: [traced, { ...traced, trace_id: undefined }, { ...traced, trace_id: 7 }] });
  assert.deepEqual([call.status, call.traceId, call.issues.length], ['traced', '[0/0]', 0]);
  assert.equal(older.traceId, null);
  assert.equal(odd.traceId, null);
});

test('readCompileEntries: compiles.json entries in order, an entry without a string id dropped; null for no compiles.json', async () => {
  const { readCompileEntries } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const entries = [{ id: '[1/0]', status: 'ok' }, { id: 3 }, 'junk', null, { id: '[0/0]', status: 'failed' }];
  assert.deepEqual(readCompileEntries({ format_minor: 37, compiles: entries }), [entries[0], entries[4]]);
  // The first folders held a bare list.
  assert.deepEqual(readCompileEntries(entries)?.map((e) => e.id), ['[1/0]', '[0/0]']);
  assert.equal(readCompileEntries({ compiles: 'x' }), null);
  assert.equal(readCompileEntries(null), null);
});
