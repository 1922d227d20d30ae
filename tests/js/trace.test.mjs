// openTrace against folders on disk through a fetch that reads them (no server), and against a
// fake events API. TLSCOPE_JS_TRACES (set by tests/test_js.py) names real output folders made
// from the corpus: `single` and `multi`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { openTrace, InlineSource, FileSource, compileIdOf, eventKey, mergeGraphBreaks } from '../../src/tlscope/viewers/lib/tlscope.js';

// Every folder a test makes is removed when the file's tests end (they were left in the temp
// folder, 18 a run).
const made = [];
after(() => { for (const dir of made) rmSync(dir, { recursive: true, force: true }); });
function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'tlscope-js-'));
  made.push(dir);
  return dir;
}

const ranges = [];

function folderFetch(root, { api, encoded = false } = {}) {
  return async (url, init = {}) => {
    const u = new URL(url);
    if (api && u.pathname === api.path) return api.answer(u.searchParams);
    // tlscope serve's trace list: the client asks it whether the events API is there.
    if (api && u.pathname === '/api/traces') return Response.json([{ id: api.path.split('/')[3], url: `/traces/${api.path.split('/')[3]}/` }]);
    const file = join(root, decodeURIComponent(u.pathname));
    if (!existsSync(file)) return new Response('no', { status: 404 });
    const body = readFileSync(file);
    const headers = { 'content-length': String(body.length), 'accept-ranges': 'bytes' };
    // As tlscope serve answers text: gzip-encoded whole files (fetch has decoded them), ranges as they are.
    if (encoded) headers['content-encoding'] = 'gzip';
    const range = init.headers && init.headers.Range && init.headers.Range.match(/^bytes=(\d+)-(\d+)$/);
    if (range) {
      ranges.push(u.pathname);
      return new Response(body.subarray(Number(range[1]), Number(range[2]) + 1), { status: 206 });
    }
    return new Response(init.method === 'HEAD' ? null : body, { status: 200, headers });
  };
}

function synthetic() {
  const dir = tempDir();
  const events = [];
  for (let i = 0; i < 50; i += 1) {
    const ev = { timestamp: `t${i}`, frame_id: i % 3, frame_compile_id: 0, attempt: 0, log_line: i + 1, process: 7 };
    if (i % 5 === 0) Object.assign(ev, { artifact: { name: `a${i}`, encoding: 'string' }, payload_filename: 'payloads/p.txt', payload_size: 5 });
    else if (i === 7) ev.compilation_metrics = { fail_type: 'Boom' };
    else ev.dynamo_start = { stack: [{ filename: 1, line: 3, name: 'fn' }] };
    events.push(ev);
  }
  const raw = [JSON.stringify({ string_table: ['a.py', 'b.py'] }), ...events.map((e) => JSON.stringify(e))].join('\n') + '\n';
  const manifest = {
    format: 'tlscope', format_version: 1, raw_jsonl_events: 50, ranks: [],
    compile_ids: ['[0/0]', '[1/0]', '[2/0]'].map((id) => ({ id })),
    events: { artifact: { count: 10 }, dynamo_start: { count: 39 }, compilation_metrics: { count: 1 }, str: { count: 2 } },
  };
  mkdirSync(join(dir, 'tr', 'payloads'), { recursive: true });
  writeFileSync(join(dir, 'tr', 'manifest.json'), JSON.stringify(manifest));
  writeFileSync(join(dir, 'tr', 'raw.jsonl.gz'), gzipSync(raw)); // only the .gz exists
  writeFileSync(join(dir, 'tr', 'payloads', 'p.txt'), 'hello');
  return { dir, events, raw };
}

test('a folder over HTTP: gz fallback, string table, filters, payloads, statuses', async () => {
  const { dir, events } = synthetic();
  const trace = await openTrace('http://x/tr/', { fetchImpl: folderFetch(dir) });
  await trace.loaded;
  assert.equal(trace.mode, 'local');
  assert.equal(trace.events.total, 50);
  assert.deepEqual(trace.compileIds, ['[0/0]', '[1/0]', '[2/0]']);
  assert.deepEqual(trace.stringTable(), ['a.py', 'b.py']);
  assert.deepEqual(trace.events.row(49), events[49]);
  assert.equal(trace.resolveFrames(events[1].dynamo_start.stack)[0].file, 'b.py');
  assert.equal(await trace.payload(events[0]), 'hello');
  assert.equal(trace.status('[1/0]'), 'failed');
  await trace.events.setFilter({ kind: 'artifact' });
  assert.equal(trace.events.total, 10);
  await trace.events.setFilter({ kind: 'artifact', cid: '[0/0]' });
  assert.deepEqual(Array.from({ length: trace.events.total }, (_, i) => trace.events.row(i).log_line), [1, 16, 31, 46]);
  await trace.events.setFilter({ q: 'A4' });
  assert.deepEqual(Array.from({ length: trace.events.total }, (_, i) => trace.events.row(i).artifact.name), ['a40', 'a45']);
  await trace.events.setFilter({ q: 'no such text' });
  assert.equal(trace.events.total, 0);
  await trace.events.setFilter({});
  assert.equal(trace.events.total, 50);
  assert.equal(trace.events.rowOfLine(20), 20);
});

test('a payload path that leaves the folder is never fetched', async () => {
  const { dir } = synthetic();
  const seen = [];
  const fetchImpl = folderFetch(dir);
  const trace = await openTrace('http://x/tr/', { fetchImpl: (u, i) => (seen.push(u), fetchImpl(u, i)) });
  assert.equal(await trace.payload({ payload_filename: '../../etc/passwd' }), null);
  assert.equal(await trace.payload({ payload_filename: 'https://evil/x' }), null);
  assert.ok(!seen.some((u) => u.includes('passwd') || u.includes('evil')));
});

test('inline (packed) and picked-file sources give the same events', async () => {
  const { events, raw } = synthetic();
  const manifest = { format: 'tlscope', raw_jsonl_events: 50, compile_ids: [] };
  const inline = new InlineSource(new Map([
    ['manifest.json', Buffer.from(JSON.stringify(manifest)).toString('base64')],
    ['raw.jsonl', gzipSync(raw).toString('base64')],
  ]));
  const a = await openTrace(inline);
  await a.loaded;
  assert.equal(a.events.total, 50);
  assert.deepEqual(a.events.row(3), events[3]);
  const files = [new File([raw], 'raw.jsonl')];
  Object.defineProperty(files[0], 'webkitRelativePath', { value: 'tl_out/raw.jsonl' });
  const b = await openTrace(FileSource.fromFiles(files));
  await b.loaded;
  assert.equal(b.events.total, 50);
  assert.deepEqual(b.compileIds, ['[0/0]', '[1/0]', '[2/0]']); // no manifest: from the events
});

test('above the limit, a served trace is paged through the events API', async () => {
  const { dir, events } = synthetic();
  const calls = [];
  const api = {
    path: '/api/traces/tr/events',
    answer(params) {
      calls.push(Object.fromEntries(params));
      let list = events;
      if (params.get('kind')) list = list.filter((e) => eventKey(e) === params.get('kind'));
      if (params.get('compile_id')) list = list.filter((e) => compileIdOf(e) === params.get('compile_id'));
      const offset = Number(params.get('offset'));
      const limit = Number(params.get('limit'));
      return Response.json({ total: list.length, offset, events: list.slice(offset, offset + limit) });
    },
  };
  const root = tempDir();
  mkdirSync(join(root, 'traces'));
  const { renameSync } = await import('node:fs');
  renameSync(join(dir, 'tr'), join(root, 'traces', 'tr'));
  const remote = await openTrace('http://x/traces/tr/', { fetchImpl: folderFetch(root, { api }), limits: { events: 10 } });
  assert.equal(remote.mode, 'remote');
  assert.equal(remote.events.total, 50);
  assert.deepEqual(remote.stringTable(), ['a.py', 'b.py']);
  assert.deepEqual(remote.events.row(3), events[3]);
  await remote.events.setFilter({ kind: 'artifact', cid: '[0/0]' });
  assert.equal(remote.events.total, 4);
  assert.equal(calls.at(-1).kind, 'artifact');
  assert.equal(calls.at(-1).compile_id, '[0/0]');
  assert.equal(remote.events.row(3).log_line, 46);
  // A compiles.json payload reference: in the paged view, found by its log line.
  assert.equal(await remote.rowOfRef({ raw_line: 47, log_line: 46 }), 3);
  assert.equal(await remote.rowOfRef({ raw_line: 48, log_line: 47 }), -1);
  const local = await openTrace('http://x/traces/tr/', { fetchImpl: folderFetch(root, { api }) });
  assert.equal(local.mode, 'local'); // below the limit: held in the tab
  // Held in the tab: found by its raw.jsonl line (line 1 is the string table).
  await local.events.setFilter({ kind: 'artifact', cid: '[0/0]' });
  assert.equal(await local.rowOfRef({ raw_line: 47, log_line: 46 }), 3);
  assert.equal(await local.rowOfRef({ raw_line: 48, log_line: 47 }), -1);
});

const REAL = process.env.TLSCOPE_JS_TRACES ? JSON.parse(process.env.TLSCOPE_JS_TRACES) : null;

test('real corpus traces: totals and compile ids match the manifests', { skip: !REAL && 'TLSCOPE_JS_TRACES not set (run through pytest)' }, async () => {
  for (const [name, folder] of Object.entries(REAL)) {
    const trace = await openTrace(`http://x/${name}/`, { fetchImpl: folderFetch(join(folder, '..')) });
    await trace.loaded;
    const lines = trace.parts.map((p) => readFileSync(join(folder, p.prefix, 'raw.jsonl'), 'utf8').split('\n').filter(Boolean).length - 1);
    assert.equal(trace.events.total, lines.reduce((a, b) => a + b, 0), name);
    assert.equal(trace.events.total, trace.expectedEvents, name);
    const ids = new Set(trace.parts.flatMap((p) => p.manifest.compile_ids.map((c) => c.id)));
    assert.deepEqual(new Set(trace.compileIds), ids, name);
    assert.equal(trace.multiRank, name === 'multi');
    for (const id of trace.compileIds) if (id !== '[-/-]') assert.ok(trace.status(id), `${name} ${id} has a status`);
    const withPayload = trace.events.row(0).payload_filename ? trace.events.row(0) : null;
    if (withPayload) assert.equal((await trace.payload(withPayload)).length > 0, true);
  }
});

test('past keepBytes the bytes are dropped and rows read again by range', async () => {
  const dir = tempDir();
  const lines = [JSON.stringify({ string_table: [] })];
  for (let i = 0; i < 3000; i += 1) lines.push(JSON.stringify({ timestamp: 't', frame_id: i % 7, frame_compile_id: 0, log_line: i + 1, artifact: { name: `n${i}` } }));
  mkdirSync(join(dir, 'tr'));
  writeFileSync(join(dir, 'tr', 'raw.jsonl'), `${lines.join('\r\n')}`); // CRLF, and no newline at the end
  writeFileSync(join(dir, 'tr', 'manifest.json'), JSON.stringify({ format: 'tlscope', raw_jsonl_events: 3000, compile_ids: [] }));
  const trace = await openTrace('http://x/tr/', { fetchImpl: folderFetch(dir), keepBytes: 1000 });
  await trace.loaded;
  const events = trace.events;
  assert.equal(events.dropped, true);
  assert.ok(events.lines.blocks.every((b) => b === null));
  const before = ranges.length;
  const wanted = [0, 1234, 2999];
  for (const i of wanted) if (events.row(i) === undefined) await events.loadBlock(events.lines.blockOf[i]);
  for (const i of wanted) assert.equal(events.row(i).log_line, i + 1);
  assert.ok(ranges.length > before);
  await events.setFilter({ q: 'N299' }); // n299, n2990..n2999: read back by runs of blocks
  assert.equal(events.total, 11);
  await events.setFilter({ q: 'n2999', cid: '[3/0]' });
  assert.equal(events.total, 1);
  for (let i = 0; i < 3000; i += 97) {
    if (events.event(i) === undefined) await events.loadBlock(events.lines.blockOf[i]);
    assert.equal(events.event(i).artifact.name, `n${i}`);
  }
  assert.ok(events.loadedBlocks.length <= 64);
});

test('compiles.json statuses across ranks: the worst shows, each rank remembered, meanings kept', async () => {
  const dir = tempDir();
  const statuses = { failed: 'it raised', graph_break: 'stopped at a break', ok: 'fine' };
  const perRank = [
    [{ id: '[0/0]', status: 'ok' }, { id: '[1/0]', status: 'graph_break' }],
    [{ id: '[0/0]', status: 'graph_break' }, { id: '[1/0]', status: 'ok' }, { id: '[2/0]', status: 'failed' }],
  ];
  writeFileSync(join(dir, 'multi_rank_summary.json'), JSON.stringify([{ rank: 0 }, { rank: 1 }]));
  for (const rank of [0, 1]) {
    const sub = join(dir, `rank_${rank}`);
    mkdirSync(sub);
    const ids = perRank[rank].map((c) => c.id);
    const raw = [JSON.stringify({ string_table: [] }), ...ids.map((id, i) => JSON.stringify({ frame_id: Number(id[1]), frame_compile_id: 0, log_line: i + 1, rank, dynamo_start: {} }))];
    writeFileSync(join(sub, 'raw.jsonl'), raw.join('\n') + '\n');
    writeFileSync(join(sub, 'manifest.json'), JSON.stringify({ format: 'tlscope', raw_jsonl_events: ids.length, ranks: [rank], compile_ids: ids.map((id) => ({ id })) }));
    writeFileSync(join(sub, 'compiles.json'), JSON.stringify({ format: 'tlscope', statuses, compiles: perRank[rank] }));
  }
  const trace = await openTrace('http://x/', { fetchImpl: folderFetch(dir) });
  await trace.loaded;
  assert.equal(trace.multiRank, true);
  assert.equal(trace.statusSource, 'compiles.json');
  assert.equal(trace.status('[0/0]'), 'graph_break');
  assert.equal(trace.status('[1/0]'), 'graph_break');
  assert.equal(trace.status('[2/0]'), 'failed');
  assert.deepEqual(trace.compiles.get('[0/0]').ranks, { 0: 'ok', 1: 'graph_break' });
  assert.equal(trace.statusText.get('graph_break'), 'stopped at a break');
});

test('bytes dropped while the file streams in; a text filter set mid-load still finds every line', async () => {
  const dir = tempDir();
  const lines = [JSON.stringify({ string_table: [] })];
  for (let i = 0; i < 4000; i += 1) lines.push(JSON.stringify({ frame_id: i % 5, frame_compile_id: 0, log_line: i + 1, artifact: { name: `n${i}` } }));
  mkdirSync(join(dir, 'tr'));
  writeFileSync(join(dir, 'tr', 'raw.jsonl'), lines.join('\n') + '\n');
  writeFileSync(join(dir, 'tr', 'manifest.json'), JSON.stringify({ format: 'tlscope', raw_jsonl_events: 4000, compile_ids: [] }));
  const inner = folderFetch(dir);
  let held = 0; // the most bytes of raw.jsonl the store held at once while loading
  let store = null;
  // As a browser's HTTP cache does: a request of a URL whose cached GET is still streaming waits
  // for it (Chromium: up to 20 s) unless it bypasses the cache. Such requests are listed here.
  let streaming = false;
  const waited = [];
  const slowFetch = async (url, init = {}) => {
    if (url.endsWith('/raw.jsonl') && streaming && init.cache !== 'no-store') waited.push(`${init.method || 'GET'} ${JSON.stringify(init.headers || {})}`);
    const response = await inner(url, init);
    if (!url.endsWith('/raw.jsonl') || response.status !== 200 || init.method === 'HEAD') return response;
    const body = new Uint8Array(await response.arrayBuffer());
    streaming = true;
    const stream = new ReadableStream({
      async pull(controller) {
        if (store) held = Math.max(held, store.lines.blocks.reduce((n, b) => n + (b ? b.length : 0), 0));
        const at = stream.at || 0;
        if (at >= body.length) {
          streaming = false;
          return controller.close();
        }
        await new Promise((r) => setTimeout(r, 1));
        controller.enqueue(body.slice(at, at + 4096));
        stream.at = at + 4096;
      },
    });
    return new Response(stream, { status: 200, headers: response.headers });
  };
  const trace = await openTrace('http://x/tr/', { fetchImpl: slowFetch, keepBytes: 20000 });
  store = trace.events;
  assert.ok(!trace.complete, 'the filter is set while loading');
  const filtered = store.setFilter({ q: 'N39' }); // n39, n390..n399, n3900..n3999
  await trace.loaded;
  await filtered;
  assert.equal(store.dropped, true);
  assert.ok(held < 40000, `held ${held} bytes at once`);
  const names = [];
  for (let i = 0; i < store.total; i += 1) {
    if (store.row(i) === undefined) await store.loadBlock(store.lines.blockOf[store.lineOf(i)]);
    names.push(store.row(i).artifact.name);
  }
  const expected = Array.from({ length: 4000 }, (_, i) => `n${i}`).filter((n) => n.startsWith('n39'));
  assert.deepEqual(names, expected);
  assert.deepEqual(waited, [], 'ranges read while raw.jsonl streamed in bypass the HTTP cache');
});

test('whole files sent gzip-encoded (as tlscope serve does) still drop bytes and read ranges', async () => {
  const dir = tempDir();
  const lines = [JSON.stringify({ string_table: [] })];
  for (let i = 0; i < 2000; i += 1) lines.push(JSON.stringify({ frame_id: 0, frame_compile_id: 0, log_line: i + 1, artifact: { name: `n${i}` } }));
  mkdirSync(join(dir, 'tr'));
  writeFileSync(join(dir, 'tr', 'raw.jsonl'), lines.join('\n') + '\n');
  writeFileSync(join(dir, 'tr', 'manifest.json'), JSON.stringify({ format: 'tlscope', raw_jsonl_events: 2000, compile_ids: [] }));
  const trace = await openTrace('http://x/tr/', { fetchImpl: folderFetch(dir, { encoded: true }), keepBytes: 1000 });
  await trace.loaded;
  assert.equal(trace.events.dropped, true);
  if (trace.events.row(1500) === undefined) await trace.events.loadBlock(trace.events.lines.blockOf[1500]);
  assert.equal(trace.events.row(1500).artifact.name, 'n1500');
});

test('remote mode: the first rows come from raw.jsonl before the events API answers', async () => {
  const { dir, events } = synthetic();
  let release;
  let gate = new Promise((resolve) => {
    release = resolve;
  });
  const api = {
    path: '/api/traces/tr/events',
    async answer(params) {
      await gate; // the server is still indexing
      const offset = Number(params.get('offset'));
      return Response.json({ total: events.length, offset, events: events.slice(offset, offset + Number(params.get('limit'))) });
    },
  };
  const root = tempDir();
  mkdirSync(join(root, 'traces'));
  const { renameSync } = await import('node:fs');
  renameSync(join(dir, 'tr'), join(root, 'traces', 'tr'));
  const remote = await openTrace('http://x/traces/tr/', { fetchImpl: folderFetch(root, { api }), limits: { events: 10 } });
  let answered = false;
  remote.loaded.then(() => {
    answered = true;
  });
  assert.equal(remote.mode, 'remote');
  assert.equal(remote.events.total, 50); // from the manifest
  assert.deepEqual(remote.events.row(0), events[0]);
  assert.deepEqual(remote.events.row(49), events[49]); // the whole small file came with its first chunk
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(answered, false);
  release();
  await remote.loaded;
  gate = new Promise((resolve) => {
    release = resolve;
  });
  const filtered = remote.events.setFilter({ kind: 'artifact' });
  assert.equal(remote.events.row(1), undefined); // a filtered view never shows the head's rows
  release();
  await filtered;
  assert.equal(remote.events.row(1).log_line, 2);
});

test('statuses without compiles.json: restarted attempts, missing metrics, tlparse words mapped', async () => {
  const dir = tempDir();
  const ev = (cid, extra) => ({ frame_id: cid[0], frame_compile_id: cid[1], ...(cid[2] ? { attempt: cid[2] } : {}), ...extra });
  const raw = [
    { string_table: [] },
    { str: ['x', 1] },
    ev([0, 0], { dynamo_start: {} }),
    ev([0, 0, 1], { compilation_metrics: { restart_reasons: ['graph break'] } }),
    ev([1, 0], { dynamo_start: {} }),
    ev([2, 0], { compilation_metrics: { graph_op_count: 3 } }),
  ].map((e) => JSON.stringify(e)).join('\n') + '\n';
  writeFileSync(join(dir, 'multi_rank_summary.json'), JSON.stringify([{ rank: 0, compiles: { '[2/0]': { status: 'error' } } }]));
  mkdirSync(join(dir, 'rank_0'));
  writeFileSync(join(dir, 'rank_0', 'raw.jsonl'), raw);
  writeFileSync(join(dir, 'rank_0', 'manifest.json'), JSON.stringify({ format: 'tlscope', raw_jsonl_events: 5, compile_ids: [] }));
  const trace = await openTrace('http://x/', { fetchImpl: folderFetch(dir) });
  await trace.loaded;
  assert.deepEqual(trace.compileIds, ['[-/-]', '[0/0]', '[0/0_1]', '[1/0]', '[2/0]']);
  assert.deepEqual(trace.compileIds.map((id) => trace.status(id)), ['outside', 'restarted', 'graph_break', 'metrics_missing', 'failed']);
});

test('prefetched answers are used once, and their Content-Length spares the HEAD', async () => {
  const { dir, raw } = synthetic();
  writeFileSync(join(dir, 'tr', 'raw.jsonl'), raw);
  const inner = folderFetch(dir);
  const asked = [];
  const fetchImpl = (url, init = {}) => {
    asked.push(`${init.method || 'GET'} ${new URL(url).pathname}`);
    return inner(url, init);
  };
  const early = new Map(['manifest.json', 'multi_rank_summary.json', 'compiles.json', 'raw.jsonl'].map((f) => [f, inner(`http://x/tr/${f}`)]));
  // A limit that leaves raw.jsonl's size in doubt: without the prefetched answer, a HEAD asks it.
  const options = { limits: { bytes: 100000 }, api: 'http://x/api/traces/tr/events' };
  const trace = await openTrace('http://x/tr/', { ...options, fetchImpl, prefetch: { base: 'http://x/tr/', responses: early } });
  await trace.loaded;
  assert.equal(trace.events.total, 50);
  assert.equal(trace.mode, 'local');
  assert.deepEqual(asked, [], 'every request was answered by the prefetch');
  // Another trace's prefetch is never taken for this one; without it the size costs a HEAD.
  asked.length = 0;
  const other = await openTrace('http://x/tr/', { ...options, fetchImpl, prefetch: { base: 'http://x/other/', responses: early } });
  await other.loaded;
  assert.equal(other.events.total, 50);
  assert.ok(asked.includes('GET /tr/manifest.json') && asked.includes('HEAD /tr/raw.jsonl'), asked.join(', '));
});

test('the first rows are out before the rest of a big first chunk is indexed', async () => {
  const dir = tempDir();
  const n = 5000;
  const lines = [JSON.stringify({ string_table: [] })];
  for (let i = 0; i < n; i += 1) lines.push(JSON.stringify({ frame_id: 0, frame_compile_id: 0, attempt: 0, log_line: i + 1, dynamo_start: { i } }));
  mkdirSync(join(dir, 'tr'), { recursive: true });
  writeFileSync(join(dir, 'tr', 'raw.jsonl'), `${lines.join('\n')}\n`); // one response body: one chunk
  writeFileSync(join(dir, 'tr', 'manifest.json'), JSON.stringify({ format: 'tlscope', format_version: 1, raw_jsonl_events: n, compile_ids: ['[0/0]'] }));
  const trace = await openTrace('http://x/tr/', { fetchImpl: folderFetch(dir), api: null });
  assert.ok(trace.events.loadedEvents >= 100 && trace.events.loadedEvents < n, `indexed ${trace.events.loadedEvents} of ${n} when opened`);
  assert.equal(trace.events.row(0).log_line, 1);
  await trace.loaded;
  assert.equal(trace.events.total, n);
  assert.equal(trace.events.row(n - 1).log_line, n);
});

test('graph breaks of compiles.json merged over ranks: counts summed, ranks and compile ids kept', async () => {
  const frame = { file: 'm.py', line: 3, name: 'f', code: 'print(x)' };
  const merged = mergeGraphBreaks([
    { rank: 0, breaks: [{ reason: 'R1', user_frame: frame, count: 2, compile_ids: ['[0/0]', '[1/0]'] }, { reason: 'R2', user_frame: { file: 'm.py', line: 9 }, count: 1, compile_ids: ['[2/0]'] }] },
    { rank: 1, breaks: [{ reason: 'R1', user_frame: frame, count: 1, compile_ids: ['[0/0]'] }, { count: 3 }, null] },
    { rank: 2, breaks: undefined },
  ]);
  assert.deepEqual(merged.map((b) => [b.reason, b.count, b.ranks]), [['R1', 3, [0, 1]], ['R2', 1, [0]]]);
  assert.deepEqual(merged[0].sites, [{ cid: '[0/0]', rank: 0 }, { cid: '[1/0]', rank: 0 }, { cid: '[0/0]', rank: 1 }]);
  assert.deepEqual([merged[0].file, merged[0].line, merged[0].name, merged[0].code], ['m.py', 3, 'f', 'print(x)']);
  assert.deepEqual([merged[1].name, merged[1].code], [null, null]);
});

test("a distinct break's fix (format 1.50) is read as compiles.json says it, the first rank's kept", () => {
  const frame = { file: 'm.py', line: 7, name: 'step', code: 'log.info(x)' };
  const fix = { kind: 'ignore_logging', input: 'log.info', source: '', dim: null, code: 'torch._dynamo.config.ignore_logging_functions.add(log.info)', where: null, why: 'w' };
  const merged = mergeGraphBreaks([
    { rank: 0, breaks: [{ reason: 'R', user_frame: frame, count: 1, compile_ids: ['[0/0]'], fix }, { reason: 'S', user_frame: frame, count: 1, compile_ids: ['[1/0]'] }] },
    { rank: 1, breaks: [{ reason: 'R', user_frame: frame, count: 1, compile_ids: ['[0/0]'], fix: { ...fix, code: 'other' } }] },
  ]);
  assert.deepEqual(merged[0].fix, { kind: 'ignore_logging', input: 'log.info', dim: null, code: fix.code, where: null, whereCode: null, why: 'w' });
  // No fix, or one without its code (a file before 1.50, a broken one): none.
  assert.equal(merged[1].fix, null);
  assert.equal(mergeGraphBreaks([{ rank: null, breaks: [{ reason: 'R', user_frame: frame, count: 1, compile_ids: [], fix: { kind: 'x' } }] }])[0].fix, null);
});

test('a trace opened from a folder with compiles.json has its graph breaks', { skip: !REAL && 'TLSCOPE_JS_TRACES not set (run through pytest)' }, async () => {
  for (const [name, folder] of Object.entries(REAL)) {
    const trace = await openTrace(`http://x/${name}/`, { fetchImpl: folderFetch(join(folder, '..')) });
    const files = trace.multiRank ? trace.parts.map((p) => join(folder, p.prefix, 'compiles.json')) : [join(folder, 'compiles.json')];
    const total = files.reduce((n, f) => n + JSON.parse(readFileSync(f, 'utf8')).graph_breaks.reduce((m, b) => m + b.count, 0), 0);
    assert.equal(trace.graphBreaks.reduce((n, b) => n + b.count, 0), total, name);
    if (name === 'breaks') assert.ok(total > trace.graphBreaks.length, 'the corpus trace repeats its breaks');
    await trace.loaded;
  }
});

test('raw.jsonl sent gzip-encoded: no HEAD beside the prefetched GET (it could not tell the size); without a prefetch the HEAD bypasses the cache', async () => {
  const { dir, raw } = synthetic();
  writeFileSync(join(dir, 'tr', 'raw.jsonl'), raw);
  const inner = folderFetch(dir, { encoded: true });
  const asked = [];
  const fetchImpl = (url, init = {}) => {
    asked.push({ what: `${init.method || 'GET'} ${new URL(url).pathname}`, cache: init.cache });
    return inner(url, init);
  };
  const options = { limits: { bytes: 100000 }, api: 'http://x/api/traces/tr/events', fetchImpl };
  const early = new Map(['manifest.json', 'multi_rank_summary.json', 'compiles.json', 'raw.jsonl'].map((f) => [f, inner(`http://x/tr/${f}`)]));
  const trace = await openTrace('http://x/tr/', { ...options, prefetch: { base: 'http://x/tr/', responses: early } });
  await trace.loaded;
  assert.equal(trace.events.total, 50);
  // A HEAD of a URL whose GET is still unread waits on that GET in Chromium's HTTP cache (20 s,
  // tlscope serve, 40k case), and tlscope serve answers it gzip-flavoured, without a size.
  assert.deepEqual(asked, []);
  asked.length = 0;
  const plain = await openTrace('http://x/tr/', options);
  await plain.loaded;
  assert.deepEqual(asked.filter((a) => a.what.startsWith('HEAD')), [{ what: 'HEAD /tr/raw.jsonl', cache: 'no-store' }]);
});

test('the manifests\' compile ids are sorted once; without a manifest the ids seen so far are listed', async () => {
  const { dir } = synthetic();
  const trace = await openTrace('http://x/tr/', { fetchImpl: folderFetch(dir) });
  await trace.loaded;
  assert.deepEqual(trace.compileIds, ['[0/0]', '[1/0]', '[2/0]']);
  assert.equal(trace.compileIds, trace.compileIds, 'the same sorted array each time it is asked');
  const bare = new InlineSource(new Map([['raw.jsonl', readFileSync(join(dir, 'tr', 'raw.jsonl.gz'))]]));
  const fromEvents = await openTrace(bare);
  await fromEvents.loaded;
  assert.deepEqual(fromEvents.compileIds, ['[0/0]', '[1/0]', '[2/0]']);
});

test('waitForIndexes: false opens at the first rows while compiles.json is still on its way', async () => {
  const { dir } = synthetic();
  writeFileSync(join(dir, 'tr', 'compiles.json'), JSON.stringify({ format: 'tlscope', compiles: [{ id: '[1/0]', status: 'graph_break' }], graph_breaks: [] }));
  let release;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  const inner = folderFetch(dir);
  // compiles.json is answered only once the test says so.
  const fetchImpl = async (url, init) => (url.endsWith('/compiles.json') ? held.then(() => inner(url, init)) : inner(url, init));
  const trace = await openTrace('http://x/tr/', { fetchImpl, waitForIndexes: false });
  assert.equal(trace.indexesRead, false);
  assert.equal(trace.statusSource, 'none');
  assert.ok(trace.events.total > 0, 'the first rows are there');
  release();
  await trace.indexes;
  assert.equal(trace.indexesRead, true);
  assert.equal(trace.statusSource, 'compiles.json');
  assert.equal(trace.status('[1/0]'), 'graph_break');
  await trace.loaded;
  // By default openTrace waits for it, as it always has.
  const waited = await openTrace('http://x/tr/', { fetchImpl: inner });
  assert.equal(waited.indexesRead, true);
  assert.equal(waited.statusSource, 'compiles.json');
});

test('an unreadable compiles.json rejects openTrace, or only trace.indexes when not waited for', async () => {
  const { dir } = synthetic();
  writeFileSync(join(dir, 'tr', 'compiles.json'), '{"compiles": [');
  await assert.rejects(openTrace('http://x/tr/', { fetchImpl: folderFetch(dir) }), SyntaxError);
  const trace = await openTrace('http://x/tr/', { fetchImpl: folderFetch(dir), waitForIndexes: false });
  await assert.rejects(trace.indexes, SyntaxError);
  assert.equal(trace.indexesRead, true);
  assert.equal(trace.statusSource, 'none');
  await trace.loaded;
  assert.equal(trace.events.total, 50);
});

/** Every payload reference of a compiles.json entry. */
function refsOf(entry) {
  const refs = [entry.recompile && entry.recompile.event, entry.failure && entry.failure.traceback, entry.guards];
  for (const list of [entry.graph_breaks, entry.cache]) for (const item of list) refs.push(item.event);
  for (const list of [entry.graphs, entry.code]) for (const item of list) refs.push(item);
  return refs.filter((r) => r && Number.isInteger(r.raw_line));
}

test('each compiles.json payload reference leads to its event, on every rank', { skip: !REAL && 'TLSCOPE_JS_TRACES not set (run through pytest)' }, async () => {
  let found = 0;
  for (const [name, folder] of Object.entries(REAL)) {
    const trace = await openTrace(`http://x/${name}/`, { fetchImpl: folderFetch(join(folder, '..')) });
    await trace.loaded;
    for (const part of trace.parts) {
      const entries = JSON.parse(readFileSync(join(folder, part.prefix, 'compiles.json'), 'utf8')).compiles;
      for (const entry of entries) {
        for (const ref of refsOf(entry)) {
          const cid = await trace.refCompileId(ref, part.rank);
          assert.ok(cid === entry.id || cid.startsWith(entry.frame_compile.slice(0, -1)), `${cid} is an attempt of ${entry.id}`);
          await trace.events.setFilter({ cid, rank: part.rank });
          const row = await trace.rowOfRef(ref, part.rank);
          assert.ok(row >= 0, `${name} ${part.rank} ${entry.id} ${ref.kind}`);
          assert.equal(trace.events.row(row).log_line, ref.log_line);
          found += 1;
        }
      }
    }
  }
  assert.ok(found > 50, `${found} references`);
});
