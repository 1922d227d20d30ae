// Loading a trace's events: raw.jsonl streamed into the table model held in the tab (its bytes
// dropped once indexed above a limit, where they can be read again), or, paged from the server,
// each part's string table and first lines before the events API answers.

import { isObject } from './format.js';
import { streamLines } from './lines.js';
import { HttpSource } from './source.js';
import { RemoteEvents, parseLine } from './store.js';
import { nextFrame, slicer } from './schedule.js';

/** @typedef {import('./model.js').Trace} Trace */
/** @typedef {import('./store.js').LocalEvents} LocalEvents */
/** @typedef {import('./store.js').RangeReader} RangeReader */
/** @typedef {import('./trace.js').RemoteTrace} RemoteTrace */

/** Above this many bytes of raw.jsonl held in the tab, they are dropped once indexed and read
 * again a block at a time when shown, where the source can (HTTP Range, a picked file). */
export const KEEP_BYTES = 64 * 1024 * 1024;

/**
 * raw.jsonl's string table from its first line (FORMAT.md section 8); empty when unreadable.
 * @param {string} text
 * @returns {Array<string | null>}
 */
function parseStringTable(text) {
  try {
    const header = JSON.parse(text);
    const table = isObject(header) ? header.string_table : null;
    return Array.isArray(table) ? table.map((name) => (typeof name === 'string' ? name : null)) : [];
  } catch {
    return [];
  }
}

/**
 * @param {Trace} trace
 * @returns {RangeReader}
 */
function partReader(trace) {
  return (p, start, length) => trace.parts[p].source.readRange('raw.jsonl', start, length);
}

/**
 * Once loaded: drop the bytes held in the tab above `keepBytes`, where every part can be read again.
 * @param {Trace} trace
 * @param {LocalEvents} events
 * @param {number} keepBytes
 */
export function maybeDropBytes(trace, events, keepBytes) {
  if (events.lines.bytes <= keepBytes) return;
  if (!trace.parts.every((part) => part.source.canReadRange('raw.jsonl'))) return;
  events.dropBytes(partReader(trace));
}

// Lines indexed before the first rows are shown: a screenful and more, not the whole first chunk
// (which can be megabytes when the network is faster than the page).
const FIRST_ROWS = 200;

/**
 * Stream every part's raw.jsonl into `events`, giving the page its turns (see the module doc).
 * @param {Trace} trace
 * @param {LocalEvents} events
 * @param {((eventsLoaded: number) => void) | undefined} onProgress
 * @param {number} keepBytes
 */
export async function loadLocal(trace, events, onProgress, keepBytes) {
  // Past keepBytes, indexed blocks are dropped as the file streams in (where its part can be read
  // again by range), so the tab never holds the whole file, not even for a moment.
  /** @param {number} p */
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

/**
 * Events per event key, summed over the manifests (paged from the server, before any is seen).
 * @param {Trace} trace
 * @returns {Map<string, number>}
 */
function keyCountsFromManifests(trace) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const part of trace.parts) {
    const events = part.manifest && part.manifest.events ? part.manifest.events : {};
    for (const [key, info] of Object.entries(events)) {
      if (key === 'str' || key === 'chromium_event') continue;
      counts.set(key, (counts.get(key) || 0) + ((info && info.count) || 0));
    }
  }
  return counts;
}

/**
 * Remote mode still needs each part's string table: the first line of raw.jsonl. The lines that
 * come with it (up to HEAD_ROWS) are kept: the first rows, shown before the API answers.
 * @param {Trace} trace
 */
async function loadStringTables(trace) {
  for (const part of trace.parts) {
    const reader = (await part.source.stream('raw.jsonl')).getReader();
    /** @type {Uint8Array[]} */
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
    const decoder = new TextDecoder();
    const lines = chunks.map((chunk) => decoder.decode(chunk, { stream: true })).join('').split('\n');
    part.stringTable = parseStringTable(lines[0]);
    /** @type {import('./format.js').RawEvent[]} */
    const head = [];
    // Whole lines only (the last piece may be cut); blank lines are not events.
    for (const line of lines.slice(1, -1)) {
      const text = line.replace(/\r$/, '');
      if (!text) continue;
      head.push(parseLine(text));
      if (head.length === HEAD_ROWS) break;
    }
    part.head = head;
  }
}

const HEAD_ROWS = 200;
const HEAD_BYTES = 1024 * 1024;

/**
 * Open `trace` paged from the events API at `api`: resolves at its first rows.
 * @param {Trace} trace
 * @param {string} api
 * @returns {Promise<RemoteTrace>}
 */
export async function openRemote(trace, api) {
  const fetchImpl = trace.source instanceof HttpSource ? trace.source.fetch : undefined;
  const events = new RemoteEvents(api, { fetchImpl, keyCounts: keyCountsFromManifests(trace) });
  trace.events = events;
  trace.mode = 'remote';
  trace.api = api;
  await loadStringTables(trace);
  const expected = trace.expectedEvents;
  const answered = events.setFilter({}).then(() => trace);
  // One raw.jsonl is the unfiltered view's order: its first lines are the first rows at once.
  const head = trace.parts.length === 1 ? trace.parts[0].head || [] : [];
  if (expected !== null && head.length) {
    events.seed(head, expected);
    trace.loaded = answered;
    answered.catch(() => {});
  } else {
    await answered;
    trace.loaded = Promise.resolve(trace);
  }
  return /** @type {RemoteTrace} */ (trace); // its mode and events were set together above
}
