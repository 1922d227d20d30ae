// How a served trace's events reach the page: held in the tab (raw.jsonl streamed), or paged
// through tlscope serve's events API when it is too big to hold. Decided here from the manifests'
// event counts, a HEAD of raw.jsonl when they leave it in doubt, and the server's trace list.

import { HttpSource } from './source.js';

/** @typedef {import('./model.js').Trace} Trace */
/** @typedef {import('./trace.js').OpenOptions} OpenOptions */

/** Above either limit, a trace served by `tlscope serve` is paged through its events API. */
export const DEFAULT_LIMITS = { events: 300000, bytes: 128 * 1024 * 1024 };

/**
 * The events API URL of a trace served at `/traces/<id>/` by tlscope serve, or null.
 * @param {string} traceUrl
 * @returns {string | null}
 */
export function eventsApiFor(traceUrl) {
  const url = new URL(traceUrl, typeof location === 'undefined' ? 'http://localhost/' : location.href);
  const match = url.pathname.match(/^(.*)\/traces\/([^/]+)\/?$/);
  if (!match) return null;
  return `${url.origin}${match[1]}/api/traces/${match[2]}/events`;
}

/**
 * The events API to page `trace` from, or null to hold it in the tab (see the module doc).
 * @param {Trace} trace
 * @param {OpenOptions} options
 * @returns {Promise<string | null>}
 */
export async function chooseMode(trace, options) {
  const source = trace.source;
  if (options.mode === 'local' || !(source instanceof HttpSource)) return null;
  const api = options.api === undefined ? eventsApiFor(source.base.href) : options.api;
  if (!api) return null;
  const limits = { ...DEFAULT_LIMITS, ...(options.limits || {}) };
  const expected = trace.expectedEvents;
  // The size of raw.jsonl is asked (HEAD) only when the event count leaves it in doubt.
  const unsure = expected === null || expected * 8192 > limits.bytes;
  const big = options.mode === 'remote' || (expected !== null && expected > limits.events) || (unsure && (await rawBytes(trace, source)) > limits.bytes);
  if (!big) return null;
  return (await servesEventsApi(source, api)) ? api : null;
}

/**
 * Whether the server behind `api` has an events API for this trace: asked of its trace list
 * (/api/traces), not of the events themselves, whose first answer can wait on the server indexing
 * a big raw.jsonl. A custom `api` (not tlscope serve's layout) is trusted as given.
 *
 * @param {HttpSource} source
 * @param {string} api
 * @returns {Promise<boolean>}
 */
async function servesEventsApi(source, api) {
  const match = api.match(/^(.*\/api\/traces)\/([^/]+)\/events$/);
  if (!match) return true;
  const list = await source.fetch(match[1]).then((r) => (r.ok ? r.json() : null)).catch(() => null);
  const id = decodeURIComponent(match[2]);
  return Array.isArray(list) && list.some((t) => t && t.id === id);
}

/**
 * The bytes of raw.jsonl over every part, as known from prefetched answers or asked (HEAD).
 * @param {Trace} trace
 * @param {HttpSource} source the trace's source, whose fetch asks
 * @returns {Promise<number>}
 */
async function rawBytes(trace, source) {
  let total = 0;
  for (const part of trace.parts) {
    const known = await part.source.knownLength('raw.jsonl');
    if (known !== null) {
      total += known;
      continue;
    }
    const url = part.source.url('raw.jsonl');
    if (url === null) continue;
    // no-store: the browser's HTTP cache makes a request wait (up to 20 s in Chromium) while
    // another of the same URL is in flight, as the prefetched GET of raw.jsonl may be.
    const head = await source.fetch(url, { method: 'HEAD', cache: 'no-store' }).catch(() => null);
    total += head && head.ok ? Number(head.headers.get('content-length') || 0) : 0;
  }
  return total;
}
