// Where a trace's files come from: an HTTP base URL (a static folder or `tlscope serve`), files
// the user picked or dropped, or data inlined into a packed HTML file. Every source gives the
// same three reads (bytes, JSON, a byte stream), decompressing gzip in the browser.

import { isSafeRelative } from './format.js';

/**
 * A byte stream, marked `gzipped` when its bytes were gunzipped on the way.
 * @typedef {ReadableStream<Uint8Array> & { gzipped?: boolean }} ByteStream
 */

/**
 * Answers to requests made before a source existed (the explorer's prefetch.js sets
 * window.__tlscopePrefetch): path -> a promise of the Response, or of null when it failed; and
 * `status`, tlscope serve's status of the trace asked at once (lib/served.js), when served there.
 * @typedef {{ base: string, responses: Map<string, Promise<Response | null>>, status?: Promise<unknown> | null }} Prefetch
 */

/** @typedef {{ gz?: boolean }} ReadOptions `gz` (default true): fall back to `path.gz` when `path` does not exist. */

/**
 * True when `bytes` starts with the gzip magic number.
 * @param {Uint8Array} bytes
 * @returns {boolean}
 */
export function isGzip(bytes) {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/**
 * A stream of the bytes of `stream`, gunzipped when they start with the gzip magic number.
 * @param {ReadableStream<Uint8Array>} stream
 * @returns {Promise<ByteStream>}
 */
export async function maybeGunzip(stream) {
  const reader = stream.getReader();
  const first = await reader.read();
  const head = first.done ? new Uint8Array(0) : first.value;
  // Chunks of fetch and Blob streams are backed by an ArrayBuffer (never a shared one), which
  // DecompressionStream requires; the casts say so.
  /** @type {ReadableStream<Uint8Array<ArrayBuffer>>} */
  const replay = new ReadableStream({
    start(controller) {
      if (head.length) controller.enqueue(/** @type {Uint8Array<ArrayBuffer>} */ (head));
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(/** @type {Uint8Array<ArrayBuffer>} */ (next.value));
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  /** @type {ByteStream} */
  const out = isGzip(head) ? replay.pipeThrough(new DecompressionStream('gzip')) : replay;
  out.gzipped = isGzip(head);
  return out;
}

/**
 * Read a whole stream into one Uint8Array.
 * @param {ReadableStream<Uint8Array>} stream
 * @returns {Promise<Uint8Array<ArrayBuffer>>}
 */
export async function readAll(stream) {
  /** @type {Uint8Array[]} */
  const parts = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A file of the trace that does not exist. */
export class NotFound extends Error {
  /** @param {string} path */
  constructor(path) {
    super(`not found: ${path}`);
    this.name = 'NotFound';
    this.path = path;
  }
}

/**
 * Where a trace's files come from: every source offers these reads; subclasses differ in where
 * the bytes are (`kind`).
 */
export class Source {
  /** @param {'http' | 'files' | 'inline'} kind */
  constructor(kind) {
    /** @type {'http' | 'files' | 'inline'} */
    this.kind = kind;
    /** @type {Map<string, boolean>} path -> whether its bytes can be read again by offset (see readRange) */
    this.seekable = new Map();
  }

  /**
   * Raw stream of `path` (not decompressed); throws NotFound. Subclasses implement it.
   * @param {string} path
   * @returns {Promise<ReadableStream<Uint8Array>>}
   */
  async rawStream(path) {
    throw new NotFound(path);
  }

  /**
   * A link to `path`, or null where files have no URL (picked or inlined files).
   * @param {string} path
   * @returns {string | null}
   */
  // eslint-disable-next-line no-unused-vars -- the subclasses' signature: HttpSource links `path`
  url(path) {
    return null;
  }

  /**
   * A file's byte size when known without asking (HttpSource: a prefetched answer's); else null.
   * @param {string} path
   * @returns {Promise<number | null>}
   */
  // eslint-disable-next-line no-unused-vars -- the subclasses' signature
  async knownLength(path) {
    return null;
  }

  /**
   * The decompressed byte stream of `path`, or of `path.gz` when only that exists (unless `gz` is false).
   * @param {string} path
   * @param {ReadOptions} [options]
   * @returns {Promise<ByteStream>}
   */
  async stream(path, { gz = true } = {}) {
    if (!isSafeRelative(path)) throw new Error(`unsafe path: ${path}`);
    let stream;
    try {
      stream = await maybeGunzip(await this.rawStream(path));
    } catch (err) {
      if (!gz || !(err instanceof NotFound) || path.endsWith('.gz')) throw err;
      stream = await maybeGunzip(await this.rawStream(`${path}.gz`));
      stream.gzipped = true;
    }
    // Whether bytes of this file can be read again by offset (see readRange).
    this.seekable.set(path, !stream.gzipped && this.rangeCapable(path));
    return stream;
  }

  /**
   * Whether `readRange(path, ...)` works (asked after `stream(path)`; subclasses say).
   * @param {string} path
   * @returns {boolean}
   */
  // eslint-disable-next-line no-unused-vars -- the subclasses' signature
  rangeCapable(path) {
    return false;
  }

  /**
   * Bytes [start, start + length) of `path` as streamed before; only where `canReadRange(path)`.
   * @param {string} path
   * @param {number} start
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  // eslint-disable-next-line no-unused-vars -- the subclasses' signature
  async readRange(path, start, length) {
    throw new Error('this source cannot read ranges');
  }

  /**
   * Whether bytes of `path` (after streaming it) can be read again by offset.
   * @param {string} path
   * @returns {boolean}
   */
  canReadRange(path) {
    return Boolean(this.seekable.get(path));
  }

  /**
   * @param {string} path
   * @param {ReadOptions} [options]
   * @returns {Promise<Uint8Array<ArrayBuffer>>}
   */
  async bytes(path, options) {
    return readAll(await this.stream(path, options));
  }

  /**
   * @param {string} path
   * @param {ReadOptions} [options]
   * @returns {Promise<string>}
   */
  async text(path, options) {
    return new TextDecoder().decode(await this.bytes(path, options));
  }

  /**
   * @param {string} path
   * @param {ReadOptions} [options]
   * @returns {Promise<unknown>}
   */
  async json(path, options) {
    return JSON.parse(await this.text(path, options));
  }

  /**
   * JSON of `path`, or `fallback` when the file does not exist (no `.gz` fallback: index files are small).
   * @template T
   * @param {string} path
   * @param {T} fallback
   * @returns {Promise<unknown | T>}
   */
  async jsonOr(path, fallback) {
    try {
      return await this.json(path, { gz: false });
    } catch (err) {
      if (err instanceof NotFound) return fallback;
      throw err;
    }
  }

  /**
   * A source for the subfolder `prefix` (e.g. `rank_0/`).
   * @param {string} prefix
   * @returns {Source}
   */
  sub(prefix) {
    return new SubSource(this, prefix);
  }
}

/** A subfolder of another source. */
class SubSource extends Source {
  /**
   * @param {Source} parent
   * @param {string} prefix
   */
  constructor(parent, prefix) {
    super(parent.kind);
    this.parent = parent;
    this.prefix = prefix.endsWith('/') ? prefix : `${prefix}/`;
  }

  /** @param {string} path */
  rawStream(path) {
    return this.parent.rawStream(this.prefix + path);
  }

  /** @param {string} path */
  rangeCapable(path) {
    return this.parent.rangeCapable(this.prefix + path);
  }

  /**
   * @param {string} path
   * @param {number} start
   * @param {number} length
   */
  readRange(path, start, length) {
    return this.parent.readRange(this.prefix + path, start, length);
  }

  /** @param {string} path */
  url(path) {
    return this.parent.url(this.prefix + path);
  }
}

/**
 * Files under a base URL. `fetchImpl` is injectable for tests. `prefetch` ({base, responses}:
 * a map from path to a promise of a Response, or of null when that request failed) holds answers
 * to requests made before this source existed (the explorer's prefetch.js); each is used once,
 * and only when its base is this source's.
 */
export class HttpSource extends Source {
  /**
   * @param {string} base
   * @param {{ fetchImpl?: typeof fetch, prefetch?: Prefetch }} [options]
   */
  constructor(base, { fetchImpl, prefetch } = {}) {
    super('http');
    const href = typeof location === 'undefined' ? undefined : location.href;
    const url = new URL(base, href);
    if (!url.pathname.endsWith('/')) url.pathname += '/';
    url.search = '';
    url.hash = '';
    this.base = url;
    /** @type {typeof fetch} */
    this.fetch = fetchImpl || ((...args) => fetch(...args));
    /** @type {Map<string, boolean>} path -> whether its answer said it serves byte ranges */
    this.ranges = new Map();
    /** @type {Map<string, Promise<Response | null>>} */
    this.prefetched = prefetch && prefetch.base === url.href && prefetch.responses instanceof Map ? new Map(prefetch.responses) : new Map();
  }

  /**
   * @param {string} path
   * @returns {string}
   */
  url(path) {
    return new URL(path, this.base).href;
  }

  /**
   * The prefetched answer for `path` (taken: a body is read once), or a new request.
   * @param {string} path
   * @returns {Promise<Response>}
   */
  async request(path) {
    const early = this.prefetched.get(path);
    this.prefetched.delete(path);
    const response = early ? await early : null;
    return response || this.fetch(this.url(path));
  }

  /**
   * The byte size of `path` as a prefetched answer tells it (its Content-Length), sparing a HEAD
   * before choosing a mode; 0 when that answer came content-encoded (tlscope serve gzips text as
   * it sends it and says no size, and a HEAD is answered the same way); null without one.
   *
   * @param {string} path
   * @returns {Promise<number | null>}
   */
  async knownLength(path) {
    const early = this.prefetched.get(path);
    const response = early ? await early : null;
    if (!response || !response.ok) return null;
    if (response.headers.get('content-encoding')) return 0;
    const length = Number(response.headers.get('content-length'));
    return Number.isFinite(length) && response.headers.get('content-length') !== null ? length : null;
  }

  /** @param {string} path */
  async rawStream(path) {
    const response = await this.request(path);
    if (response.status === 404 || response.status === 410) throw new NotFound(path);
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    // Offsets are of the decoded bytes, i.e. of the file itself, also when this answer came
    // gzip-encoded (tlscope serve compresses text, never a range); readRange checks the 206.
    this.ranges.set(path, response.headers.get('accept-ranges') === 'bytes');
    return response.body || new Blob([]).stream();
  }

  /** @param {string} path */
  rangeCapable(path) {
    return Boolean(this.ranges.get(path));
  }

  /**
   * @param {string} path
   * @param {number} start
   * @param {number} length
   */
  async readRange(path, start, length) {
    const headers = { Range: `bytes=${start}-${start + length - 1}` };
    // no-store: a range is read while the file's GET may still stream in, and the HTTP cache
    // holds a second request of one URL until the first ends (Chromium's cache lock, up to 20 s).
    const response = await this.fetch(this.url(path), { headers, cache: 'no-store' });
    if (response.status !== 206) throw new Error(`${path}: no range support (HTTP ${response.status})`);
    // An encoded range would be a piece of another representation than the file's bytes.
    if (response.headers.get('content-encoding')) throw new Error(`${path}: the range came encoded`);
    return new Uint8Array(await response.arrayBuffer());
  }
}

/** Files the user picked or dropped: a map from path inside the trace folder to a Blob. */
export class FileSource extends Source {
  /** @param {Map<string, Blob>} files */
  constructor(files) {
    super('files');
    this.files = files;
  }

  /**
   * From File objects with `webkitRelativePath` (a picked folder) or plain names: the common
   * leading folder is dropped, so picking `tl_out/` gives `manifest.json`, `rank_0/raw.jsonl`...
   *
   * @param {Iterable<File & { relativePath?: string }> | ArrayLike<File & { relativePath?: string }>} fileList
   * @returns {FileSource}
   */
  static fromFiles(fileList) {
    /** @type {Array<[string, File]>} */
    const entries = Array.from(fileList, (f) => [f.webkitRelativePath || f.relativePath || f.name, f]);
    const first = entries.length ? entries[0][0].split('/') : [];
    const common = first.length > 1 && entries.every(([p]) => p.startsWith(`${first[0]}/`)) ? first[0].length + 1 : 0;
    return new FileSource(new Map(entries.map(([p, f]) => [p.slice(common), f])));
  }

  /** @param {string} path */
  async rawStream(path) {
    const blob = this.files.get(path);
    if (!blob) throw new NotFound(path);
    return blob.stream();
  }

  rangeCapable() {
    return true; // a picked file can be sliced anywhere
  }

  /**
   * @param {string} path
   * @param {number} start
   * @param {number} length
   */
  async readRange(path, start, length) {
    const blob = this.files.get(path);
    if (!blob) throw new NotFound(path);
    return new Uint8Array(await blob.slice(start, start + length).arrayBuffer());
  }
}

/** @param {string} text */
function base64Bytes(text) {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * Files inlined in a page: a map from path to base64 text (gzip or not, sniffed), as
 * `tlscope pack` writes them.
 */
export class InlineSource extends Source {
  /** @param {Map<string, string | Uint8Array<ArrayBuffer>>} files path -> base64 text (gzip or plain, sniffed) or bytes */
  constructor(files) {
    super('inline');
    this.files = files;
  }

  /** @param {string} path */
  async rawStream(path) {
    const data = this.files.get(path);
    if (data === undefined) throw new NotFound(path);
    const bytes = typeof data === 'string' ? base64Bytes(data) : data;
    return new Blob([bytes]).stream();
  }
}
