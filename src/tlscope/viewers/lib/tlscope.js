// tlscope's JS client for the trace format (docs/FORMAT.md, docs/VIEWERS.md). ES modules, no
// build step, no third-party code; served by `tlscope serve` at /lib/tlscope.js.
//
//   import { openTrace } from '/lib/tlscope.js';
//   const trace = await openTrace('/traces/abc/');      // or a FileSource / InlineSource
//   trace.events.total; trace.events.row(0); await trace.payload(event);
//
// Its types (lib/tlscope.d.ts) are generated from these modules' JSDoc (dts.mjs): the typedefs
// below name the public ones.

/** @typedef {import('./format.js').RawEvent} RawEvent */
/** @typedef {import('./format.js').Frame} Frame */
/** @typedef {import('./format.js').Manifest} Manifest */
/** @typedef {import('./format.js').ManifestCompileId} ManifestCompileId */
/** @typedef {import('./format.js').JsonObject} JsonObject */
/** @typedef {import('./rules.js').ResolvedFrame} ResolvedFrame */
/** @typedef {import('./rules.js').GraphBreak} GraphBreak */
/** @typedef {import('./source.js').Prefetch} Prefetch */
/** @typedef {import('./source.js').ByteStream} ByteStream */
/** @typedef {import('./store.js').Filter} Filter */
/** @typedef {import('./store.js').NormalFilter} NormalFilter */
/** @typedef {import('./store.js').EventTable} EventTable */
/** @typedef {import('./model.js').TracePart} TracePart */
/** @typedef {import('./model.js').TraceCompile} TraceCompile */
/** @typedef {import('./model.js').CompileRecord} CompileRecord */
/** @typedef {import('./model.js').CompileDirectory} CompileDirectory */
/** @typedef {import('./trace.js').OpenOptions} OpenOptions */
/** @typedef {import('./trace.js').OpenedTrace} OpenedTrace */
/** @typedef {import('./trace.js').LocalTrace} LocalTrace */
/** @typedef {import('./trace.js').RemoteTrace} RemoteTrace */
/** @typedef {import('./urlstate.js').ViewState} ViewState */
/** @typedef {import('./highlight.js').Token} Token */
/** @typedef {import('./hook.js').TestHook} TestHook */
/** @typedef {import('./served.js').ServedStatus} ServedStatus */
/** @typedef {import('./timeline.js').TimelineEvent} TimelineEvent */
/** @typedef {import('./compiles.js').CompileView} CompileView */
/** @typedef {import('./compiles.js').GuardFailureView} GuardFailureView */
/** @typedef {import('./compiles.js').ChangeView} ChangeView */
/** @typedef {import('./compiles.js').PayloadRefView} PayloadRefView */
/** @typedef {import('./compiles.js').RecompileView} RecompileView */
/** @typedef {import('./compiles.js').FailureView} FailureView */
/** @typedef {import('./compiles.js').FixView} FixView */
/** @typedef {import('./compiles.js').AotInductorView} AotInductorView */
/** @typedef {import('./compiles.js').VllmView} VllmView */
/** @typedef {import('./divergence.js').Divergence} Divergence */
/** @typedef {import('./divergence.js').DivergenceGroup} DivergenceGroup */
/** @typedef {import('./divergence.js').CollectiveMismatch} CollectiveMismatch */
/** @typedef {import('./divergence.js').GraphMismatch} GraphMismatch */
/** @typedef {import('./divergence.js').GraphGroup} GraphGroup */
/** @typedef {import('./divergence.js').SettingsMismatch} SettingsMismatch */
/** @typedef {import('./divergence.js').FrameShift} FrameShift */
/** @typedef {import('./divergence.js').FrameRef} FrameRef */
/** @typedef {import('./divergence.js').CacheMismatch} CacheMismatch */
/** @typedef {import('./divergence.js').MatrixRow} MatrixRow */
/** @typedef {import('./divergence.js').RankLine} RankLine */
/** @typedef {import('./divergence.js').Straggler} Straggler */
/** @typedef {import('./divergence.js').Stragglers} Stragglers */
/** @typedef {import('./divergence.js').RanksRead} RanksRead */
/** @typedef {import('./ranks-json.js').RanksFile} RanksFile */
/** @typedef {import('./exports.js').ExportCallView} ExportCallView */
/** @typedef {import('./exports.js').ExportIssueView} ExportIssueView */
/** @typedef {import('./exports.js').ExportFixView} ExportFixView */
/** @typedef {import('./exports.js').ExportPlace} ExportPlace */
/** @typedef {import('./exports.js').ExportRef} ExportRef */
// compiles.json as docs/FORMAT.md section 14 documents it (from its JSON Schema; compiles-json.js).
/** @typedef {import('./compiles-json.js').CompilesFile} CompilesFile */
/** @typedef {import('./compiles-json.js').CompileEntry} CompileEntry */
/** @typedef {import('./compiles-json.js').SourceLocation} SourceLocation */
/** @typedef {import('./compiles-json.js').Timing} Timing */
/** @typedef {import('./compiles-json.js').Phase} Phase */
/** @typedef {import('./compiles-json.js').GraphBreak} CompileGraphBreak */
/** @typedef {import('./compiles-json.js').PayloadRef} PayloadRef */
/** @typedef {import('./compiles-json.js').Recompile} Recompile */
/** @typedef {import('./compiles-json.js').GuardFailure} GuardFailure */
/** @typedef {import('./compiles-json.js').InputChange} InputChange */
/** @typedef {import('./compiles-json.js').Symbol} SymbolEntry */
/** @typedef {import('./compiles-json.js').Failure} Failure */
/** @typedef {import('./compiles-json.js').CacheOutcome} CacheOutcome */
/** @typedef {import('./compiles-json.js').Metrics} Metrics */
/** @typedef {import('./compiles-json.js').MetricsRecord} MetricsRecord */
/** @typedef {import('./compiles-json.js').TensorInput} TensorInput */
/** @typedef {import('./compiles-json.js').Graph} Graph */
/** @typedef {import('./compiles-json.js').GraphInput} GraphInput */
/** @typedef {import('./compiles-json.js').DistinctGraphBreak} DistinctGraphBreak */
// graphs/<md5>.json as docs/FORMAT.md section 18 documents it (from its JSON Schema; graph-json.js).
/** @typedef {import('./graph-json.js').GraphFile} GraphFile */
/** @typedef {import('./graph-json.js').StoredGraph} StoredGraph */
/** @typedef {import('./graph-json.js').StoredNode} StoredNode */
/** @typedef {import('./graph-json.js').StoredInput} StoredInput */
/** @typedef {import('./graph-json.js').FxSource} FxSource */
/** @typedef {import('./graph-json.js').TensorMeta} TensorMeta */
// provenance.json as docs/FORMAT.md section 19 documents it (provenance-json.js).
/** @typedef {import('./provenance-json.js').ProvenanceFile} ProvenanceFile */
/** @typedef {import('./provenance-json.js').ProvenanceEntry} ProvenanceEntry */

export { CONTEXT_KEYS, UNKNOWN_COMPILE_ID, compareCompileIds, compileIdOf, eventKey, eventLabel, eventMeta, eventSummary, graphNameOf, isObject, isSafeRelative, manifestCompileIds, sortCompileIds } from './format.js';
export { FileSource, HttpSource, InlineSource, NotFound, Source, isGzip, maybeGunzip, readAll } from './source.js';
export { LineStore, streamLines } from './lines.js';
export { LocalEvents, RemoteEvents, normalizeFilter } from './store.js';
export { DEFAULT_LIMITS, KEEP_BYTES, STATUS_ORDER, Trace, eventsApiFor, mergeGraphBreaks, openTrace, resolveFrames, statusFromMetrics } from './trace.js';
export { formatState, queryParam, readState, writeState } from './urlstate.js';
export { PERFETTO_ORIGIN, openInPerfetto, perfettoUrl } from './perfetto.js';
export { LazyHighlighter, guessLanguage, highlightJson, highlightPython } from './highlight.js';
export { MAX_HEIGHT, VirtualList, scrollMapping, scrollTopFor } from './virtual.js';
export { setTestHook } from './hook.js';
export { POLL_MS, describeProgress, fetchStatus, layoutOf, statusUrlFor, waitServed } from './served.js';
export { FIRST_ANSWER_KINDS, NOT_LOGGED, compiledFunctionName, describeCompile, describeFix, formatChange, formatGuardFailure, frameText, payloadRef, readAotInductor, readCompileEntries, readDynamic, readFirstAnswers, readSettings, readVllm, settingsText, recommendedFailure, topPhases } from './compiles.js';
export { columnOf, columnsOf, ranksText, readDivergence, readJobAnswers, readRanks } from './divergence.js';
export { readExports, readExportsNote } from './exports.js';
export { TIMELINE_KINDS, TIMELINE_MAGIC, TIMELINE_VERSION, Timeline, TimelineError, decodeTimeline } from './timeline.js';
