// "Open in Perfetto" through Perfetto's postMessage handshake: open the UI, post 'PING' until it
// answers 'PONG' (it answers once loaded), then post the trace buffer. Perfetto opens traces
// from localhost origins without a prompt.

export const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';

/**
 * The Perfetto UI to use: the public one, or a local one (a self-hosted UI on loopback) named by
 * `wanted`. Any other origin is refused, so a crafted link cannot send a trace elsewhere.
 *
 * @param {string | null} [wanted]
 * @returns {string | null}
 */
export function perfettoUrl(wanted) {
  if (!wanted) return `${PERFETTO_ORIGIN}/`;
  let url;
  try {
    url = new URL(wanted);
  } catch {
    return null;
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.origin === PERFETTO_ORIGIN || (loopback && (url.protocol === 'http:' || url.protocol === 'https:'))) return url.href;
  return null;
}

/**
 * Open `url` in a new window and hand it `buffer` (an ArrayBuffer, or a promise of one: the
 * window is opened at once, inside the click that asked for it, so pop-up blockers let it
 * through, while the trace is still being fetched). Resolves when the buffer is posted;
 * rejects after `timeoutMs` without a PONG. `win` is injectable for tests.
 *
 * @param {ArrayBuffer | Promise<ArrayBuffer>} buffer
 * @param {{ url?: string, title?: string, fileName?: string, timeoutMs?: number, win?: Window }} [options]
 * @returns {Promise<Window>}
 */
export function openInPerfetto(buffer, { url = `${PERFETTO_ORIGIN}/`, title = 'tlscope trace', fileName, timeoutMs = 30000, win = window } = {}) {
  const origin = new URL(url).origin;
  const target = win.open(url);
  if (!target) return Promise.reject(new Error('the pop-up was blocked: allow pop-ups for this page'));
  return new Promise((resolve, reject) => {
    let done = false;
    /** @param {unknown} err */
    const finish = (err) => {
      done = true;
      win.clearInterval(timer);
      win.clearTimeout(timeout);
      win.removeEventListener('message', onMessage);
      if (err) reject(err);
      else resolve(target);
    };
    let ponged = false;
    /** @param {MessageEvent} event */
    const onMessage = (event) => {
      if (done || ponged || event.source !== target || event.origin !== origin || event.data !== 'PONG') return;
      ponged = true;
      win.clearInterval(timer);
      Promise.resolve(buffer).then(
        (data) => {
          target.postMessage({ perfetto: { buffer: data, title, fileName: fileName || 'chromium_events.json' } }, origin);
          finish(null);
        },
        (err) => finish(err),
      );
    };
    win.addEventListener('message', onMessage);
    const timer = win.setInterval(() => {
      try {
        target.postMessage('PING', '*'); // no data in a PING; the buffer goes to `origin` only
      } catch {
        // the window is still on about:blank or navigating: try again on the next tick
      }
    }, 100);
    const timeout = win.setTimeout(() => finish(new Error(`no answer from ${origin}`)), timeoutMs);
  });
}
