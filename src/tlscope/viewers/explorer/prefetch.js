// Asks for a trace's first files the moment the page is parsed, while the explorer's modules are
// still coming: openTrace then takes these answers instead of asking again, so the manifest and
// the first bytes of raw.jsonl no longer wait for the whole module graph and then for each other.
// A classic script, not a module (index.html loads it first, parser-blocking: it is small and
// local, and a module, even async, ran only once the module graph was in, 60-100 ms later on two
// cores), so no imports, and everything inside one function run at once: the page's only
// global is window.__tlscopePrefetch. The only body read here is a copy of the manifest's, to know when it
// is in.

(() => {
  const INDEXES = ['manifest.json', 'multi_rank_summary.json', 'compiles.json'];

  function prefetch() {
    const param = new URLSearchParams(location.search).get('trace');
    if (!param || document.getElementById('tlscope-pack')) return;
    const base = new URL(param, location.href);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') return;
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    base.search = '';
    base.hash = '';
    /** @type {Map<string, Promise<Response | null>>} */
    const responses = new Map();
    // A failed request is asked again by the client as if never prefetched (null).
    /** @param {string} name */
    const get = (name) => fetch(new URL(name, base)).catch(() => null);
    for (const name of INDEXES) responses.set(name, get(name));
    const manifestAnswer = responses.get('manifest.json') || Promise.resolve(null);
    // raw.jsonl once the manifest is in (not with it): the client needs the manifest first, and a
    // server that compresses as it sends (tlscope serve) otherwise shares its time between the two:
    // the big case's 141 KB manifest took 550 ms beside raw.jsonl's first megabytes. Without a
    // manifest (a multi-rank folder has none at its top) the client asks for what it needs itself.
    responses.set('raw.jsonl', manifestAnswer.then(async (manifest) => {
      if (!manifest || !manifest.ok) return null;
      await manifest.clone().arrayBuffer().catch(() => null);
      return get('raw.jsonl');
    }));
    /** @type {Window & { __tlscopePrefetch?: { base: string, responses: typeof responses } }} */ (window).__tlscopePrefetch = { base: base.href, responses };
  }

  prefetch();
})();
