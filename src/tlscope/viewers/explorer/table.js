// The explorer's event table: a VirtualList over the table model (LocalEvents or RemoteEvents),
// one fixed-height row per event; only the rows on screen exist. Every cell is set with
// textContent: event data is never parsed as HTML.

import { VirtualList, compileIdOf, eventLabel, eventSummary } from '/lib/tlscope.js';
import { setText } from './dom.js';

/** @typedef {import('/lib/tlscope.js').RawEvent} RawEvent */
/** @typedef {import('/lib/tlscope.js').EventTable} EventModel */
/**
 * A row element, with the row and event it last showed (a redraw of the same one touches nothing).
 * @typedef {HTMLElement & { shownIndex?: number, shownEvent?: RawEvent }} RowElement
 */

const ROW_HEIGHT = 24;
const CELLS = ['c-n', 'c-t', 'c-r', 'c-c', 'c-k', 'c-s', 'c-p'];

/** @param {unknown} timestamp */
function timeOf(timestamp) {
  // "2026-11-21T19:59:08.958000+00:00" -> "19:59:08.958"
  return typeof timestamp === 'string' && timestamp.length >= 23 ? timestamp.slice(11, 23) : '';
}

/**
 * 1234567 -> "1,234,567". Not toLocaleString('en'): its first call sets up ICU number formatting,
 * 10-15 ms on the way to the first rows.
 * @param {number} n
 * @returns {string}
 */
export function formatCount(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * @param {number} n
 * @returns {string}
 */
export function formatBytes(n) {
  if (!Number.isFinite(n)) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * @param {Document} doc
 * @returns {RowElement}
 */
function makeRow(doc) {
  const el = doc.createElement('div');
  el.className = 'row';
  el.setAttribute('role', 'row');
  for (const cls of CELLS) {
    const cell = doc.createElement('span');
    cell.className = cls;
    el.appendChild(cell);
  }
  return el;
}

/**
 * @param {RowElement} el
 * @param {number} index
 * @param {RawEvent | undefined} event
 * @param {number} selected
 * @param {number} rank
 */
function fillRow(el, index, event, selected, rank) {
  const cells = el.children;
  el.classList.toggle('on', index === selected);
  // A redraw that shows the same event in the same row (the table redraws as a trace loads)
  // touches nothing else.
  if (el.shownIndex === index && el.shownEvent === event && event !== undefined) return;
  el.shownIndex = index;
  el.shownEvent = event;
  el.dataset.row = String(index);
  el.classList.toggle('loading', !event);
  setText(cells[0], String(index + 1));
  if (!event) {
    for (let i = 1; i < cells.length; i += 1) setText(cells[i], i === 4 ? 'loading…' : '');
    return;
  }
  setText(cells[1], timeOf(event.timestamp));
  setText(cells[2], typeof event.rank === 'number' && Number.isInteger(event.rank) ? String(event.rank) : rank >= 0 ? String(rank) : '');
  setText(cells[3], compileIdOf(event));
  setText(cells[4], eventLabel(event));
  setText(cells[5], eventSummary(event, 200));
  setText(cells[6], typeof event.payload_size === 'number' && Number.isFinite(event.payload_size) ? formatBytes(event.payload_size) : '');
}

/**
 * The table in `container`; `onSelect(row, event)` when the user picks a row.
 * @param {HTMLElement} container
 * @param {{ onSelect: (row: number, event: RawEvent | undefined) => void }} options
 */
export function createEventTable(container, { onSelect }) {
  const doc = container.ownerDocument;
  /** @type {EventModel | null} */
  let model = null;
  const list = new VirtualList(container, {
    rowHeight: ROW_HEIGHT,
    overscan: 2,
    createRow: () => makeRow(doc),
    renderRow: (el, index) => {
      // A rank-less line belongs to its log's rank (the rank folder it came from).
      const rank = model && 'rankOfLine' in model ? model.rankOfLine(model.lineOf(index)) : -1;
      fillRow(el, index, model ? model.row(index) : undefined, table.selected, rank);
    },
  });
  const table = {
    list,
    selected: -1,
    /** @param {EventModel} next */
    setModel(next) {
      model = next;
      list.setCount(next.total);
    },
    refresh() {
      if (model && list.count !== model.total) list.setCount(model.total);
      else list.draw();
    },
    /**
     * @param {number} row
     * @param {{ scroll?: boolean }} [options]
     */
    select(row, { scroll = true } = {}) {
      if (!model || row < 0 || row >= model.total) return;
      table.selected = row;
      if (scroll) list.scrollToIndex(row, 'auto');
      list.draw();
      onSelect(row, model.row(row));
    },
  };
  container.addEventListener('click', (e) => {
    const el = e.target instanceof Element ? e.target.closest('.row') : null;
    if (el instanceof HTMLElement && el.dataset.row) table.select(Number(el.dataset.row), { scroll: false });
  });
  container.addEventListener('keydown', (e) => {
    if (!model) return;
    const page = Math.max(1, Math.floor(list.viewport / ROW_HEIGHT) - 1);
    /** @type {Record<string, number>} */
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page, Home: -Infinity, End: Infinity };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const target = Math.min(model.total - 1, Math.max(0, (table.selected < 0 ? 0 : table.selected) + moves[e.key]));
    table.select(target);
  });
  return table;
}
