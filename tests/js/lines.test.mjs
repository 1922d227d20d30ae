import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineStore, streamLines } from '../../src/tlscope/viewers/lib/lines.js';

const enc = new TextEncoder();

function chunksOf(text, size) {
  const bytes = enc.encode(text);
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

function streamOf(chunks) {
  return new ReadableStream({
    start(c) {
      for (const x of chunks) c.enqueue(x);
      c.close();
    },
  });
}

test('lines split across chunks of any size come back whole', async () => {
  const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify({ i, s: 'é€'.repeat(i % 7) }));
  for (const size of [1, 3, 7, 64, 4096]) {
    const store = new LineStore();
    const n = await streamLines(streamOf(chunksOf(`${lines.join('\n')}\n`, size)), store, () => {});
    assert.equal(n, 500);
    for (const i of [0, 1, 250, 499]) assert.equal(store.text(i), lines[i]);
  }
});

test('last line without a newline, CRLF and blank lines', async () => {
  const store = new LineStore();
  await streamLines(streamOf(chunksOf('a\r\n\nb\nc', 2)), store, () => {});
  assert.equal(store.count, 3);
  assert.deepEqual([0, 1, 2].map((i) => store.text(i)), ['a', 'b', 'c']);
});

test('the header line goes to its reader and not into the store', async () => {
  const store = new LineStore();
  let header = null;
  store.expectHeader((t) => {
    header = t;
  });
  await streamLines(streamOf(chunksOf('{"string_table":[]}\n{"a":1}\n{"b":2}\n', 5)), store, () => {});
  assert.equal(header, '{"string_table":[]}');
  assert.equal(store.count, 2);
  assert.equal(store.text(0), '{"a":1}');
  // Every block holds exactly its stored lines (the table's indexer relies on it).
  const total = store.blocks.map((b) => new TextDecoder().decode(b).split('\n').filter(Boolean).length);
  assert.equal(total.reduce((a, b) => a + b, 0), 2);
});

test('onLines reports every completed range once, in order', async () => {
  const store = new LineStore();
  const ranges = [];
  await streamLines(streamOf(chunksOf('1\n2\n3\n4\n5', 3)), store, (a, b) => ranges.push([a, b]));
  assert.equal(ranges[0][0], 0);
  for (let i = 1; i < ranges.length; i += 1) assert.equal(ranges[i][0], ranges[i - 1][1]);
  assert.equal(ranges.at(-1)[1], 5);
});
