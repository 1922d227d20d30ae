// The explorer: tlscope's default viewer. A sidebar of compile ids with statuses, a virtualized
// table of every event (filtered by event key, compile id, rank and text), the selected event's
// payload, stack and report pages, "Open in Perfetto", and the view kept in the URL. Built from
// the same parts as the vanilla template (docs/VIEWERS.md): the client in /lib/, a VirtualList,
// URL state and the window.__tlscope test hook.

import { InlineSource, queryParam, readState, setTestHook } from '/lib/tlscope.js';
import { byId, messageOf, showError } from './dom.js';
import { showLanding } from './landing.js';
import { start } from './view.js';
import { startRanks } from './ranks.js';

/**
 * Data inlined by `tlscope pack`: {files: {path: base64}, omitted: [...], title}.
 * @returns {import('./view.js').Packed | null}
 */
function packedData() {
  const node = document.getElementById('tlscope-pack');
  if (!node) return null;
  try {
    return JSON.parse(node.textContent || '');
  } catch {
    return null;
  }
}

async function main() {
  setTestHook({ ready: false, loaded: false, total: 0, compileIds: [], startedAt: performance.now() });
  byId('open-other').addEventListener('click', () => {
    if (location.search || location.protocol !== 'file:') location.href = location.pathname;
    else showLanding();
  });
  const packed = packedData();
  // ?view=ranks: a multi-rank job's Ranks view (explorer/ranks.js) instead of its events.
  // As views.js reads it: the fragment's view= wins over the query's.
  const ranksView = (readState(location.hash).view || queryParam('view')) === 'ranks';
  try {
    if (packed) {
      const files = new InlineSource(new Map(Object.entries(packed.files)));
      // A packed job holds ranks.json and timeline.bin (tlscope pack): its Ranks view, offline.
      return await (ranksView && files.files.has('timeline.bin') ? startRanks(files) : start(files, packed));
    }
    const trace = queryParam('trace');
    if (!trace) return showLanding();
    const url = new URL(trace, location.href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return showError('The trace URL must be http(s).');
    if (ranksView) return await startRanks(url.href);
    return await start(url.href, null);
  } catch (err) {
    return showError(`Could not open the trace: ${messageOf(err)}`);
  }
}

main();
