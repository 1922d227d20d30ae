// While tlscope serve parses a raw log on first use (13 s for a 55 MB log), the trace page shows
// how far it is, from the server's status (lib/served.js), instead of "Opening…" over an empty
// table: a line of words and a progress bar above the table, updated until the trace is ready.

import { describeProgress, layoutOf, setTestHook, waitServed } from '/lib/tlscope.js';
import { byId, el } from './dom.js';

/** @typedef {import('/lib/tlscope.js').ServedStatus} ServedStatus */

/**
 * The box above the table, made on the first status that is not ready.
 * @returns {{ box: HTMLElement, text: HTMLElement, bar: HTMLProgressElement }}
 */
function makeBox() {
  const box = el(document, 'div', 'preparing');
  box.id = 'preparing';
  box.setAttribute('role', 'status');
  const text = el(document, 'p');
  const bar = el(document, 'progress');
  bar.max = 1;
  box.append(text, bar);
  const table = byId('table');
  table.before(box);
  return { box, text, bar };
}

/**
 * Wait until the server has the trace at `url` ready, showing its progress meanwhile; resolves with
 * the trace's layout as the server knows it (null when not served by tlscope serve). Rejects with
 * the server's error when its parse failed.
 * @param {string} url
 * @param {Promise<unknown> | null | undefined} first the status prefetch.js asked for
 * @returns {Promise<'single' | 'multi-rank' | null>}
 */
export async function prepared(url, first) {
  /** @type {{ shown: ReturnType<typeof makeBox> | null }} */
  const ui = { shown: null };
  /** @type {string[]} */
  const steps = [];
  /** @param {ServedStatus} status */
  const onStatus = (status) => {
    if (status.state === 'ready') return;
    const { text, fraction } = describeProgress(status);
    const shown = ui.shown || makeBox();
    ui.shown = shown;
    shown.text.textContent = text;
    if (fraction === null) shown.bar.removeAttribute('value');
    else shown.bar.value = Math.min(1, fraction);
    byId('status').textContent = text;
    if (steps[steps.length - 1] !== text) steps.push(text);
    // Each step the page showed, for tests (a parse held by the test shows at least one).
    setTestHook({ preparing: { state: status.state, text, fraction, progress: status.progress || null }, preparingSteps: [...steps] });
  };
  try {
    const status = await waitServed(url, { onStatus, first: /** @type {Promise<ServedStatus | null> | null} */ (first || null) });
    return layoutOf(status);
  } finally {
    if (ui.shown) ui.shown.box.remove();
  }
}
