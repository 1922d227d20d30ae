// Types of tlscope's JS client (tlscope.js). The format itself: docs/FORMAT.md.

/** One line of raw.jsonl: the log's envelope plus the fields tlscope adds. */
export interface RawEvent {
  timestamp?: string;
  process?: number;
  pathname?: string;
  lineno?: number;
  log_line?: number;
  payload_filename?: string;
  payload_size?: number;
  rank?: number;
  compiled_autograd_id?: number | null;
  frame_id?: number | null;
  frame_compile_id?: number | null;
  attempt?: number | null;
  has_payload?: string;
  stack?: Frame[];
  [eventKey: string]: unknown;
}

/** A stack frame as logged: `filename` indexes the string table. */
export interface Frame {
  filename?: number | string;
  uninterned_filename?: string;
  line?: number;
  name?: string;
  loc?: string;
}

export interface ResolvedFrame {
  file: string;
  line: number | null;
  name: string;
  loc: string;
}

export interface ManifestCompileId {
  id: string;
  dir: string;
  first: string | null;
  last: string | null;
  events: number;
}

/** manifest.json (FORMAT.md section 2); only the fields viewers commonly read are spelled out. */
export interface Manifest {
  format: 'tlscope';
  format_version: number;
  tlscope_version: string;
  torch_version: string | null;
  ranks: number[];
  compile_ids: ManifestCompileId[];
  events: Record<string, { count: number; payload_bytes: number }>;
  raw_jsonl_events: number;
  problems: { total: number; counts: Record<string, number>; first: unknown[] };
  [field: string]: unknown;
}

/** One compile id's entry in compiles.json (or derived when that file is absent). */
export interface CompileEntry {
  id: string;
  status: string;
  ranks?: Record<number, string>;
  /** In a multi-rank folder: each rank's own entry (the merged one takes the last rank's fields). */
  byRank?: Record<number, CompileEntry>;
  [field: string]: unknown;
}

/** A payload reference of compiles.json, checked: the event is raw.jsonl line `raw_line`. */
export interface PayloadRef {
  kind: string;
  raw_line: number;
  log_line: number | null;
  payload_filename: string | null;
}

/** A guard failure for display; `values` is `expected → actual` ("not logged" for a null side). */
export interface GuardFailureView {
  cacheEntry: string | null;
  kind: string;
  explanation: string;
  guard: string | null;
  expected: string | null;
  actual: string | null;
  values: string | null;
  where: string | null;
  code: string | null;
}

export interface ChangeView {
  input: string;
  what: string;
  before: string;
  after: string;
}

/** What a view shows of one compile id (describeCompile): every string is plain, untrusted text. */
export interface CompileView {
  id: string;
  status: string | null;
  ranks: Record<string, string>;
  /** `name at file:line`. */
  function: string | null;
  durationS: number | null;
  /** The slowest phases, `dynamo` (the whole) left out. */
  phases: Array<{ name: string; seconds: number; count: number }>;
  restartReasons: string[];
  isRecompile: boolean;
  restartedAs: string | null;
  recompile: null | {
    reason: string | null;
    comparedWith: string | null;
    recommended: (GuardFailureView & { index: number; why: string }) | null;
    guardFailures: GuardFailureView[];
    changes: ChangeView[];
    event: PayloadRef | null;
  };
  failure: null | { type: string; reason: string; where: string | null; code: string | null; traceback: PayloadRef | null };
  graphBreaks: Array<{ reason: string; where: string | null; code: string | null; event: PayloadRef | null }>;
  cache: Array<{ cache: string; outcome: string; reason: string | null; event: PayloadRef | null }>;
}

export interface Filter {
  kind?: string | null;
  cid?: string | null;
  rank?: number | string | null;
  q?: string | null;
}

export interface NormalFilter {
  kind: string | null;
  cid: string | null;
  rank: number | null;
  q: string | null;
}

/** What LocalEvents and RemoteEvents both offer: the table model. */
export interface EventTable {
  readonly total: number;
  readonly loadedEvents: number;
  filter: NormalFilter;
  /** The event of row `i` of the current view; undefined while its page is on its way. */
  row(i: number): RawEvent | undefined;
  setFilter(filter: Filter): Promise<number>;
  onChange(fn: (table: EventTable) => void): () => void;
  keyList(): Array<[string, number]>;
}

export class LocalEvents implements EventTable {
  constructor(expected?: number);
  readonly total: number;
  readonly loadedEvents: number;
  filter: NormalFilter;
  lines: LineStore;
  row(i: number): RawEvent | undefined;
  event(line: number): RawEvent;
  lineOf(row: number): number;
  rowOfLine(line: number): number;
  /** The line index of raw.jsonl line `rawLine` (1-based, 1 the string table) of part `part`, or -1. */
  lineOfRaw(part: number, rawLine: number): number;
  rankOfLine(line: number): number;
  partOfLine(line: number): number;
  cidCounts(): Map<string, number>;
  setFilter(filter: Filter): Promise<number>;
  onChange(fn: (table: EventTable) => void): () => void;
  keyList(): Array<[string, number]>;
}

export class RemoteEvents implements EventTable {
  constructor(api: string, options?: { fetchImpl?: typeof fetch; keyCounts?: Map<string, number> });
  readonly total: number;
  readonly loadedEvents: number;
  readonly remote: true;
  filter: NormalFilter;
  row(i: number): RawEvent | undefined;
  load(i: number): Promise<void>;
  /** raw.jsonl's first events as the unfiltered view's first rows (of `total`) until the API answers. */
  seed(events: RawEvent[], total: number): void;
  setFilter(filter: Filter): Promise<number>;
  onChange(fn: (table: EventTable) => void): () => void;
  keyList(): Array<[string, number]>;
}

export class LineStore {
  constructor(expected?: number);
  count: number;
  bytes: number;
  push(chunk: Uint8Array): number;
  finish(): number;
  expectHeader(take: (text: string) => void): void;
  lineBytes(i: number): Uint8Array;
  text(i: number): string;
}
export function streamLines(stream: ReadableStream<Uint8Array>, store: LineStore, onLines: (from: number, to: number) => unknown): Promise<number>;

/** Where a trace's files come from: every source offers these (subclasses differ in where the bytes are). */
export abstract class Source {
  abstract readonly kind: 'http' | 'files' | 'inline';
  /** `gz` (default true): fall back to `path.gz` when `path` does not exist. */
  stream(path: string, options?: { gz?: boolean }): Promise<ReadableStream<Uint8Array>>;
  bytes(path: string, options?: { gz?: boolean }): Promise<Uint8Array>;
  text(path: string, options?: { gz?: boolean }): Promise<string>;
  json(path: string, options?: { gz?: boolean }): Promise<unknown>;
  jsonOr<T>(path: string, fallback: T): Promise<unknown | T>;
  sub(prefix: string): Source;
  url(path: string): string | null;
  /** Whether bytes of `path` (after streaming it) can be read again by offset. */
  canReadRange(path: string): boolean;
  readRange(path: string, start: number, length: number): Promise<Uint8Array>;
}
export class HttpSource extends Source {
  /** `prefetch`: answers to requests made before the source existed (path -> Response or null), used once each when `base` is this source's. */
  constructor(base: string, options?: { fetchImpl?: typeof fetch; prefetch?: Prefetch });
  /** A file's size from a prefetched answer's Content-Length; 0 when it came content-encoded (no size said); null without one. */
  knownLength(path: string): Promise<number | null>;
  readonly kind: 'http';
  readonly base: URL;
  url(path: string): string;
}
export class FileSource extends Source {
  constructor(files: Map<string, Blob>);
  static fromFiles(files: Iterable<File> | ArrayLike<File>): FileSource;
  readonly kind: 'files';
  url(path: string): null;
}
export class InlineSource extends Source {
  /** Path -> base64 text (gzip or plain, sniffed) or bytes. */
  constructor(files: Map<string, string | Uint8Array>);
  readonly kind: 'inline';
  url(path: string): null;
}
export class NotFound extends Error {
  path: string;
}
export function isGzip(bytes: Uint8Array): boolean;
export function maybeGunzip(stream: ReadableStream<Uint8Array>): Promise<ReadableStream<Uint8Array>>;
export function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array>;

export interface TracePart {
  rank: number | null;
  prefix: string;
  source: Source;
  manifest: Manifest | null;
  stringTable?: Array<string | null>;
  compileDirectory?: Record<string, { artifacts: Array<{ name: string; url: string; number: number; suffix: string; readable_url: string | null }> }> | null;
}

export interface OpenOptions {
  mode?: 'auto' | 'local' | 'remote';
  limits?: { events?: number; bytes?: number };
  api?: string | null;
  fetchImpl?: typeof fetch;
  /** Requests already made for this trace (the explorer's prefetch.js sets window.__tlscopePrefetch). */
  prefetch?: Prefetch;
  onProgress?: (eventsLoaded: number) => void;
  /** Above this many bytes, drop raw.jsonl's bytes once indexed where the source can read ranges. */
  keepBytes?: number;
  /** false: resolve at the first rows without waiting for compiles.json; await `trace.indexes` for it. */
  waitForIndexes?: boolean;
}

export interface Prefetch {
  base: string;
  responses: Map<string, Promise<Response | null>>;
}

/** One distinct graph break of compiles.json `graph_breaks`, merged over ranks. */
export interface GraphBreak {
  reason: string;
  file: string | null;
  line: number | null;
  name: string | null;
  code: string | null;
  /** How many dynamo_graph_break_reason artifacts (summed over ranks). */
  count: number;
  ranks: number[];
  /** Each artifact's compile id (and rank in a multi-rank folder), in log order. */
  sites: Array<{ cid: string; rank: number | null }>;
}

export class Trace {
  readonly source: Source;
  readonly multiRank: boolean;
  readonly parts: TracePart[];
  readonly manifest: Manifest | null;
  readonly mode: 'local' | 'remote';
  readonly events: EventTable;
  /** Resolves when every event is in (local) or when the events API has answered (remote). */
  readonly loaded: Promise<Trace>;
  /** Resolves once compiles.json is read (statuses, graph breaks); rejects if it is unreadable. */
  readonly indexes: Promise<void>;
  /** Whether compiles.json has been asked for and answered (found, absent or unreadable). */
  readonly indexesRead: boolean;
  readonly ranks: number[];
  readonly expectedEvents: number | null;
  readonly compileIds: string[];
  readonly compiles: Map<string, CompileEntry>;
  /** Where statuses come from: 'compiles.json', 'multi_rank_summary.json' or 'none' (derived). */
  readonly statusSource: string;
  /** What each status means, from compiles.json `statuses` (empty without it). */
  readonly statusText: Map<string, string>;
  /** compiles.json's distinct graph breaks, most frequent first (empty without compiles.json). */
  readonly graphBreaks: GraphBreak[];
  status(compileId: string): string | null;
  /** A compile id's compiles.json entry as `rank` logged it (the merged entry otherwise), or null. */
  compileEntry(compileId: string, rank?: number | null): CompileEntry | null;
  /** The compile id of a payload reference's event, read from its line (null when paged from the server). */
  refCompileId(ref: { raw_line: number }, rank?: number | null): Promise<string | null>;
  /** The row of the current view holding a payload reference's event (of rank `rank`'s folder), or -1. */
  rowOfRef(ref: { raw_line: number; log_line: number | null }, rank?: number | null): Promise<number>;
  stringTable(part?: number): Array<string | null>;
  resolveFrames(frames: Frame[] | undefined, part?: number): ResolvedFrame[];
  partOfRank(rank: number | undefined): number;
  payload(event: RawEvent, part?: number): Promise<string | null>;
  fileUrl(path: string, part?: number): string | null;
  /** compile_directory.json of a part (report pages per compile id), fetched on first use. */
  compileDirectory(part?: number): Promise<TracePart['compileDirectory']>;
  chromiumEvents(): Promise<Uint8Array>;
}

export const DEFAULT_LIMITS: { events: number; bytes: number };
/** Bytes of raw.jsonl kept in the tab once indexed; above, blocks are read again when shown. */
export const KEEP_BYTES: number;
export function openTrace(where: string | URL | Source, options?: OpenOptions): Promise<Trace>;
export function eventsApiFor(traceUrl: string): string | null;
export function resolveFrames(frames: Frame[] | undefined, table: Array<string | null>): ResolvedFrame[];
export function mergeGraphBreaks(lists: Array<{ rank: number | null; breaks: unknown }>): GraphBreak[];
/** compiles.json's status vocabulary (docs/FORMAT.md), most severe first. */
export const STATUS_ORDER: readonly string[];
/** A status in that vocabulary from a compilation_metrics record (when compiles.json is absent). */
export function statusFromMetrics(metrics: unknown): string | null;

export const CONTEXT_KEYS: Set<string>;
export function eventKey(event: RawEvent): string;
export function eventLabel(event: RawEvent): string;
export function compileIdOf(event: RawEvent): string;
export function eventSummary(event: RawEvent, limit?: number): string;
export function isSafeRelative(path: string): boolean;
export function manifestCompileIds(manifest: Manifest | null): string[];
export function compareCompileIds(a: string, b: string): number;
/** `ids` sorted as compareCompileIds sorts them (each id's key computed once). */
export function sortCompileIds(ids: string[]): string[];
export function normalizeFilter(filter?: Filter): NormalFilter;

export type ViewState = Record<string, string>;
export function readState(hash: string): ViewState;
export function formatState(state: Record<string, string | number | null | undefined>): string;
export function writeState(state: Record<string, string | number | null | undefined>, win?: Window): string;
export function queryParam(name: string, win?: Window): string | null;

export const PERFETTO_ORIGIN: string;
export function perfettoUrl(wanted?: string | null): string | null;
export function openInPerfetto(
  buffer: ArrayBuffer | Promise<ArrayBuffer>,
  options?: { url?: string; title?: string; fileName?: string; timeoutMs?: number; win?: Window },
): Promise<Window>;

export type Token = [cls: string, text: string];
export function highlightPython(line: string, state?: string | null): { tokens: Token[]; state: string | null };
export function highlightJson(line: string): { tokens: Token[]; state: null };
export function guessLanguage(text: string, hint?: string): 'json' | 'python' | 'text';
export class LazyHighlighter {
  constructor(text: string, language: 'json' | 'python' | 'text');
  readonly lines: string[];
  tokens(line: number): Token[];
}

export const MAX_HEIGHT: number;
export function scrollMapping(a: { count: number; rowHeight: number; viewport: number; scrollTop: number }): { first: number; offset: number; virtual: number; scale: number };
export function scrollTopFor(a: { count: number; rowHeight: number; viewport: number; index: number }): number;
export class VirtualList {
  constructor(
    container: HTMLElement,
    options: { rowHeight?: number; overscan?: number; createRow: () => HTMLElement; renderRow: (el: HTMLElement, index: number) => void },
  );
  count: number;
  setCount(count: number): void;
  draw(): void;
  visibleRange(): { first: number; last: number };
  scrollToIndex(index: number, align?: 'auto' | 'top' | 'center'): void;
  /** Scroll to pixel `top` of the (scaled) scroll range and draw. Set the position through this,
   * not the container's scrollTop: the list reads no layout outside its scroll events. */
  scrollTo(top: number): void;
  /** The container's height as the resize observer last reported it. */
  readonly viewport: number;
  destroy(): void;
}

export interface TestHook {
  ready: boolean;
  total: number;
  compileIds: string[];
  [field: string]: unknown;
}
export function setTestHook(fields: Partial<TestHook>, win?: Window): TestHook;

declare global {
  interface Window {
    __tlscope?: TestHook;
  }
}

/** Guard kinds about a tensor's shape (`size`, `stride`, `rank`). */
export const SHAPE_KINDS: Set<string>;
/** What a view shows where the log holds no value: "not logged". */
export const NOT_LOGGED: string;
/** A user frame as `file:line in name` (null without a file). */
export function frameText(frame: unknown): string | null;
export function payloadRef(ref: unknown): PayloadRef | null;
export function formatGuardFailure(failure: unknown): GuardFailureView;
export function formatChange(change: unknown): ChangeView;
/**
 * The guard failure that explains a recompile best (FORMAT.md "Which failure is the cause"): the
 * newest entry whose failed guard is not a specialised tensor shape; else the newest entry.
 */
export function recommendedFailure(recompile: unknown): { index: number; failure: Record<string, unknown>; why: string } | null;
export function topPhases(phases: unknown, n?: number): Array<{ name: string; seconds: number; count: number }>;
export function describeCompile(entry: unknown, merged?: { status?: string | null; ranks?: Record<string, string> }): CompileView;

/** One event of timeline.bin (FORMAT.md section 17), as `tlscope.timeline.read` gives it in Python. */
export interface TimelineEvent {
  rank: number | null;
  name: string;
  cat: string;
  /** Epoch microseconds. */
  start_us: number;
  dur_us: number;
  /** Display form (`[0/1]`) or null. */
  compile_id: string | null;
  depth: number;
  kind: 'span' | 'complete' | 'instant' | 'unclosed' | 'unopened';
}
/** `TLSTIME\0`, the first 8 bytes of timeline.bin. */
export const TIMELINE_MAGIC: string;
export const TIMELINE_VERSION: number;
export const TIMELINE_KINDS: string[];
export class TimelineError extends Error {}
/** A decoded timeline.bin, column by column (one slot per event). */
export class Timeline {
  version: number;
  minor: number;
  skipped: number;
  strings: string[];
  labels: Uint32Array;
  compileIds: Uint32Array;
  count: number;
  /** -1 where the log had no rank. */
  rank: Int32Array;
  start: Float64Array;
  dur: Float64Array;
  label: Uint32Array;
  compile: Uint32Array;
  depth: Uint8Array;
  kind: Uint8Array;
  /** Distinct ranks in file order. */
  ranks: number[];
  event(i: number): TimelineEvent;
  events(): TimelineEvent[];
}
/** Decode a whole timeline.bin (throws TimelineError when it is not one, or truncated). */
export function decodeTimeline(data: ArrayBuffer | Uint8Array): Timeline;
