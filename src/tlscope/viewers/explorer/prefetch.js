// Asks for a trace's first files the moment the page is parsed, while the explorer's modules are
// still coming: openTrace then takes these answers instead of asking again, so the manifest and
// the first bytes of raw.jsonl no longer wait for the whole module graph and then for each other.
// A classic script, not a module (index.html loads it first, parser-blocking: it is small and
// local, and a module, even async, ran only once the module graph was in, 60-100 ms later on two
// cores), so no imports, and everything inside one function run at once: the page's only
// global is window.__tlscopePrefetch. The only body read here is a copy of the manifest's, to know when it
// is in.

(() => {
  const BOTH = ['manifest.json', 'multi_rank_summary.json', 'compiles.json'];
  // A job's folder has no manifest.json or compiles.json at its top, one log's no multi_rank_summary.json.
  /** @type {Record<string, string[]>} */
  const BY_LAYOUT = { single: ['manifest.json', 'compiles.json'], multi: ['multi_rank_summary.json'] };

  /**
   * tlscope serve's status of the trace at `base` (`/traces/<id>/`), or null for another server.
   * @param {URL} base
   */
  function askStatus(base) {
    const match = base.pathname.match(/^(.*)\/traces\/([^/]+)\/$/);
    if (!match) return null;
    return fetch(`${base.origin}${match[1]}/api/traces/${match[2]}/status`, { cache: 'no-store' })
      .then((r) => (r.ok ? r.json() : null))
      .catch(() => null);
  }

  function prefetch() {
    const query = new URLSearchParams(location.search);
    const param = query.get('trace');
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
    // Served by tlscope serve: the files once its status says the trace is ready (asked before,
    // they would wait on its parse) and only those of its layout (the other index file is a 404).
    // A trace not ready yet gets nothing here: the page shows the parse's progress, then asks.
    const status = askStatus(base);
    // The Ranks view (explorer/ranks.js) reads a job's ranks.json and timeline.bin, nothing else.
    const ranksView = query.get('view') === 'ranks';
    for (const name of ranksView ? ['ranks.json', 'timeline.bin'] : BOTH) {
      if (ranksView) {
        // At once, beside the status: the view needs these two files whatever the status says
        // (the server answers them when the job is ready; the view waits for that anyway), and
        // waiting for the status first cost a round trip, 40-100 ms of a loaded server, before
        // the largest file. An answer that is not a success is asked again by the client.
        responses.set(name, get(name).then((r) => (r && r.ok ? r : null)));
        continue;
      }
      if (!status) {
        // Elsewhere (a static server): a job's summary only when there is no manifest (the
        // client asks in that order too), so a single log's folder asks for nothing it lacks.
        if (name !== 'multi_rank_summary.json') responses.set(name, get(name));
        continue;
      }
      responses.set(name, status.then((s) => {
        const ready = s && s.state === 'ready' && s.summary && typeof s.summary.multi_rank === 'boolean';
        return ready && BY_LAYOUT[s.summary.multi_rank ? 'multi' : 'single'].includes(name) ? get(name) : null;
      }));
    }
    if (ranksView) {
      /** @type {Window & { __tlscopePrefetch?: { base: string, responses: typeof responses, status: Promise<unknown> | null } }} */ (window).__tlscopePrefetch = { base: base.href, responses, status };
      return;
    }
    const manifestAnswer = responses.get('manifest.json') || Promise.resolve(null);
    if (!status) responses.set('multi_rank_summary.json', manifestAnswer.then((m) => (m && m.ok ? null : get('multi_rank_summary.json'))));
    // raw.jsonl once the manifest is in (not with it): the client needs the manifest first, and a
    // server that compresses as it sends (tlscope serve) otherwise shares its time between the two:
    // the big case's 141 KB manifest took 550 ms beside raw.jsonl's first megabytes. Without a
    // manifest (a multi-rank folder has none at its top) the client asks for what it needs itself.
    responses.set('raw.jsonl', manifestAnswer.then(async (manifest) => {
      if (!manifest || !manifest.ok) return null;
      await manifest.clone().arrayBuffer().catch(() => null);
      return get('raw.jsonl');
    }));
    /** @type {Window & { __tlscopePrefetch?: { base: string, responses: typeof responses, status: Promise<unknown> | null } }} */ (window).__tlscopePrefetch = { base: base.href, responses, status };
  }

  prefetch();
})();
