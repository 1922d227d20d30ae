// What both pages of the explorer share: element lookup and the error shown on the landing page.

import { setTestHook } from '/lib/tlscope.js';

/**
 * The page's element of id `id`, of class `type` (HTMLElement unless said): the page's markup is
 * the explorer's own, so a missing or different element is a bug, thrown as one.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {{ new (): T, prototype: T }} [type]
 * @returns {T}
 */
export function byId(id, type) {
  const node = document.getElementById(id);
  const want = type || HTMLElement;
  if (!(node instanceof want)) throw new Error(`the page has no ${want.name} #${id}`);
  return /** @type {T} */ (node);
}

/**
 * A new element of `doc`, with its class and its text (set as text, never parsed as HTML).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {Document} doc
 * @param {K} tag
 * @param {string} [cls]
 * @param {string | null} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(doc, tag, cls, text) {
  const node = doc.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

/**
 * Set an element's text by changing its one Text node in place, and only when it differs. Replacing
 * textContent makes a new Text node and layout object per cell per frame: Blink's garbage
 * collected heap kept hundreds of MB of them at a million rows (bench/viewers.py, memory-infra).
 * @param {Element} cell
 * @param {string} value
 */
export function setText(cell, value) {
  const node = cell.firstChild;
  if (node === null) cell.appendChild(cell.ownerDocument.createTextNode(value));
  else if (node instanceof Text && node.data !== value && node === cell.lastChild) node.data = value;
  else if (!(node instanceof Text) || node !== cell.lastChild) cell.textContent = value;
}

/**
 * The event's target element (null when it is not an element).
 * @param {Event} event
 * @returns {Element | null}
 */
export function targetOf(event) {
  return event.target instanceof Element ? event.target : null;
}

/**
 * An error's message (anything thrown can be caught).
 * @param {unknown} err
 * @returns {string}
 */
export function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Show `message` on the landing page.
 * @param {string} message
 */
export function showError(message) {
  byId('landing').hidden = false;
  byId('main').hidden = true;
  byId('landing-error').textContent = message;
  byId('status').textContent = '';
  setTestHook({ error: message });
}
