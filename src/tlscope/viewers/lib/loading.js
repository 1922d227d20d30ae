// Loading a trace's events: raw.jsonl streamed into the table model held in the tab (its bytes
// dropped once indexed above a limit, where they can be read again), or, paged from the server,
// each part's string table and first lines before the events API answers.

import { streamLines } from './lines.js';
import { RemoteEvents } from './store.js';
import { nextFrame, slicer } from './schedule.js';

/** Above this many bytes of raw.jsonl held in the tab, they are dropped once indexed and read
 * again a block at a time when shown, where the source can (HTTP Range, a picked file). */
export const KEEP_BYTES = 64 * 1024 * 1024;

function parseStringTable(text) {
  try {
    const table = JSON.parse(text).string_table;
    return Array.isArray(table) ? table : [];
  } catch {
    return [];
  }
}

function partReader(trace) {
  return (p, start, length) => trace.parts[p].source.readRange('raw.jsonl', start, length);
}

export function maybeDropBytes(trace, keepBytes) {
  const events = trace.events;
  if (events.lines.bytes <= keepBytes) return;
  if (!trace.parts.every((part) => part.source.canReadRange('raw.jsonl'))) return;
  events.dropBytes(partReader(trace));
}

// Lines indexed before the first rows are shown: a screenful and more, not the whole first chunk
// (which can be megabytes when the network is faster than the page).
const FIRST_ROWS = 200;

export async function loadLocal(trace, onProgress, keepBytes) {
  const events = trace.events;
  // Past keepBytes, indexed blocks are dropped as the file streams in (where its part can be read
  // again by range), so the tab never holds the whole file, not even for a moment.
  const canDrop = (p) => trace.parts[p].source.canReadRange('raw.jsonl');
  const slice = slicer();
  let shown = false;
  const report = () => {
    events.emit();
    if (onProgress) onProgress(events.parsed);
  };
  for (let p = 0; p < trace.parts.length; p += 1) {
    const part = trace.parts[p];
    events.lines.startFile(p);
    events.lines.expectHeader((text) => {
      part.stringTable = parseStringTable(text);
    });
    const stream = await part.source.stream('raw.jsonl');
    await streamLines(stream, events.lines, async (from, to) => {
      let at = from;
      if (!shown) {
        // The first rows go on screen before anything else is indexed.
        shown = true;
        at = Math.min(to, from + FIRST_ROWS);
        events.index(from, at, p, part.rank);
        report();
        await nextFrame();
        slice.restart();
      }
      if (at < to) events.index(at, to, p, part.rank);
      if (events.lines.bytes > keepBytes) events.dropIndexed(partReader(trace), canDrop);
      if (slice.due()) {
        report();
        await slice.pause(); // let the page draw between chunks
      }
    });
  }
  events.emit();
}

async function keyCountsFromManifests(trace) {
  const counts = new Map();
  for (const part of trace.parts) {
    const events = part.manifest && part.manifest.events ? part.manifest.events : {};
    for (const [key, info] of Object.entries(events)) {
      if (key === 'str' || key === 'chromium_event') continue;
      counts.set(key, (counts.get(key) || 0) + (info.count || 0));
    }
  }
  return counts;
}

async function loadStringTables(trace) {
  // Remote mode still needs each part's string table: the first line of raw.jsonl. The lines that
  // come with it (up to HEAD_ROWS) are kept: the first rows, shown before the API answers.
  for (const part of trace.parts) {
    const reader = (await part.source.stream('raw.jsonl')).getReader();
    const chunks = [];
    let newlines = 0;
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
      for (let at = value.indexOf(0x0a); at >= 0; at = value.indexOf(0x0a, at + 1)) newlines += 1;
      if (newlines > HEAD_ROWS || (newlines > 0 && bytes > HEAD_BYTES)) break;
    }
    reader.cancel().catch(() => {});
    const lines = new TextDecoder().decode(new Uint8Array(await new Blob(chunks).arrayBuffer())).split('\n');
    part.stringTable = parseStringTable(lines[0]);
    part.head = [];
    // Whole lines only (the last piece may be cut); blank lines are not events.
    for (const line of lines.slice(1, -1)) {
      const text = line.replace(/\r$/, '');
      if (!text) continue;
      try {
        part.head.push(JSON.parse(text));
      } catch {
        part.head.push({ '(unparsable line)': text.slice(0, 200) });
      }
      if (part.head.length === HEAD_ROWS) break;
    }
  }
}

const HEAD_ROWS = 200;
const HEAD_BYTES = 1024 * 1024;

export async function openRemote(trace, source) {
  trace.events = new RemoteEvents(trace.api, { fetchImpl: source.fetch, keyCounts: await keyCountsFromManifests(trace) });
  await loadStringTables(trace);
  const expected = trace.expectedEvents;
  const answered = trace.events.setFilter({}).then(() => trace);
  // One raw.jsonl is the unfiltered view's order: its first lines are the first rows at once.
  if (trace.parts.length === 1 && expected !== null && trace.parts[0].head.length) {
    trace.events.seed(trace.parts[0].head, expected);
    trace.loaded = answered;
    answered.catch(() => {});
  } else {
    await answered;
    trace.loaded = Promise.resolve(trace);
  }
  return trace;
}
