// tlscope's JS client for the trace format (docs/FORMAT.md, docs/VIEWERS.md). ES modules, no
// build step, no third-party code; served by `tlscope serve` at /lib/tlscope.js.
//
//   import { openTrace } from '/lib/tlscope.js';
//   const trace = await openTrace('/traces/abc/');      // or a FileSource / InlineSource
//   trace.events.total; trace.events.row(0); await trace.payload(event);

export { CONTEXT_KEYS, compareCompileIds, compileIdOf, eventKey, eventLabel, eventSummary, isSafeRelative, manifestCompileIds, sortCompileIds } from './format.js';
export { FileSource, HttpSource, InlineSource, NotFound, isGzip, maybeGunzip, readAll } from './source.js';
export { LineStore, streamLines } from './lines.js';
export { LocalEvents, RemoteEvents, normalizeFilter } from './store.js';
export { DEFAULT_LIMITS, KEEP_BYTES, STATUS_ORDER, Trace, eventsApiFor, mergeGraphBreaks, openTrace, resolveFrames, statusFromMetrics } from './trace.js';
export { formatState, queryParam, readState, writeState } from './urlstate.js';
export { PERFETTO_ORIGIN, openInPerfetto, perfettoUrl } from './perfetto.js';
export { LazyHighlighter, guessLanguage, highlightJson, highlightPython } from './highlight.js';
export { MAX_HEIGHT, VirtualList, scrollMapping, scrollTopFor } from './virtual.js';
export { setTestHook } from './hook.js';
export { NOT_LOGGED, SHAPE_KINDS, describeCompile, formatChange, formatGuardFailure, frameText, payloadRef, recommendedFailure, topPhases } from './compiles.js';
export { TIMELINE_KINDS, TIMELINE_MAGIC, TIMELINE_VERSION, Timeline, TimelineError, decodeTimeline } from './timeline.js';
