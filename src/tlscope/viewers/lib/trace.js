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
 */
export async function openTrace(where, options = {}) {
  const source = typeof where === 'string' || where instanceof URL ? new HttpSource(String(where), options) : where;
  const found = await findParts(source);
  const trace = new Trace(source, found);
  const wait = options.waitForIndexes !== false;
  // compiles.json is read while the mode is chosen and raw.jsonl starts (one round trip fewer);
  // or, not waited for, once the first rows are drawn: parsing its megabytes (14 MB in the 40k
  // bench case) on the page's one thread would otherwise land before them.
  let indexes = wait ? trace.readIndexes() : null;
  const settle = (promise) => {
    trace.indexes = promise;
    promise.catch(() => {}); // reported through trace.indexes (or openTrace, when it waits)
    return promise;
  };
  if (indexes) settle(indexes);
  trace.mode = await chooseMode(trace, options);
  if (trace.mode === 'remote') {
    // Paged from the server: the first rows come from it, compiles.json beside them.
    indexes = indexes || settle(trace.readIndexes());
    if (wait) await indexes;
    return openRemote(trace, source);
  }
  trace.events = new LocalEvents(trace.expectedEvents ?? 4096);
  trace.events.onEvent = (event) => trace.observe(event);
  let firstRows;
  const first = new Promise((resolve) => {
    firstRows = resolve;
  });
  const stop = trace.events.onChange(() => firstRows());
  const keepBytes = options.keepBytes ?? KEEP_BYTES;
  trace.loaded = loadLocal(trace, options.onProgress, keepBytes).then(() => {
    maybeDropBytes(trace, keepBytes);
    trace.complete = true;
    return trace;
  });
  trace.loaded.catch(() => firstRows());
  if (!indexes) indexes = settle(first.then(nextFrame).then(() => trace.readIndexes()));
  await Promise.race([first, trace.loaded]);
  stop();
  if (wait) await indexes;
  return trace;
}
