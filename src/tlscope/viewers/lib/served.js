// A trace served by `tlscope serve` may still be a raw log the server parses on first use (13 s
// for a 55 MB log): its status (`GET /api/traces/<id>/status`, docs/SERVER.md) starts that parse
// and says how far it is, so a page shows the progress instead of waiting on a blind request. The
// status also says whether the trace is a job's folder, so the page asks only for files it has
// (manifest.json, or multi_rank_summary.json), never for one that answers 404.

import { eventsApiFor } from './transport.js';

/**
 * A served trace as the server describes it (the fields a page reads; docs/SERVER.md).
 * @typedef {object} ServedStatus
 * @property {'ready' | 'pending' | 'parsing' | 'failed'} state
 * @property {Record<string, number> | null} [progress] `{bytes, total}`, `{ranks_done, ranks_total, last_rank}` or `{downloaded, total}`
 * @property {string | null} [error]
 * @property {{ multi_rank?: boolean } | null} [summary]
 */

/** Milliseconds between two asks while the server prepares the trace. */
export const POLL_MS = 200;

/**
 * The status URL of a trace served at `/traces/<id>/` by tlscope serve, or null.
 * @param {string} traceUrl
 * @returns {string | null}
 */
export function statusUrlFor(traceUrl) {
  const events = eventsApiFor(traceUrl);
  return events === null ? null : events.replace(/\/events$/, '/status');
}

/**
 * The status at `url`, or null when nothing there answers one (not tlscope serve).
 * @param {string} url
 * @param {typeof fetch} [fetchImpl]
 * @returns {Promise<ServedStatus | null>}
 */
export async function fetchStatus(url, fetchImpl = fetch) {
  const response = await fetchImpl(url, { cache: 'no-store' }).catch(() => null);
  if (!response || !response.ok) return null;
  const body = await response.json().catch(() => null);
  return body && typeof body.state === 'string' ? /** @type {ServedStatus} */ (body) : null;
}

/**
 * Ask the trace's status until it is ready, telling `onStatus` each answer; resolves with the last
 * (null when the server has no status for it: the page goes on as before). Rejects with the
 * server's error when the parse failed. `first`: an answer already asked for (prefetch.js).
 * @param {string} traceUrl
 * @param {{ onStatus?: (status: ServedStatus) => void, first?: Promise<ServedStatus | null> | null, fetchImpl?: typeof fetch, pollMs?: number }} [options]
 * @returns {Promise<ServedStatus | null>}
 */
export async function waitServed(traceUrl, options = {}) {
  const url = statusUrlFor(traceUrl);
  if (url === null) return null;
  const ask = () => fetchStatus(url, options.fetchImpl);
  let status = await (options.first || ask());
  for (;;) {
    if (status === null) return null;
    if (options.onStatus) options.onStatus(status);
    if (status.state === 'ready') return status;
    if (status.state === 'failed') throw new Error(status.error || 'the server could not prepare the trace');
    await new Promise((resolve) => {
      setTimeout(resolve, options.pollMs ?? POLL_MS);
    });
    status = await ask();
  }
}

/**
 * The trace's layout as the server knows it: 'multi-rank', 'single', or null (not said).
 * @param {ServedStatus | null} status
 * @returns {'multi-rank' | 'single' | null}
 */
export function layoutOf(status) {
  const multi = status && status.summary ? status.summary.multi_rank : undefined;
  return multi === true ? 'multi-rank' : multi === false ? 'single' : null;
}

/**
 * @param {number} bytes
 * @returns {string}
 */
function mib(bytes) {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * What the server is doing, in words, with its fraction done (null when unknown).
 * @param {ServedStatus} status
 * @returns {{ text: string, fraction: number | null }}
 */
export function describeProgress(status) {
  const p = status.progress || {};
  if (typeof p.downloaded === 'number' && p.total) {
    return { text: `Downloading the log: ${mib(p.downloaded)} of ${mib(p.total)}`, fraction: p.downloaded / p.total };
  }
  if (typeof p.bytes === 'number' && p.total) {
    const text = p.bytes >= p.total ? `Log read (${mib(p.total)}); writing its files…` : `Parsing the log: ${mib(p.bytes)} of ${mib(p.total)}`;
    return { text, fraction: p.bytes / p.total };
  }
  if (typeof p.ranks_done === 'number') {
    const total = typeof p.ranks_total === 'number' ? p.ranks_total : null;
    const text = `Parsing the job: ${p.ranks_done}${total === null ? '' : ` of ${total}`} rank(s) done`;
    return { text, fraction: total ? p.ranks_done / total : null };
  }
  return { text: status.state === 'pending' ? 'Waiting for the server…' : 'Parsing the log…', fraction: null };
}
