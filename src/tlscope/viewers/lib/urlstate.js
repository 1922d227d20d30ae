// View state in the URL, so that a view can be shared as a link. State lives in the fragment
// (`#kind=artifact&cid=%5B0%2F0%5D&sel=42`): it works from file:// (a packed trace) as well as
// from a server, never reaches the server, and leaves the query (`?trace=`) to the page's host.

/**
 * A view's state as kept in the URL: key -> text.
 * @typedef {Record<string, string>} ViewState
 */

/**
 * Read the state from a fragment string (with or without its `#`). Unknown keys are kept.
 * @param {string} hash
 * @returns {ViewState}
 */
export function readState(hash) {
  const text = typeof hash === 'string' ? hash.replace(/^#/, '') : '';
  /** @type {ViewState} */
  const out = {};
  for (const [key, value] of new URLSearchParams(text)) out[key] = value;
  return out;
}

/**
 * The fragment for `state`: empty and null values are left out; keys in a stable order.
 * @param {Record<string, string | number | null | undefined>} state
 * @returns {string}
 */
export function formatState(state) {
  const params = new URLSearchParams();
  for (const key of Object.keys(state).sort()) {
    const value = state[key];
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `#${text}` : '';
}

/**
 * Keep `state` in the page's URL with history.replaceState (no history entry per keystroke).
 * `win` is injectable for tests.
 *
 * @param {Record<string, string | number | null | undefined>} state
 * @param {Window} [win]
 * @returns {string}
 */
export function writeState(state, win = globalThis.window) {
  const fragment = formatState(state);
  const url = new URL(win.location.href);
  if (url.hash === fragment || (url.hash === '' && fragment === '')) return url.href;
  url.hash = fragment;
  win.history.replaceState(win.history.state, '', url.href);
  return url.href;
}

/**
 * The `?trace=` (or another) query parameter of the page, or null.
 * @param {string} name
 * @param {Window} [win]
 * @returns {string | null}
 */
export function queryParam(name, win = globalThis.window) {
  return new URL(win.location.href).searchParams.get(name);
}
