// The run's first answers (compiles.json `first_answers`, format 1.41: the first failure, the
// most frequent graph break, the first recompile), shown in the detail pane while no event is
// selected: what `tlscope LOG` printed under its counts, each a button to its compile. tlscope
// decided them; this only lays them out (a job's ranks saying the same line say it once).

import { el } from './dom.js';

/** Lines shown at most: a job's ranks can each say other lines. */
const SHOWN = 12;

/**
 * A line as the ranks say it: the first rank's answer, and how many more ranks say the same.
 * @typedef {{ answer: import('/lib/compiles.js').FirstAnswerView, more: number }} SaidLine
 */

/**
 * The answers of every part, one line per kind and text, in the parts' order (lower ranks first).
 * @param {import('/lib/compiles.js').FirstAnswerView[]} answers
 * @returns {SaidLine[]}
 */
export function saidLines(answers) {
  /** @type {Map<string, SaidLine>} */
  const lines = new Map();
  for (const answer of answers) {
    const key = `${answer.kind}\n${answer.text}`;
    const line = lines.get(key);
    if (line) line.more += 1;
    else lines.set(key, { answer, more: 0 });
  }
  return [...lines.values()];
}

/**
 * The first answers drawn into `body`, with `onOpen(cid, rank)` behind each compile's button;
 * false (nothing drawn) when the trace says none.
 * @param {HTMLElement} body
 * @param {import('/lib/compiles.js').FirstAnswerView[]} answers
 * @param {(cid: string, rank: number | null) => void} onOpen
 * @returns {boolean}
 */
export function drawFirstAnswers(body, answers, onOpen) {
  const lines = saidLines(answers);
  if (!lines.length) return false;
  const doc = body.ownerDocument;
  const box = el(doc, 'section', 'first-answers');
  box.id = 'first-answers';
  box.appendChild(el(doc, 'h3', '', 'What this trace says first'));
  const ul = el(doc, 'ul');
  for (const { answer, more } of lines.slice(0, SHOWN)) {
    const li = el(doc, 'li', `fa-${answer.kind}`);
    if (answer.rank !== null) li.appendChild(el(doc, 'span', 'fa-rank', more ? `rank ${answer.rank} (and ${more} more)` : `rank ${answer.rank}`));
    li.appendChild(el(doc, 'span', 'fa-text', answer.text));
    const cid = answer.compileId;
    if (cid !== null) {
      const button = el(doc, 'button', 'fa-open', `open ${cid}`);
      button.type = 'button';
      button.addEventListener('click', () => onOpen(cid, answer.rank));
      li.appendChild(button);
    }
    ul.appendChild(li);
  }
  box.appendChild(ul);
  const left = lines.length - SHOWN;
  if (left > 0) box.appendChild(el(doc, 'p', 'muted', `${left} more line${left === 1 ? '' : 's'} on other ranks: pick a rank to read its own.`));
  box.appendChild(el(doc, 'p', 'muted', 'Select an event, or open a compile.'));
  body.replaceChildren(box);
  return true;
}
