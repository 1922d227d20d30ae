// A small tlscope viewer in React: the compile ids of a trace and a virtualized list of its
// events, filtered by clicking a compile id (kept in the URL). Change it into the viewer you
// need (docs/VIEWERS.md). React escapes every string it renders: never use
// dangerouslySetInnerHTML with trace data, which is untrusted.
import { useEffect, useReducer, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { openTrace, readState, setTestHook, writeState, type Trace } from './vendor/tlscope/tlscope.js';
import { rowCells } from './rows';

const ROW_HEIGHT = 24;

function traceUrl(): string | null {
  // ?trace=/traces/<id>/ beside tlscope serve, or a full URL of a `tlscope serve --allow-origin`.
  return new URL(location.href).searchParams.get('trace');
}

function EventList({ trace, version }: { trace: Trace; version: number }) {
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
  const [trace, setTrace] = useState<Trace | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [cid, setCid] = useState<string>(() => readState(location.hash).cid ?? '');
  const [version, bump] = useReducer((n: number) => n + 1, 0);
  const [loaded, setLoaded] = useState(false);

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
        // `loaded` goes to the test hook with the total it was reached at (the effect below), never
        // ahead of it: a test that waits for loaded then reads a total that is final.
        opened.loaded.then(() => setLoaded(true));
      })
      .catch((err: Error) => setError(err.message));
    return () => stop();
  }, []);

  useEffect(() => {
    if (!trace) return;
    writeState({ cid });
    trace.events.setFilter({ cid }).then(bump);
  }, [trace, cid]);

  useEffect(() => {
    if (error) setTestHook({ error });
    if (!trace) return;
    setTestHook({ ready: true, total: trace.events.total, compileIds: trace.compileIds, filter: cid, loaded });
  }, [trace, version, cid, error, loaded]);

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
