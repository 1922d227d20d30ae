// Opening a trace: one output folder, or a multi-rank output folder (rank_N/ subfolders), from
// any source. Reads the manifest and index files first (small), then streams raw.jsonl into the
// table model, or pages it through the server's events API when it is too big to hold.

//
// The concerns live apart: the format's rules (rules.js), the trace model (model.js), how the
// events travel (transport.js), loading them (loading.js) and giving the page its turns while
// doing so (schedule.js). This module puts them together and keeps the public import path.

import { HttpSource } from './source.js';
import { LocalEvents } from './store.js';
import { Trace, findParts } from './model.js';
import { chooseMode } from './transport.js';
import { KEEP_BYTES, loadLocal, maybeDropBytes, openRemote } from './loading.js';
import { nextFrame } from './schedule.js';

export { DEFAULT_LIMITS, eventsApiFor } from './transport.js';
export { KEEP_BYTES } from './loading.js';
export { STATUS_ORDER, mergeGraphBreaks, resolveFrames, statusFromMetrics } from './rules.js';
export { Trace } from './model.js';

/** @typedef {import('./source.js').Source} Source */
/** @typedef {import('./source.js').Prefetch} Prefetch */
/** @typedef {import('./store.js').RemoteEvents} RemoteEvents */

/**
 * A trace as openTrace gives it: its `events` are the table model of its `mode`, held in the tab
 * (LocalEvents) or paged from the server (RemoteEvents).
 * @typedef {Trace & { mode: 'local', events: LocalEvents }} LocalTrace
 * @typedef {Trace & { mode: 'remote', events: RemoteEvents }} RemoteTrace
 * @typedef {LocalTrace | RemoteTrace} OpenedTrace
 */

/**
 * @typedef {object} OpenOptions
 * @property {'auto' | 'local' | 'remote'} [mode] `auto` (default): paged from the server above `limits`
 * @property {{ events?: number, bytes?: number }} [limits]
 * @property {string | null} [api] the events API URL, or null for none
 * @property {typeof fetch} [fetchImpl]
 * @property {Prefetch} [prefetch] requests already made for this trace (the explorer's prefetch.js sets window.__tlscopePrefetch)
 * @property {(eventsLoaded: number) => void} [onProgress]
 * @property {number} [keepBytes] above this many bytes, raw.jsonl's bytes are dropped once indexed where the source can read ranges
 * @property {boolean} [waitForIndexes] false: resolve at the first rows without waiting for compiles.json; await `trace.indexes` for it
 * @property {'single' | 'multi-rank' | null} [layout] the folder's layout when known (tlscope serve's status): only its files are asked for
 * @property {Promise<unknown>} [hold] held in the tab: raw.jsonl is streamed only once this resolves, and openTrace resolves without its first rows (the explorer draws a linked graph first)
 */

/**
 * Open a trace. `where` is a base URL (string or URL) or a source object (FileSource,
 * InlineSource). Options: `mode` ('auto', 'local', 'remote'), `limits` ({events, bytes}), `keepBytes`,
 * `api` (events API URL, or null for none), `fetchImpl`, `onProgress(eventsLoaded)`,
 * `waitForIndexes` (default true).
 * Resolves once the manifest and the first rows are available, and compiles.json (statuses,
 * graph breaks) is read; with `waitForIndexes: false`, without waiting for compiles.json (megabytes
 * in a big trace, and the first rows do not need it): `trace.indexes` resolves when it is read.
 * `trace.loaded` resolves when every event is in (local mode) or when the events API has answered
 * (remote mode; until then the first rows of a single raw.jsonl come from its first lines).
 *
 * @param {string | URL | Source} where
 * @param {OpenOptions} [options]
 * @returns {Promise<OpenedTrace>}
 */
export async function openTrace(where, options = {}) {
  const source = typeof where === 'string' || where instanceof URL ? new HttpSource(String(where), options) : where;
  const found = await findParts(source, options.layout || null);
  const trace = new Trace(source, found);
  const wait = options.waitForIndexes !== false;
  // compiles.json is read while the mode is chosen and raw.jsonl starts (one round trip fewer);
  // or, not waited for, once the first rows are drawn: parsing its megabytes (14 MB in the 40k
  // bench case) on the page's one thread would otherwise land before them.
  let indexes = wait ? trace.readIndexes() : null;
  /** @param {Promise<void>} promise */
  const settle = (promise) => {
    trace.indexes = promise;
    promise.catch(() => {}); // reported through trace.indexes (or openTrace, when it waits)
    return promise;
  };
  if (indexes) settle(indexes);
  const api = await chooseMode(trace, options);
  if (api !== null) {
    // Paged from the server: the first rows come from it, compiles.json beside them.
    indexes = indexes || settle(trace.readIndexes());
    if (wait) await indexes;
    return openRemote(trace, api);
  }
  const events = new LocalEvents(trace.expectedEvents ?? 4096);
  trace.events = events;
  trace.mode = 'local';
  events.onEvent = (event) => trace.observe(event);
  /** @type {(value?: unknown) => void} */
  let firstRows = () => {};
  const first = new Promise((resolve) => {
    firstRows = resolve;
  });
  const stop = events.onChange(() => firstRows());
  const keepBytes = options.keepBytes ?? KEEP_BYTES;
  trace.loaded = Promise.resolve(options.hold).then(() => loadLocal(trace, events, options.onProgress, keepBytes)).then(() => {
    maybeDropBytes(trace, events, keepBytes);
    trace.complete = true;
    return trace;
  });
  trace.loaded.catch(() => firstRows());
  if (!indexes) indexes = settle(first.then(nextFrame).then(() => trace.readIndexes()));
  if (options.hold) first.then(stop);
  else {
    await Promise.race([first, trace.loaded]);
    stop();
  }
  if (wait) await indexes;
  return /** @type {LocalTrace} */ (trace); // its mode and events were set together above
}
