// describeCompile and its parts (lib/compiles.js): one compiles.json entry made into what a view
// shows. Entries below are trimmed from real torch 2.13 logs (corpus recompiles_dynamic, FORMAT.md
// section 14); TLSCOPE_JS_TRACES (set by tests/test_js.py) adds every entry of real output folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  NOT_LOGGED, compiledFunctionName, describeCompile, formatChange, formatGuardFailure, frameText, payloadRef, topPhases,
} from '../../src/tlscope/viewers/lib/tlscope.js';

const gf = (cache_entry, kind, extra = {}) => ({ cache_entry, kind, explanation: `${kind} of ${cache_entry}`, guard: 'g', subject: 'x', expected: '1', actual: '2', user_frame: null, ...extra });

test('a guard failure is formatted without inventing a value', () => {
  // recompiles_dynamic [3/2]: the call's 'ccc' is nowhere in the log.
  const f = formatGuardFailure({ cache_entry: '[3/1]', kind: 'value', explanation: "mode changed: the entry was compiled for mode == 'bb'", expected: "'bb'", actual: null,
    user_frame: { file: 'corpus/scenarios/recompiles_dynamic.py', line: 31, name: 'limited', code: 'return x + len(mode)' } });
  assert.equal(f.actual, null);
  assert.equal(f.values, `'bb' → ${NOT_LOGGED}`);
  assert.equal(f.where, 'corpus/scenarios/recompiles_dynamic.py:31 in limited');
  assert.equal(f.code, 'return x + len(mode)');
  // dim_marking: Dynamo printed neither side.
  assert.equal(formatGuardFailure(gf('[0/2]', 'dim_marking', { expected: null, actual: null })).values, null);
  // dynamic_range: no expected, the new size as actual.
  assert.equal(formatGuardFailure(gf('[0/5]', 'dynamic_range', { expected: null, actual: '1' })).values, `${NOT_LOGGED} → 1`);
  // Hostile or odd input: strings stay strings, missing fields have defaults, nothing throws.
  const odd = formatGuardFailure({ kind: 7, explanation: null, guard: '<b>g</b>', expected: 3, actual: { a: 1 }, user_frame: { file: 5 } });
  assert.deepEqual([odd.kind, odd.explanation, odd.expected, odd.actual, odd.where], ['other', '<b>g</b>', '3', '{"a":1}', null]);
  assert.equal(formatGuardFailure(null).kind, 'other');
});

test('frames, changes, phases and payload references', () => {
  assert.equal(frameText({ file: 'a.py', line: 3, name: 'f' }), 'a.py:3 in f');
  assert.equal(frameText({ file: 'a.py' }), 'a.py');
  assert.equal(frameText(null), null);
  // Before 1.47 a change has no `name`: said as Dynamo's source.
  assert.deepEqual(formatChange({ input: "L['x']", what: 'marked_dynamic', before: '[]', after: '[0]' }), { input: "L['x']", source: "L['x']", what: 'marked_dynamic', before: '[]', after: '[0]' });
  // 1.47: as the code names it.
  assert.equal(formatChange({ input: "L['self']._modules['fc']", name: 'self.fc', what: 'presence', before: 'present', after: 'absent' }).input, 'self.fc');
  assert.equal(formatChange({ input: 'k', what: 'value', before: '2', after: null }).after, NOT_LOGGED);
  const phases = [{ name: 'dynamo', seconds: 9, count: 1 }, { name: 'a', seconds: 1, count: 1 }, { name: 'b', seconds: 3, count: 2 }, { name: 'c', seconds: 'x' }];
  assert.deepEqual(topPhases(phases).map((p) => p.name), ['b', 'a']);
  assert.equal(topPhases(phases, 1).length, 1);
  assert.equal(payloadRef({ kind: 'dynamo_error', raw_line: 12, log_line: 40, payload_filename: 'payloads/x.txt' }).raw_line, 12);
  for (const bad of [null, { raw_line: '3' }, { raw_line: 1 }, { raw_line: 2.5 }]) assert.equal(payloadRef(bad), null);
  // A graph_dump's name (1.25, corpus aoti): kept when it is a string, absent otherwise.
  const dump = { kind: 'graph_dump', raw_line: 90, log_line: 300, payload_filename: 'payloads/w.txt', name: 'inductor_aot_wrapper_code' };
  assert.equal(payloadRef(dump).name, 'inductor_aot_wrapper_code');
  for (const name of [undefined, null, '', 7]) assert.equal('name' in payloadRef({ ...dump, name }), false);
});

test('describeCompile: a failed recompile at the limit', () => {
  const entry = {
    id: '[3/2]', status: 'failed', is_recompile: true, restarted_as: null, restart_reasons: [],
    function: { file: '$CWD/corpus/scenarios/recompiles_dynamic.py', line: 29, name: 'limited' },
    time: { duration_s: 0.01 }, phases: [{ name: 'dynamo', seconds: 0.01, count: 1 }],
    recompile: { reason: "3/1: mode == 'bb'", compared_with: '[3/1]', changes: [],
      guard_failures: [gf('[3/1]', 'value', { actual: null }), gf('[3/0]', 'value', { actual: null })],
      event: { kind: 'recompile_reasons', raw_line: 327, log_line: 41343, payload_filename: 'payloads/a.txt' } },
    failure: { type: 'FailOnRecompileLimitHit', reason: 'Dynamo recompile limit exceeded', user_frame: null, traceback: null },
    graph_breaks: [], cache: [{ cache: 'fx_graph', outcome: 'bypass', key: null, reason: 'r', event: { kind: 'fx_graph_cache_bypass', raw_line: 5, log_line: 9 } }],
  };
  const view = describeCompile(entry, { status: 'failed', ranks: { 0: 'failed' } });
  assert.equal(view.function, 'limited at $CWD/corpus/scenarios/recompiles_dynamic.py:29');
  assert.equal(view.recompile.recommended.cacheEntry, '[3/1]');
  assert.equal(view.recompile.recommended.actual, null);
  assert.equal(view.recompile.guardFailures.length, 2);
  assert.equal(view.recompile.event.raw_line, 327);
  // A compiles.json older than 1.12 has no hints: none shown.
  assert.deepEqual(view.failure, { type: 'FailOnRecompileLimitHit', reason: 'Dynamo recompile limit exceeded', where: null, code: null, traceback: null, hints: [], docsUrl: null });
  const hinted = describeCompile({ ...entry, failure: { ...entry.failure, hints: ['Raise recompile_limit.', 7], docs_url: 'https://x/gb0039.html' } });
  assert.deepEqual([hinted.failure.hints, hinted.failure.docsUrl], [['Raise recompile_limit.'], 'https://x/gb0039.html']);
  assert.deepEqual(view.cache, [{ cache: 'fx_graph', outcome: 'bypass', reason: 'r', event: { kind: 'fx_graph_cache_bypass', raw_line: 5, log_line: 9, payload_filename: null }, time: null }]);
  assert.deepEqual(view.phases, []);
  assert.deepEqual(view.ranks, { 0: 'failed' });
  // format 1.48: the phases the log ended inside, as tlscope wrote them; none for any other compile.
  assert.deepEqual(view.unfinished, []);
  const cut = describeCompile({ ...entry, status: 'metrics_missing', unfinished: ['dynamo', 'compile_attempt', 7, 'backend_compile'] });
  assert.deepEqual(cut.unfinished, ['dynamo', 'compile_attempt', 'backend_compile']);
  assert.deepEqual(describeCompile({ ...entry, unfinished: 'dynamo' }).unfinished, []);
  // format 1.49: a slow compile's time_fix as tlscope wrote it; null when absent or malformed.
  assert.equal(view.timeFix, null);
  assert.equal(view.backwardS, null);
  assert.equal(view.busiestLine, null);
  const graphs = [{ kind: 'aot_forward_graph', nodes: 9 }, { kind: 'dynamo_output_graph', nodes: 601, busiest_line: { file: 'a.py', line: 18, code: 'x = f(x)', nodes: 600 } }];
  assert.deepEqual(describeCompile({ ...entry, graphs }).busiestLine, { where: 'a.py:18', code: 'x = f(x)', nodes: 600, of: 601 });
  assert.equal(describeCompile({ ...entry, graphs: [{ nodes: 601, busiest_line: { file: 'a.py', line: 18, nodes: '600' } }] }).busiestLine, null);
  assert.equal(describeCompile({ ...entry, backward_s: 5.64 }).backwardS, 5.64);
  assert.equal(describeCompile({ ...entry, backward_s: '5.64' }).backwardS, null);
  const where = { file: 'train.py', line: 35, name: '<module>', code: 'model(x)' };
  const timed = describeCompile({ ...entry, time_fix: { kind: 'regional', input: 'model.layers', source: "L['self']._modules['layers']", dim: null, code: 'for block in model.layers: block.compile()', where, why: 'w' } });
  assert.deepEqual(timed.timeFix, { kind: 'regional', input: 'model.layers', dim: null, code: 'for block in model.layers: block.compile()', where: 'train.py:35 in <module>', whereCode: 'model(x)', why: 'w' });
  assert.equal(describeCompile({ ...entry, time_fix: { kind: 'regional', code: 7 } }).timeFix, null);
  // Nothing logged at all: an empty view, no throw.
  const empty = describeCompile({ id: '[9/0]' });
  assert.deepEqual([empty.status, empty.function, empty.recompile, empty.failure, empty.graphBreaks, empty.cache], [null, null, null, null, [], []]);
});

const REAL = process.env.TLSCOPE_JS_TRACES ? JSON.parse(process.env.TLSCOPE_JS_TRACES) : null;

test('every entry of real compiles.json files is described', { skip: !REAL && 'TLSCOPE_JS_TRACES not set (run through pytest)' }, () => {
  let described = 0;
  for (const folder of Object.values(REAL)) {
    const files = [join(folder, 'compiles.json'), join(folder, 'rank_0', 'compiles.json'), join(folder, 'rank_1', 'compiles.json')].filter(existsSync);
    for (const file of files) {
      for (const entry of JSON.parse(readFileSync(file, 'utf8')).compiles) {
        const view = describeCompile(entry);
        assert.equal(view.id, entry.id);
        assert.equal(view.status, entry.status);
        assert.equal(view.graphBreaks.length, entry.graph_breaks.length);
        assert.equal(view.cache.length, entry.cache.length);
        assert.equal(view.failure === null, entry.failure === null);
        assert.equal(view.recompile === null, entry.recompile === null);
        if (entry.failure) assert.equal(view.failure.type, entry.failure.type);
        for (const b of view.graphBreaks) assert.ok(b.event === null || Number.isInteger(b.event.raw_line));
        described += 1;
      }
    }
  }
  assert.ok(described > 10, `${described} entries`);
});

test('readAotInductor: compiles.json aot_inductor (format 1.21) as written, malformed items dropped', async () => {
  const { readAotInductor } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const call = { file: '$CWD/corpus/scenarios/aoti.py', line: 27, name: 'main', code: 'package = torch._inductor.aoti_compile_and_package(program)' };
  const file = {
    aot_inductor: [
      {
        index: 0, status: 'ok', user_frame: call, time: { duration_s: 12.92, source: 'compilation_metrics' },
        graphs: [{ kind: 'inductor_post_grad_graph', payload_filename: 'payloads/aa.txt', raw_line: 12, log_line: 1051 }],
        code: [{ kind: 'graph_dump', payload_filename: 'payloads/bb.txt', raw_line: 14, log_line: 1527 }, { kind: 'graph_dump', raw_line: 1 }],
        failure: null,
      },
      { index: 1, status: 'failed', failure: { type: 'CppCompileError', reason: 'boom', user_frame: null }, time: { duration_s: 'soon' } },
      { index: 'two' },
      'junk',
    ],
  };
  const found = readAotInductor(file, 2);
  assert.deepEqual(found.map((c) => [c.index, c.status, c.rank, c.durationS]), [[0, 'ok', 2, 12.92], [1, 'failed', 2, null]]);
  assert.equal(found[0].calledAt, '$CWD/corpus/scenarios/aoti.py:27 in main');
  assert.equal(found[0].calledCode, call.code);
  // A reference before raw.jsonl's first event line is no reference.
  assert.deepEqual(found[0].code.map((r) => r.log_line), [1527]);
  assert.equal(found[1].failure?.type, 'CppCompileError');
  assert.deepEqual(readAotInductor({ compiles: [] }), []);
  assert.deepEqual(readAotInductor(null), []);
});

test('readVllm: compiles.json vllm (format 1.22) as written: config as text, ranges as tlscope said them', async () => {
  const { readVllm } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  const dump = { kind: 'graph_dump', payload_filename: 'payloads/cc.txt', raw_line: 7, log_line: 13964 };
  const file = {
    vllm: [
      {
        index: 0, compile_id: '[0/0]', config: { model: 'meta-llama/Llama-3.1-8B', use_inductor_graph_partition: false, mode: 3 },
        split_graph: { kind: 'graph_dump', payload_filename: 'payloads/dd.txt', raw_line: 4, log_line: 6768 },
        ranges: [{ sentence: 'sizes 1-16384: 2 of 33 piecewise compiles logged' }, { sentence: 3 }],
        piecewise: [
          { index: 0, submod: 'submod_0', range_start: 1, range_end: 16384, graphs: [dump], code: [] },
          { index: 0, submod: 'submod_0', range_start: 8, range_end: 8, single_size: true, graphs: 'junk' },
          'junk',
        ],
      },
      { compile_id: '[1/0]' },
    ],
  };
  const [found, ...rest] = readVllm(file);
  assert.deepEqual(rest, []);
  assert.deepEqual(found.config, [['model', 'meta-llama/Llama-3.1-8B'], ['use_inductor_graph_partition', 'false'], ['mode', '3']]);
  assert.deepEqual(found.ranges, ['sizes 1-16384: 2 of 33 piecewise compiles logged']);
  assert.deepEqual(found.pieces.map((p) => [p.label, p.refs.length]), [['submod_0, sizes 1-16384', 1], ['submod_0, size 8', 0]]);
  assert.equal(found.splitGraph?.log_line, 6768);
  assert.deepEqual(readVllm({ vllm: 'x' }), []);
});

test('a cache lookup says what it saved or took, as logged (1.26)', () => {
  // corpus caches run2's hits and run1's FX graph miss: compiles.json `time_saved_s`, `time_taken_s`.
  const entry = (lookup) => describeCompile({ id: '[0/0]', status: 'cache_hit', cache: [{ cache: 'aotautograd', outcome: 'hit', event: null, ...lookup }] });
  assert.equal(entry({ time_saved_s: 8.81, time_taken_s: null }).cache[0].time, 'saved 8.81 s');
  assert.equal(entry({ outcome: 'miss', time_saved_s: null, time_taken_s: 8.624101 }).cache[0].time, 'took 8.62 s');
  for (const bad of [null, undefined, -1, 'x', Infinity, NaN]) assert.equal(entry({ time_saved_s: bad, time_taken_s: bad }).cache[0].time, null);
});

test('readDynamic: compiles.json dynamic (format 1.29) as tlscope decided it, hostile values dropped', async () => {
  const { readDynamic } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  // corpus pgo run2, trimmed: the PGO profile read made x dim 0 and k dynamic.
  const event = { kind: 'get_local_code_state', payload_filename: 'payloads/8943f5eaa39bf608015eca3f3c4ed300.txt', payload_size: 330, raw_line: 4, log_line: 71 };
  const file = { dynamic: {
    sources: [
      { source: "L['x']", input: 'x', dims: [0], by: 'profile', compile_id: '[0/0]', entries: ["L['x']:0"] },
      { source: "L['k']", input: 'k', dims: null, by: 'profile', compile_id: '[0/0]', entries: ["L['k']"] },
      { source: 7 }, 'junk',
    ],
    recommended: "L['x']:0,L['k']",
    configured: null,
    profile: { artifact: 'get_local_code_state', where: 'local', compile_id: '[0/0]', key: 'tlscope-pgo:None:', functions: 1, event },
    sentence: 'This run read a PGO profile…',
  } };
  const found = readDynamic(file, 3);
  assert.equal(found.rank, 3);
  assert.equal(found.recommended, "L['x']:0,L['k']");
  assert.deepEqual(found.sources.map((s) => [s.source, s.by, s.compileId, s.entries]), [["L['x']", 'profile', '[0/0]', ["L['x']:0"]], ["L['k']", 'profile', '[0/0]', ["L['k']"]]]);
  assert.equal(found.profile.payload_filename, 'payloads/8943f5eaa39bf608015eca3f3c4ed300.txt');
  // Older files, nothing said, or a sentence that is not text: nothing to show.
  assert.equal(readDynamic({ compiles: [] }), null);
  assert.equal(readDynamic({ dynamic: null }), null);
  assert.equal(readDynamic({ dynamic: { sentence: 5 } }), null);
  assert.equal(readDynamic(null), null);
});

test('readDynamic reads every real compiles.json as Python wrote it', { skip: !REAL && 'TLSCOPE_JS_TRACES not set (run through pytest)' }, async () => {
  const { readDynamic } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  let said = 0;
  for (const folder of Object.values(REAL)) {
    const files = [join(folder, 'compiles.json'), join(folder, 'rank_0', 'compiles.json'), join(folder, 'rank_1', 'compiles.json')].filter(existsSync);
    for (const file of files) {
      const data = JSON.parse(readFileSync(file, 'utf8'));
      const found = readDynamic(data);
      if (!data.dynamic) {
        assert.equal(found, null);
        continue;
      }
      // graph_breaks_repeated: automatic dynamic shapes on several functions, ___stack0 left out.
      assert.equal(found.sentence, data.dynamic.sentence);
      assert.equal(found.recommended, data.dynamic.recommended);
      assert.deepEqual(found.sources.map((s) => [s.source, s.by, s.compileId, s.entries]), data.dynamic.sources.map((s) => [s.source, s.by, s.compile_id, s.entries]));
      said += 1;
    }
  }
  assert.ok(said >= 1, `${said} files with a dynamic answer`);
});

test('readSettings and settingsText: compiles.json settings (format 1.29) as tlscope decided them', async () => {
  const { readSettings, settingsText } = await import('../../src/tlscope/viewers/lib/tlscope.js');
  // corpus recompiles_dynamic: a recompile limit set mid-run, then dynamic=False.
  const file = { settings: {
    first_compile: '[0/0]',
    groups: [
      { compile_ids: ['[3/0]', '[3/1]', 5], settings: [
        { section: 'dynamo', key: 'automatic_dynamic_shapes', value: 'False', first: 'True' },
        { section: 'dynamo', key: 'recompile_limit', value: '2', first: '8' },
        { section: 7 },
      ], more: 0 },
      'junk',
    ],
    sentence: '[3/0], [3/1] compiled under other settings than [0/0]: …',
  } };
  const found = readSettings(file, 1);
  assert.equal(found.rank, 1);
  assert.deepEqual(found.groups.map((g) => g.compileIds), [['[3/0]', '[3/1]']]);
  assert.equal(settingsText(found, '[3/1]'), 'dynamo automatic_dynamic_shapes False (True in [0/0]); dynamo recompile_limit 2 (8 in [0/0])');
  assert.equal(settingsText(found, '[0/1]'), null);
  assert.equal(settingsText(null, '[3/1]'), null);
  assert.equal(readSettings({ settings: null }), null);
  assert.equal(readSettings({ settings: { groups: [] } }), null);
  assert.equal(readSettings(undefined), null);
});

test("describeCompile: the collectives a compile's graphs call and Inductor scheduled (formats 1.17, 1.34)", () => {
  const view = describeCompile({
    id: '[0/0]',
    graphs: [
      { kind: 'dynamo_output_graph', collectives: [{ op: 'all_reduce', tensor: 'f32[8, 16][16, 1]cpu', args: ["'sum'", "'0'", 7] }, { op: 'broadcast', tensor: null, args: [] }] },
      { kind: 'aot_forward_graph', collectives: [{ op: 'ignored', tensor: null, args: [] }] },
    ],
    collective_schedules: [['torch.ops._c10d_functional.all_reduce_.default', 3, 'torch.ops._c10d_functional.wait_tensor.default'], 'junk'],
  });
  assert.deepEqual(view.collectives, ["all_reduce f32[8, 16][16, 1]cpu 'sum' '0' 7", 'broadcast']);
  assert.deepEqual(view.scheduled, [['torch.ops._c10d_functional.all_reduce_.default', 'torch.ops._c10d_functional.wait_tensor.default'], []]);
  assert.deepEqual([describeCompile({ id: '[0/1]' }).collectives, describeCompile({ id: '[0/1]' }).scheduled], [[], []]);
});

test("a module compiled through torch's wrapper is named by its class (format 1.46 module)", () => {
  // corpus simple: torch.compile(nn.Sequential(...)) compiles torch/_dynamo/external_utils.py's inner.
  const fn = { name: 'inner', file: '/v/torch/_dynamo/external_utils.py', line: 67 };
  assert.equal(compiledFunctionName({ function: fn, module: 'Sequential' }), 'Sequential.forward');
  assert.equal(describeCompile({ id: '[0/0]', function: fn, module: 'Sequential' }).function, 'Sequential.forward at /v/torch/_dynamo/external_utils.py:67');
  assert.equal(compiledFunctionName({ function: fn }), 'inner');
  assert.equal(compiledFunctionName({ function: fn, module: 7 }), 'inner'); // someone else's file: not a name
  assert.equal(compiledFunctionName(null), '');
});
