// The divergence banner of a multi-rank job: how its ranks diverge, one sentence per group of
// ranks, as tlscope wrote them in ranks.json (`divergence.groups[].sentence`, the same sentences
// `tlscope JOB` and `tlscope summary JOB` print). Shown above the page whatever the view, since a
// rank that compiled something the others did not is the first thing to know about a job.

import { el } from './dom.js';

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */

/**
 * `title` and a list of `sentences` (each an `li.<item>` of a `ul.<item>s`), appended to `banner`;
 * nothing when there are none.
 * @param {HTMLElement} banner
 * @param {string} title
 * @param {string} item
 * @param {string[]} sentences
 */
function sentenceList(banner, title, item, sentences) {
  if (!sentences.length) return;
  const doc = banner.ownerDocument;
  banner.appendChild(el(doc, 'strong', '', title));
  const list = el(doc, 'ul', `${item}s`);
  for (const s of sentences) list.appendChild(el(doc, 'li', item, s));
  banner.appendChild(list);
}

/**
 * Draw the banner (hidden when the ranks neither diverge nor call different collectives nor trace
 * different graphs nor ran under other settings, or the job has no ranks.json). Returns what the test hook shows: the divergent
 * compile ids, sorted, the sentences, and the collective and graph mismatches' sentences.
 * @param {HTMLElement} banner
 * @param {OpenedTrace} trace
 * @returns {{ divergent: string[], divergence: string[], collectives: string[], graphs: string[], settings: string[], frames: string[], caches: string[], said: string[] }}
 */
export function drawDivergence(banner, trace) {
  const doc = banner.ownerDocument;
  const div = trace.divergence;
  /** @type {Record<string, string[]>} each list's sentences, as ranks.json writes them */
  const said = {};
  // Each list in the order and with the title tlscope says it (ranks.json's `said`, format 1.40):
  // the groups (only when the ranks diverge), the functions some ranks compiled alone, the
  // collectives (they fail or hang a job), the settings, the graphs, the caches.
  for (const { list } of div ? div.said : []) said[list] = div ? div[list].map((item) => item.sentence) : [];
  banner.replaceChildren();
  banner.hidden = !(div && div.said.length);
  for (const { list, title } of div ? div.said : []) {
    sentenceList(banner, `${title}: `, LIST_CLASS[list], said[list]);
    if (list === 'groups') banner.appendChild(el(doc, 'span', 'muted dv-note', 'compile ids not on every rank are marked "only rN" in the sidebar; pick a rank to see its own'));
  }
  const sentences = (/** @type {string} */ list) => said[list] || [];
  return {
    divergent: div ? [...div.notOnEveryRank.keys()].sort() : [],
    divergence: sentences('groups'),
    collectives: sentences('collectives'),
    graphs: sentences('graphs'),
    settings: sentences('settings'),
    frames: sentences('frames'),
    caches: sentences('caches'),
    said: div ? div.said.map((s) => s.list) : [],
  };
}

/** The class of each list's items in the banner (`ul.<class>s` of `li.<class>`). */
const LIST_CLASS = /** @type {Record<string, string>} */ ({
  groups: 'dv-group', frames: 'dv-frame', collectives: 'dv-collective', settings: 'dv-setting', graphs: 'dv-graph', caches: 'dv-cache',
});
