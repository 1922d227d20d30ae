// The run's first answers (the first failure, the most frequent graph break, the first
// recompile, the slowest compile), shown in the detail pane while no event is selected: what `tlscope LOG` printed
// under its counts, each a button to its compile. A log's are its compiles.json's
// `first_answers` (format 1.41); a job's, ranks.json's (1.42), each line once with the ranks that
// say it. tlscope decided them; this only lays them out.

import { el } from './dom.js';

/**
 * The first answers drawn into `body`, with `onOpen(cid, rank)` behind each compile's button;
 * false (nothing drawn) when the trace says none.
 * @param {HTMLElement} body
 * @param {import('/lib/compiles.js').FirstAnswerView[]} answers
 * @param {number} more lines the job's ranks.json left out
 * @param {(cid: string, rank: number | null) => void} onOpen
 * @returns {boolean}
 */
export function drawFirstAnswers(body, answers, more, onOpen) {
  if (!answers.length) return false;
  const doc = body.ownerDocument;
  const box = el(doc, 'section', 'first-answers');
  box.id = 'first-answers';
  box.appendChild(el(doc, 'h3', '', answers.some((a) => a.who) ? 'What the ranks say first' : 'What this trace says first'));
  const ul = el(doc, 'ul');
  for (const answer of answers) {
    const li = el(doc, 'li', `fa-${answer.kind}`);
    if (answer.who) li.appendChild(el(doc, 'span', 'fa-rank', `${answer.who}:`));
    li.appendChild(el(doc, 'span', 'fa-text', answer.text));
    const cid = answer.compileId;
    if (cid !== null) {
      const where = answer.rank !== null ? ` on rank ${answer.rank}` : '';
      const button = el(doc, 'button', 'fa-open', `open ${cid}${where}`);
      button.type = 'button';
      button.addEventListener('click', () => onOpen(cid, answer.rank));
      li.appendChild(button);
    }
    ul.appendChild(li);
  }
  box.appendChild(ul);
  if (more > 0) box.appendChild(el(doc, 'p', 'muted', `and ${more} more line${more === 1 ? '' : 's'} on some ranks: pick a rank to read its own.`));
  box.appendChild(el(doc, 'p', 'muted', 'Select an event, or open a compile.'));
  body.replaceChildren(box);
  return true;
}
