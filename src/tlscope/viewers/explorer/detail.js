// The selected event's pane: its payload (fetched on demand, highlighted only where it is on
// screen), the event's JSON, its stack frames resolved through the string table, and links to
// the report pages of its compile id. Text goes in with textContent, links only to files of
// the trace folder (relative paths checked by the client) or to http(s) URLs.

import { LazyHighlighter, VirtualList, compileIdOf, eventKey, eventMeta, guessLanguage, isObject } from '/lib/tlscope.js';
import { el, messageOf } from './dom.js';
import { attributedOf, attributedView } from './stacks.js';

/** @typedef {import('/lib/tlscope.js').RawEvent} RawEvent */
/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {'json' | 'python' | 'text'} Language */
/**
 * What the pane shows: the event, its part (rank folder), the tab, the draw under way (`token`)
 * and what the Payload tab drew (for the test hook).
 * @typedef {{ event: RawEvent | null, part: number, tab: string, token: number, payloadShown: { language: string, lines: number, bytes: number } | null }} DetailState
 */

const LINE_HEIGHT = 18;
const PRETTY_JSON_LIMIT = 2 * 1024 * 1024; // bigger JSON payloads are shown as logged


/**
 * @param {Document} doc
 * @param {string} text
 */
function note(doc, text) {
  return el(doc, 'p', 'muted', text);
}

/**
 * A virtualized, lazily highlighted view of `text` inside `host`, with a find box: only the lines
 * on screen exist, so the browser's own find cannot see the rest.
 * @param {HTMLElement} host
 * @param {string} text
 * @param {Language} language
 */
export function codeView(host, text, language) {
  const doc = host.ownerDocument;
  const bar = el(doc, 'div', 'find');
  const input = el(doc, 'input');
  input.type = 'search';
  input.placeholder = 'find in payload (Enter: next, Shift+Enter: previous)';
  const count = el(doc, 'span', 'muted');
  bar.append(input, count);
  const box = el(doc, 'div', 'code');
  host.replaceChildren(bar, box);
  const hl = new LazyHighlighter(text, language);
  /** @type {{ hits: number[], current: number, set?: Set<number> }} */
  const find = { hits: [], current: -1 };
  const list = new VirtualList(box, {
    rowHeight: LINE_HEIGHT,
    overscan: 6,
    createRow: () => {
      const row = el(doc, 'div', 'code-line');
      row.appendChild(el(doc, 'span', 'ln'));
      row.appendChild(el(doc, 'span', 'src'));
      return row;
    },
    renderRow: (row, i) => {
      const [number, src] = row.children; // createRow's two spans
      number.textContent = String(i + 1);
      row.classList.toggle('hit', find.set !== undefined && find.set.has(i));
      row.classList.toggle('current', find.hits[find.current] === i);
      src.replaceChildren();
      for (const [cls, part] of hl.tokens(i)) {
        if (cls) src.appendChild(el(doc, 'span', cls, part));
        else src.appendChild(doc.createTextNode(part));
      }
    },
  });
  /** @param {number} step */
  const go = (step) => {
    if (!find.hits.length) return;
    find.current = (find.current + step + find.hits.length) % find.hits.length;
    count.textContent = `${find.current + 1} of ${find.hits.length} lines`;
    list.scrollToIndex(find.hits[find.current], 'center');
    list.draw();
  };
  input.addEventListener('input', () => {
    const needle = input.value.toLowerCase();
    find.hits = needle ? hl.lines.flatMap((line, i) => (line.toLowerCase().includes(needle) ? [i] : [])) : [];
    find.set = new Set(find.hits);
    find.current = -1;
    count.textContent = needle ? `${find.hits.length} lines` : '';
    if (find.hits.length) go(1);
    else list.draw();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') go(e.shiftKey ? -1 : 1);
  });
  list.setCount(hl.lines.length);
  return { list, highlighter: hl, find };
}

/**
 * @param {RawEvent} event
 * @param {string} text
 * @returns {Language}
 */
function languageOf(event, text) {
  const key = eventKey(event);
  const meta = eventMeta(event);
  if ((isObject(meta) && meta.encoding === 'json') || key === 'dynamo_guards') return 'json';
  return guessLanguage(text);
}

/** @param {string} text */
function prettyJson(text) {
  if (text.length > PRETTY_JSON_LIMIT) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * Frames found in an event: dynamo_start.stack, the top-level stack, stack/user_stack fields.
 * @param {RawEvent} event
 * @returns {Array<[string, unknown[]]>}
 */
export function framesOf(event) {
  const meta = eventMeta(event);
  /** @type {Array<[string, unknown[]]>} */
  const found = [];
  if (isObject(meta)) {
    for (const field of ['stack', 'user_stack']) if (Array.isArray(meta[field])) found.push([`${eventKey(event)}.${field}`, meta[field]]);
  }
  if (Array.isArray(event.stack)) found.push(['stack', event.stack]);
  return found;
}

/**
 * @param {Document} doc
 * @param {OpenedTrace} trace
 * @param {RawEvent} event
 * @param {number} part
 */
function stackView(doc, trace, event, part) {
  const box = el(doc, 'div');
  const sets = framesOf(event);
  // A graph break or a failed compile: the user's line first, the stack a click away (stacks.js).
  const attributed = attributedOf(trace, event, part);
  if (attributed) box.appendChild(attributedView(doc, attributed));
  else if (sets.length === 0) box.appendChild(note(doc, 'This event has no stack.'));
  for (const [label, frames] of sets) {
    box.appendChild(el(doc, 'div', 'note', `${label} (${frames.length} frames, innermost last)`));
    const table = el(doc, 'table', 'frames');
    for (const f of trace.resolveFrames(frames, part)) {
      const tr = el(doc, 'tr');
      tr.appendChild(el(doc, 'td', '', `${f.file}:${f.line ?? '?'}`));
      tr.appendChild(el(doc, 'td', '', f.name));
      tr.appendChild(el(doc, 'td', 'loc', f.loc));
      table.appendChild(tr);
    }
    box.appendChild(table);
  }
  return box;
}

/**
 * The Stack tab, once compiles.json is read (a break's or failure's stack is its), unless another
 * draw has started meanwhile.
 * @param {HTMLElement} body
 * @param {OpenedTrace} trace
 * @param {RawEvent} event
 * @param {DetailState} state
 * @param {number} token
 */
async function drawStack(body, trace, event, state, token) {
  if (!trace.indexesRead) await trace.indexes.catch(() => {});
  if (token === state.token) body.replaceChildren(stackView(body.ownerDocument, trace, event, state.part));
}

/**
 * @param {Document} doc
 * @param {string} href
 * @param {string} text
 */
function linkTo(doc, href, text) {
  const a = el(doc, 'a', '', text);
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener';
  return a;
}

/**
 * @param {Document} doc
 * @param {OpenedTrace} trace
 * @param {RawEvent} event
 * @param {number} part
 */
async function linksView(doc, trace, event, part) {
  const box = el(doc, 'div', 'pad');
  const cid = compileIdOf(event);
  const list = el(doc, 'ul', 'links');
  /**
   * @param {string} path
   * @param {string} text
   */
  const add = (path, text) => {
    const href = trace.fileUrl(path, part);
    if (!href) return;
    const li = el(doc, 'li');
    li.appendChild(linkTo(doc, href, text));
    list.appendChild(li);
  };
  add('index.html', 'Report index');
  add('failures_and_restarts.html', 'Failures and restarts');
  const directory = await trace.compileDirectory(part);
  const entry = directory && directory[cid];
  if (entry && Array.isArray(entry.artifacts)) {
    for (const a of entry.artifacts) {
      if (a && typeof a.url === 'string') add(a.url, `${cid} ${a.name}${a.suffix ? ` ${a.suffix}` : ''}`);
      if (a && typeof a.readable_url === 'string') add(a.readable_url, `${cid} ${a.name} (readable)`);
    }
  }
  const meta = eventMeta(event);
  if (eventKey(event) === 'link' && isObject(meta) && typeof meta.url === 'string' && /^https?:\/\//i.test(meta.url)) {
    const li = el(doc, 'li');
    li.appendChild(linkTo(doc, meta.url, `link: ${typeof meta.name === 'string' && meta.name ? meta.name : meta.url}`));
    list.appendChild(li);
  }
  if (!list.children.length) box.appendChild(note(doc, trace.source.kind === 'http' ? 'No report pages for this event.' : 'Report pages need the trace served over HTTP (tlscope serve).'));
  box.appendChild(list);
  return box;
}

/**
 * Called once a payload is drawn: the tab's body, the event, its text and its part.
 * @typedef {(body: HTMLElement, event: RawEvent, text: string, part: number) => void} PayloadHook
 */

/**
 * The Payload tab of `event` drawn into `body`, unless another draw started meanwhile (`token`).
 * @param {HTMLElement} body
 * @param {OpenedTrace} trace
 * @param {RawEvent} event
 * @param {DetailState} state
 * @param {number} token
 * @param {PayloadHook} [onPayload]
 */
async function drawPayload(body, trace, event, state, token, onPayload) {
  const doc = body.ownerDocument;
  if (!event.payload_filename) return body.replaceChildren(note(doc, 'This event has no payload.'));
  body.replaceChildren(note(doc, `Loading ${event.payload_filename}…`));
  let text;
  try {
    text = await trace.payload(event, state.part);
  } catch (err) {
    if (token !== state.token) return;
    const packed = err instanceof Error && err.name === 'NotFound' && trace.source.kind === 'inline';
    const message = packed
      ? `This payload (${event.payload_size ?? '?'} bytes) was left out of the packed file to keep it small; open the trace with tlscope serve to see it.`
      : `Could not load the payload: ${messageOf(err)}`;
    body.replaceChildren(el(doc, 'p', packed ? 'note' : 'error', message));
    return;
  }
  if (token !== state.token) return;
  if (text === null) return body.replaceChildren(note(doc, 'This event has no payload (its file name is not a path inside the trace).'));
  const language = languageOf(event, text);
  const shown = language === 'json' ? prettyJson(text) : text;
  state.payloadShown = { language, lines: codeView(body, shown, language).highlighter.lines.length, bytes: text.length };
  if (onPayload) onPayload(body, event, text, state.part);
}

/**
 * The pane while no event is selected: what `idle` draws (the run's first answers), else a hint.
 * @param {HTMLElement} body
 * @param {HTMLElement} title
 * @param {((body: HTMLElement) => boolean) | undefined} idle
 */
function drawIdle(body, title, idle) {
  title.textContent = '';
  if (!idle || !idle(body)) body.replaceChildren(note(body.ownerDocument, 'Select an event.'));
}

/**
 * The detail pane; `show(event, part, tab)` fills it. Resolves once the tab is drawn. The
 * Compile tab is drawn by `compile(body, title)` (explorer/compile.js, through app.js), which
 * knows the compile id it shows; `redraw(tab)` draws the pane again, on `tab` if given.
 * @param {HTMLElement} root
 * @param {OpenedTrace} trace
 * `onPayload(body, event, text, part)` after a payload is drawn (the Graph view's link); `idle(body)`
 * draws the pane while no event is selected (false: it drew nothing).
 * @param {{ onTab?: (tab: string) => void, compile?: (body: HTMLElement, title: HTMLElement) => void, onPayload?: PayloadHook, idle?: (body: HTMLElement) => boolean }} [handlers]
 */
export function createDetail(root, trace, { onTab, compile, onPayload, idle } = {}) {
  const doc = root.ownerDocument;
  const body = /** @type {HTMLElement} */ (root.querySelector('#detail-body')); // index.html's
  const title = /** @type {HTMLElement} */ (root.querySelector('#detail-title'));
  /** @type {DetailState} */
  const state = { event: null, part: 0, tab: 'payload', token: 0, payloadShown: null };
  for (const button of root.querySelectorAll('.tabs button')) {
    if (!(button instanceof HTMLElement)) continue;
    button.addEventListener('click', () => {
      state.tab = button.dataset.tab || 'payload';
      if (onTab) onTab(state.tab);
      draw();
    });
  }
  async function draw() {
    const token = (state.token += 1);
    for (const b of root.querySelectorAll('.tabs button')) b.classList.toggle('on', b instanceof HTMLElement && b.dataset.tab === state.tab);
    // The Compile tab is a page to read: the pane takes most of the height while it shows.
    if (root.parentElement) root.parentElement.classList.toggle('compile-open', state.tab === 'compile');
    const event = state.event;
    state.payloadShown = null;
    if (state.tab === 'compile') {
      title.textContent = '';
      if (compile) compile(body, title);
      return undefined;
    }
    if (!event) return drawIdle(body, title, idle);
    title.textContent = `${compileIdOf(event)} ${eventKey(event)} · log line ${event.log_line ?? '?'}`;
    if (state.tab === 'event') {
      const pre = el(doc, 'pre', 'json', JSON.stringify(event, null, 2));
      return body.replaceChildren(pre);
    }
    if (state.tab === 'stack') return drawStack(body, trace, event, state, token);
    if (state.tab === 'links') {
      const view = await linksView(doc, trace, event, state.part);
      if (token === state.token) body.replaceChildren(view);
      return;
    }
    await drawPayload(body, trace, event, state, token, onPayload);
  }
  return {
    state,
    /**
     * @param {RawEvent} event
     * @param {number} part
     * @param {string} [tab]
     */
    show(event, part, tab) {
      state.event = event;
      state.part = part;
      if (tab) state.tab = tab;
      return draw();
    },
    /** @param {string} [tab] */
    redraw(tab) {
      if (tab) state.tab = tab;
      return draw();
    },
  };
}
