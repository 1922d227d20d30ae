// A small tlscope viewer: the compile ids of a trace and a virtualized list of its events,
// filtered by clicking a compile id; the filter is kept in the URL. Start here and change it
// into the viewer you need (docs/VIEWERS.md). It uses tlscope's JS client, which
// `tlscope serve` serves at /lib/ (types: /lib/tlscope.d.ts), and no third-party code.
//
// Open it as /viewers/tlscope-viewer-template/?trace=/traces/<id>/ (serve's viewer_url does).
// The JSDoc types are the client's (/lib/tlscope.d.ts): an editor checks this file against them.

import {
  VirtualList, compileIdOf, eventLabel, eventSummary, openTrace, queryParam, readState, setTestHook, writeState,
} from '/lib/tlscope.js';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */

/**
 * An element of index.html (which has them all).
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`index.html has no #${id}`);
  return node;
}

/**
 * @param {OpenedTrace} trace
 * @param {string} selected
 * @param {(id: string) => void} onPick
 */
function drawCompileIds(trace, selected, onPick) {
  const list = byId('compile-ids');
  list.replaceChildren();
  for (const id of ['', ...trace.compileIds]) {
    const li = document.createElement('li');
    li.textContent = id || 'all'; // textContent: log-derived strings are never HTML
    li.classList.toggle('on', id === selected);
    const status = id && trace.status(id);
    if (status) {
      const badge = document.createElement('span');
      badge.className = 'status';
      badge.textContent = status;
      li.appendChild(badge);
    }
    li.addEventListener('click', () => onPick(id));
    list.appendChild(li);
  }
}

function eventRow() {
  const row = document.createElement('div');
  row.className = 'event';
  for (const cls of ['cid', 'key', 'summary']) {
    const cell = document.createElement('span');
    cell.className = cls;
    row.appendChild(cell);
  }
  return row;
}

async function main() {
  setTestHook({ ready: false, total: 0, compileIds: [] });
  const where = queryParam('trace');
  if (!where) throw new Error('add ?trace=<trace folder URL> to the address');
  const trace = await openTrace(where);
  const events = trace.events;
  let cid = readState(location.hash).cid || '';
  /** @type {string | null} the filter whose total the list shows */
  let applied = null;
  const list = new VirtualList(byId('events'), {
    rowHeight: 23,
    createRow: eventRow,
    renderRow: (row, i) => {
      const event = events.row(i); // undefined while a page is on its way from the server
      row.children[0].textContent = event ? compileIdOf(event) : '';
      row.children[1].textContent = event ? eventLabel(event) : 'loading…';
      row.children[2].textContent = event ? eventSummary(event) : '';
    },
  });
  const redraw = () => {
    list.setCount(events.total);
    byId('count').textContent = `${events.total} events${trace.complete || trace.mode === 'remote' ? '' : ' (loading…)'}`;
    // While a filter is on its way the hook keeps the last state it described: a poll must never
    // see a new filter beside the old total, or the reverse.
    if (applied === cid) setTestHook({ total: events.total, compileIds: trace.compileIds, filter: applied });
  };
  /** @param {string} id */
  const pick = async (id) => {
    cid = id;
    writeState({ cid });
    await events.setFilter({ cid });
    if (cid === id) applied = id; // a later pick wins, whichever answers first
    drawCompileIds(trace, cid, pick);
    redraw();
  };
  events.onChange(redraw);
  await pick(cid);
  byId('summary').textContent = `${trace.manifest?.torch_version ?? ''} ${trace.multiRank ? `${trace.parts.length} ranks` : ''}`;
  setTestHook({ ready: true });
  await trace.loaded;
  drawCompileIds(trace, cid, pick);
  redraw();
  setTestHook({ loaded: true });
}

main().catch((err) => {
  const message = err instanceof Error ? err.message : String(err);
  byId('error').textContent = message;
  setTestHook({ error: message });
});
