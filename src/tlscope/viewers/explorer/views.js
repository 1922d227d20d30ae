// The explorer's views and the URL that names them: the event table with its detail ("events",
// the default) and whole-trace views drawn in the main area in its place (Recompiles, Graph
// breaks, ...). A view is a small object (name, label, draw); view.js lists them and each lives
// in its own module. `?view=NAME` opens a view (a link to share); the one picked is kept in the
// fragment's `view=` with the rest of the page's state (lib/urlstate.js), which wins over the query.

import { queryParam, readState, setTestHook } from '/lib/tlscope.js';

/** The default view: the event table, its filters and the selected event's detail. */
export const EVENTS = 'events';

/**
 * A view of the main area.
 * @typedef {object} ViewDef
 * @property {string} name its `?view=` value
 * @property {string} label its button's text
 * @property {(pane: HTMLElement) => unknown} [draw] draws the view into the emptied pane (none: the event table)
 * @property {() => string} [badge] what follows the label, e.g. a count ('' for nothing)
 * @property {() => boolean} [hidden] its button is hidden while this says so (e.g. the trace has none of it)
 * @property {boolean} [keep] drawn from what it fetches itself, not from the trace's indexes: a
 *   redraw (compiles.json read) leaves it as it is (its scroll, selection and folds kept)
 */

/**
 * The view the URL names: the fragment's `view=`, else the query's `?view=`, else EVENTS.
 * @param {string[]} names the views there are
 * @returns {string}
 */
export function viewFromUrl(names) {
  const asked = readState(location.hash).view || queryParam('view') || EVENTS;
  return names.includes(asked) ? asked : EVENTS;
}

/**
 * What the fragment keeps of the view: nothing for the default view, unless the query names
 * another (then `events`, so that the fragment wins over it).
 * @param {string} name
 * @returns {string | null}
 */
export function viewForState(name) {
  if (name !== EVENTS) return name;
  const query = queryParam('view');
  return query && query !== EVENTS ? EVENTS : null;
}

/**
 * @param {Document} doc
 * @param {ViewDef} def
 */
function viewButton(doc, def) {
  const button = doc.createElement('button');
  button.type = 'button';
  button.id = `view-${def.name}`;
  button.dataset.view = def.name;
  return button;
}

/**
 * The view buttons in `bar`, switching between the event table (`table`: the elements shown for
 * it) and the views drawn in `pane`. `onChange(name)` after each switch (the URL is the caller's).
 * @param {{ bar: HTMLElement, pane: HTMLElement, table: HTMLElement[] }} where
 * @param {ViewDef[]} defs EVENTS first
 * @param {(name: string) => void} onChange
 */
export function createViews({ bar, pane, table }, defs, onChange) {
  const doc = bar.ownerDocument;
  const buttons = defs.map((def) => viewButton(doc, def));
  bar.replaceChildren(...buttons);
  const state = { current: EVENTS };
  const labels = () => defs.forEach((def, i) => {
    const badge = def.badge ? def.badge() : '';
    buttons[i].textContent = badge ? `${def.label} ${badge}` : def.label;
    buttons[i].hidden = Boolean(def.hidden && def.hidden()) && def.name !== state.current;
    buttons[i].classList.toggle('on', def.name === state.current);
  });
  const draw = () => {
    const def = defs.find((d) => d.name === state.current);
    labels();
    pane.hidden = !def || !def.draw;
    for (const node of table) node.hidden = !pane.hidden;
    if (def && def.draw) {
      pane.replaceChildren();
      def.draw(pane);
    }
  };
  /**
   * @param {string} name
   * @param {boolean} [changed] false: shown as the URL names it (nothing to keep)
   */
  const show = (name, changed = true) => {
    state.current = defs.some((d) => d.name === name) ? name : EVENTS;
    draw();
    setTestHook({ view: state.current });
    if (changed) onChange(state.current);
  };
  bar.addEventListener('click', (e) => {
    const button = e.target instanceof Element ? e.target.closest('[data-view]') : null;
    if (button instanceof HTMLElement && button.dataset.view) show(button.dataset.view);
  });
  return {
    show,
    names: defs.map((d) => d.name),
    /** Draw the shown view again (its data came), and the counts of every button. */
    redraw: () => {
      const def = defs.find((d) => d.name === state.current);
      if (state.current === EVENTS || (def && def.keep)) labels();
      else draw();
    },
    get current() {
      return state.current;
    },
  };
}
