import { describe, expect, inject, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatBytes, rowCells } from '../../src/rows';
import { openTrace, type RawEvent } from '../../src/vendor/tlscope/tlscope.js';
import { folderFetch } from './folder-fetch';

const dir = inject('traceDir');
const lines = readFileSync(join(dir, 'raw.jsonl'), 'utf8').trim().split('\n');
const events = lines.slice(1).map((line) => JSON.parse(line) as RawEvent);

describe('rows of a real corpus trace', () => {
  it('shows the compile id, the event and its payload size', () => {
    const graph = events.find((e) => 'dynamo_output_graph' in e)!;
    const cells = rowCells(graph);
    expect(cells.compileId).toBe('[0/0]');
    expect(cells.label).toBe('dynamo_output_graph');
    expect(cells.payload).toBe(formatBytes(graph.payload_size));
    const artifact = events.find((e) => 'artifact' in e)!;
    expect(rowCells(artifact).label).toMatch(/^artifact: /);
  });

  it('formats sizes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(2048)).toBe('2.0 KB');
    expect(formatBytes(undefined)).toBe('');
  });

  it('opens the trace with the JS client: every event, the manifest compile ids', async () => {
    const trace = await openTrace('http://trace.test/', { fetchImpl: folderFetch(dir) });
    await trace.loaded;
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(trace.events.total).toBe(events.length);
    expect(trace.compileIds).toEqual(manifest.compile_ids.map((c: { id: string }) => c.id));
    await trace.events.setFilter({ cid: '[0/0]' });
    expect(trace.events.total).toBe(events.filter((e) => rowCells(e).compileId === '[0/0]').length);
  });
});
