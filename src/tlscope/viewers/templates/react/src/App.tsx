// A small tlscope viewer in React: the compile ids of a trace and a virtualized list of its
// events, filtered by clicking a compile id (kept in the URL). Change it into the viewer you
// need (docs/VIEWERS.md). React escapes every string it renders: never use
// dangerouslySetInnerHTML with trace data, which is untrusted.
import { useEffect, useReducer, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { openTrace, readState, setTestHook, writeState, type OpenedTrace } from './vendor/tlscope/tlscope.js';
import { rowCells } from './rows';

const ROW_HEIGHT = 24;

function traceUrl(): string | null {
  // ?trace=/traces/<id>/ beside tlscope serve, or a full URL of a `tlscope serve --allow-origin`.
  return new URL(location.href).searchParams.get('trace');
}

function EventList({ trace, version }: { trace: OpenedTrace; version: number }) {
  const parent = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: trace.events.total,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
  });
  return (
    <div ref={parent} className="events" data-version={version}>
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((item) => {
          const event = trace.events.row(item.index);
          const cells = event ? rowCells(event) : null;
          return (
            <div key={item.key} className="event" style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}>
              <span className="cid">{cells?.compileId}</span>
              <span className="key">{cells ? cells.label : 'loading…'}</span>
              <span className="summary">{cells?.summary}</span>
              <span className="size">{cells?.payload}</span>
            </div>
          );
        })}
      </div>
    </div>
  );
}

export function App() {
  const [trace, setTrace] = useState<OpenedTrace | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [cid, setCid] = useState<string>(() => readState(location.hash).cid ?? '');
  const [version, bump] = useReducer((n: number) => n + 1, 0);
  // What the list shows once its promise is kept: every event in, the filter of this cid applied.
  // The test hook says `loaded` or names a `filter` only beside the total that goes with it.
  const [loaded, setLoaded] = useState(false);
  const [applied, setApplied] = useState<string | null>(null);

  useEffect(() => {
    setTestHook({ ready: false, total: 0, compileIds: [] });
    const where = traceUrl();
    if (!where) {
      setError('Add ?trace=<trace folder URL> to the address (tlscope serve prints one per trace).');
      return;
    }
    let stop = () => {};
    openTrace(where)
      .then((opened) => {
        setTrace(opened);
        stop = opened.events.onChange(bump);
        opened.loaded.then(() => setLoaded(true));
      })
      .catch((err: Error) => setError(err.message));
    return () => stop();
  }, []);

  useEffect(() => {
    if (!trace) return;
    let current = true; // a filter set after this one wins, whichever answers first
    writeState({ cid });
    trace.events.setFilter({ cid }).then(() => {
      if (current) setApplied(cid);
      bump();
    });
    return () => {
      current = false;
    };
  }, [trace, cid]);

  useEffect(() => {
    if (error) setTestHook({ error });
    // While a filter is on its way the hook keeps the last state it described: a poll must never
    // see a new filter beside the old total, or the reverse.
    if (!trace || applied !== cid) return;
    // One update, from what this render shows: set apart, a poll could see `loaded` beside the
    // total of a render that had not counted every event yet.
    setTestHook({ ready: true, loaded, total: trace.events.total, compileIds: trace.compileIds, filter: applied });
  }, [trace, version, applied, cid, loaded, error]);

  if (error) return <p className="error">{error}</p>;
  if (!trace) return <p>Opening…</p>;
  return (
    <div className="app">
      <header>
        <strong>tlscope-viewer-template</strong> {trace.manifest?.torch_version}{' '}
        <span className="count">{trace.events.total} events</span>
      </header>
      <main>
        <nav>
          <ol className="compile-ids">
            {['', ...trace.compileIds].map((id) => (
              <li key={id || 'all'} className={id === cid ? 'on' : ''} onClick={() => setCid(id)}>
                {id || 'all'} <span className="status">{id ? trace.status(id) ?? '' : ''}</span>
              </li>
            ))}
          </ol>
        </nav>
        <EventList trace={trace} version={version} />
      </main>
    </div>
  );
}
