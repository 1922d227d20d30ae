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
 * @returns {{ divergent: string[], divergence: string[], collectives: string[], graphs: string[], settings: string[], frames: string[], caches: string[] }}
 */
export function drawDivergence(banner, trace) {
  const doc = banner.ownerDocument;
  const div = trace.divergence;
  const sentences = div && div.diverges ? div.groups.map((g) => g.sentence) : [];
  // A collective that differs between ranks fails or hangs the job: said first, even when the
  // ranks compiled the same ids.
  const collectives = div ? div.collectives.map((c) => c.sentence) : [];
  // Ranks that compiled the same id from other code (format 1.30): said after the collectives.
  const graphs = div ? div.graphs.map((g) => g.sentence) : [];
  // Ranks whose first compile ran under other settings (format 1.30): a cause, said before the graphs.
  const settings = div ? div.settings.map((s) => s.sentence) : [];
  // Ranks that compiled other functions, or numbered them differently (format 1.31): what
  // explains the groups, said just before them.
  const frames = div ? div.frames.map((f) => f.sentence) : [];
  // Compiles whose caches answered differently on different ranks (format 1.36): why a rank
  // compiled slower, said last.
  const caches = div ? div.caches.map((c) => c.sentence) : [];
  banner.replaceChildren();
  banner.hidden = ![sentences, collectives, graphs, settings, frames, caches].some((list) => list.length);
  sentenceList(banner, 'Collectives differ between ranks: ', 'dv-collective', collectives);
  sentenceList(banner, 'Settings differ between ranks: ', 'dv-setting', settings);
  sentenceList(banner, 'Graphs differ between ranks: ', 'dv-graph', graphs);
  sentenceList(banner, 'Ranks compiled other functions: ', 'dv-frame', frames);
  sentenceList(banner, 'Ranks diverge: ', 'dv-group', sentences);
  sentenceList(banner, 'Caches answered differently on different ranks: ', 'dv-cache', caches);
  if (sentences.length) {
    banner.appendChild(el(doc, 'span', 'muted dv-note', 'compile ids not on every rank are marked "only rN" in the sidebar; pick a rank to see its own'));
  }
  return { divergent: div ? [...div.notOnEveryRank.keys()].sort() : [], divergence: sentences, collectives, graphs, settings, frames, caches };
}
