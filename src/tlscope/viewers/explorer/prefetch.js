// Asks for a trace's first files the moment the page is parsed, while the explorer's modules are
// still coming: openTrace then takes these answers instead of asking again, so the manifest and
// the first bytes of raw.jsonl no longer wait for the whole module graph and then for each other.
// No imports (it runs as soon as it is fetched: `async`); nothing here reads a response.

const FILES = ['manifest.json', 'multi_rank_summary.json', 'compiles.json', 'raw.jsonl'];

function prefetch() {
  const param = new URLSearchParams(location.search).get('trace');
  if (!param || document.getElementById('tlscope-pack')) return;
  const base = new URL(param, location.href);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') return;
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  const responses = new Map();
  // A failed request is asked again by the client as if never prefetched (null).
  for (const name of FILES) responses.set(name, fetch(new URL(name, base)).catch(() => null));
  window.__tlscopePrefetch = { base: base.href, responses };
}

prefetch();
