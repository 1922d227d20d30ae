// Where a trace's files come from: an HTTP base URL (a static folder or `tlscope serve`), files
// the user picked or dropped, or data inlined into a packed HTML file. Every source gives the
// same three reads (bytes, JSON, a byte stream), decompressing gzip in the browser.

import { isSafeRelative } from './format.js';

/** True when `bytes` starts with the gzip magic number. */
export function isGzip(bytes) {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** A stream of the bytes of `stream`, gunzipped when they start with the gzip magic number. */
export async function maybeGunzip(stream) {
  const reader = stream.getReader();
  const first = await reader.read();
  const head = first.done ? new Uint8Array(0) : first.value;
  const replay = new ReadableStream({
    start(controller) {
      if (head.length) controller.enqueue(head);
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  const out = isGzip(head) ? replay.pipeThrough(new DecompressionStream('gzip')) : replay;
  out.gzipped = isGzip(head);
  return out;
}

/** Read a whole stream into one Uint8Array. */
export async function readAll(stream) {
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

export class NotFound extends Error {
  constructor(path) {
    super(`not found: ${path}`);
    this.name = 'NotFound';
    this.path = path;
  }
}

class BaseSource {
  /** Raw stream of `path` (not decompressed); throws NotFound. Subclasses implement it. */
  async rawStream(path) {
    throw new NotFound(path);
  }

  /** The decompressed byte stream of `path`, or of `path.gz` when only that exists (unless `gz` is false). */
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
    this.seekable = this.seekable || new Map();
    this.seekable.set(path, !stream.gzipped && this.rangeCapable(path));
    return stream;
  }

  /** Whether `readRange(path, ...)` works (asked after `stream(path)`; subclasses say). */
  rangeCapable() {
    return false;
  }

  /** Bytes [start, start + length) of `path` as streamed before; only where `canReadRange(path)`. */
  async readRange() {
    throw new Error('this source cannot read ranges');
  }

  canReadRange(path) {
    return Boolean(this.seekable && this.seekable.get(path));
  }

  async bytes(path, options) {
    return readAll(await this.stream(path, options));
  }

  async text(path, options) {
    return new TextDecoder().decode(await this.bytes(path, options));
  }

  async json(path, options) {
    return JSON.parse(await this.text(path, options));
  }

  /** JSON of `path`, or `fallback` when the file does not exist (no `.gz` fallback: index files are small). */
  async jsonOr(path, fallback) {
    try {
      return await this.json(path, { gz: false });
    } catch (err) {
      if (err instanceof NotFound) return fallback;
      throw err;
    }
  }

  /** A source for the subfolder `prefix` (e.g. `rank_0/`). */
  sub(prefix) {
    return new SubSource(this, prefix);
  }
}

class SubSource extends BaseSource {
  constructor(parent, prefix) {
    super();
    this.parent = parent;
    this.prefix = prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.kind = parent.kind;
  }

  rawStream(path) {
    return this.parent.rawStream(this.prefix + path);
  }

  rangeCapable(path) {
    return this.parent.rangeCapable(this.prefix + path);
  }

  readRange(path, start, length) {
    return this.parent.readRange(this.prefix + path, start, length);
  }

  url(path) {
    return this.parent.url ? this.parent.url(this.prefix + path) : null;
  }
}

/**
 * Files under a base URL. `fetchImpl` is injectable for tests. `prefetch` ({base, responses}:
 * a map from path to a promise of a Response, or of null when that request failed) holds answers
 * to requests made before this source existed (the explorer's prefetch.js); each is used once,
 * and only when its base is this source's.
 */
export class HttpSource extends BaseSource {
  constructor(base, { fetchImpl, prefetch } = {}) {
    super();
    const href = typeof location === 'undefined' ? undefined : location.href;
    const url = new URL(base, href);
    if (!url.pathname.endsWith('/')) url.pathname += '/';
    url.search = '';
    url.hash = '';
    this.base = url;
    this.kind = 'http';
    this.fetch = fetchImpl || ((...args) => fetch(...args));
    this.prefetched = prefetch && prefetch.base === url.href && prefetch.responses instanceof Map ? new Map(prefetch.responses) : new Map();
  }

  url(path) {
    return new URL(path, this.base).href;
  }

  /** The prefetched answer for `path` (taken: a body is read once), or a new request. */
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
   */
  async knownLength(path) {
    const early = this.prefetched.get(path);
    const response = early ? await early : null;
    if (!response || !response.ok) return null;
    if (response.headers.get('content-encoding')) return 0;
    const length = Number(response.headers.get('content-length'));
    return Number.isFinite(length) && response.headers.get('content-length') !== null ? length : null;
  }

  async rawStream(path) {
    const response = await this.request(path);
    if (response.status === 404 || response.status === 410) throw new NotFound(path);
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    this.ranges = this.ranges || new Map();
    // Offsets are of the decoded bytes, i.e. of the file itself, also when this answer came
    // gzip-encoded (tlscope serve compresses text, never a range); readRange checks the 206.
    this.ranges.set(path, response.headers.get('accept-ranges') === 'bytes');
    return response.body || new Blob([]).stream();
  }

  rangeCapable(path) {
    return Boolean(this.ranges && this.ranges.get(path));
  }

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
export class FileSource extends BaseSource {
  constructor(files) {
    super();
    this.files = files;
    this.kind = 'files';
  }

  /**
   * From File objects with `webkitRelativePath` (a picked folder) or plain names: the common
   * leading folder is dropped, so picking `tl_out/` gives `manifest.json`, `rank_0/raw.jsonl`...
   */
  static fromFiles(fileList) {
    const entries = Array.from(fileList, (f) => [f.webkitRelativePath || f.relativePath || f.name, f]);
    const first = entries.length ? entries[0][0].split('/') : [];
    const common = first.length > 1 && entries.every(([p]) => p.startsWith(`${first[0]}/`)) ? first[0].length + 1 : 0;
    return new FileSource(new Map(entries.map(([p, f]) => [p.slice(common), f])));
  }

  url() {
    return null;
  }

  async rawStream(path) {
    const blob = this.files.get(path);
    if (!blob) throw new NotFound(path);
    return blob.stream();
  }

  rangeCapable() {
    return true; // a picked file can be sliced anywhere
  }

  async readRange(path, start, length) {
    return new Uint8Array(await this.files.get(path).slice(start, start + length).arrayBuffer());
  }
}

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
export class InlineSource extends BaseSource {
  constructor(files) {
    super();
    this.files = files;
    this.kind = 'inline';
  }

  url() {
    return null;
  }

  async rawStream(path) {
    const data = this.files.get(path);
    if (data === undefined) throw new NotFound(path);
    const bytes = typeof data === 'string' ? base64Bytes(data) : data;
    return new Blob([bytes]).stream();
  }
}
