// A shared link `?view=graph&event=N` opened cold draws its graph first: the trace's events are
// not loaded and indexed before it (seconds of a big raw.jsonl on the page's one thread, where the
// graph needs one line of it). The page holds the loader behind a gate (openTrace's `hold`), reads
// event N alone from raw.jsonl (its bytes scanned for newlines, that one line parsed), draws its
// graphs/<md5>.json, and opens the gate once the graph is painted.

/** @typedef {import('/lib/tlscope.js').OpenedTrace} OpenedTrace */
/** @typedef {import('/lib/tlscope.js').RawEvent} RawEvent */
/** @typedef {import('/lib/tlscope.js').Source} Source */

/**
 * A gate: `promise` resolves once `open()` is called (any number of times).
 * @returns {{ promise: Promise<void>, open: () => void }}
 */
export function createGate() {
  /** @type {() => void} */
  let open = () => {};
  /** @type {Promise<void>} */
  const promise = new Promise((resolve) => {
    open = () => resolve();
  });
  return { promise, open };
}

/** Resolves after the next frame is painted (or after 100 ms where frames do not come: a hidden tab). */
export function afterPaint() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => setTimeout(() => {
      clearTimeout(timer);
      resolve(undefined);
    }, 0));
  });
}

/**
 * Bytes to one event: the line's text without its `\r`, parsed (as the table's loader does).
 * @param {Uint8Array[]} pieces
 * @returns {RawEvent}
 */
function parsePieces(pieces) {
  const decoder = new TextDecoder();
  const text = pieces.map((piece) => decoder.decode(piece, { stream: true })).join('') + decoder.decode();
  try {
    return JSON.parse(text.replace(/\r$/, ''));
  } catch {
    return { '(unparsable line)': text.slice(0, 200) };
  }
}

/**
 * Event `n` of one raw.jsonl, read from its start without indexing: newlines are counted, and only
 * line n is decoded. As the table numbers them: the first line (the string table) is no event, nor
 * is a blank line (or a lone `\r`). Null when the file has fewer events.
 * @param {Source} source
 * @param {number} n
 * @returns {Promise<RawEvent | null>}
 */
export async function scanEvent(source, n) {
  const reader = (await source.stream('raw.jsonl')).getReader();
  /** @type {{ header: boolean, events: number, length: number, last: number, pieces: Uint8Array[] }} the line being read */
  const line = { header: true, events: 0, length: 0, last: 0, pieces: [] };
  /** The line ended: event n when it is. */
  const end = () => {
    const blank = line.length === 0 || (line.length === 1 && line.last === 0x0d);
    let found = null;
    if (line.header) line.header = false;
    else if (!blank) {
      if (line.events === n) found = parsePieces(line.pieces);
      line.events += 1;
    }
    Object.assign(line, { length: 0, pieces: [] });
    return found;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return end();
      for (let at = 0; ;) {
        const newline = value.indexOf(0x0a, at);
        const stop = newline < 0 ? value.length : newline;
        if (stop > at) {
          Object.assign(line, { length: line.length + stop - at, last: value[stop - 1] });
          if (!line.header && line.events === n) line.pieces.push(value.subarray(at, stop));
        }
        if (newline < 0) break;
        const found = end();
        if (found) return found;
        at = newline + 1;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * Event `n` of a trace whose events are not all in yet (held behind the gate, or still loading),
 * read alone from raw.jsonl: one part only (a job's ranks number their events one after another,
 * so rank K's start is known only once the ranks before it are read); null otherwise or on failure.
 * @param {OpenedTrace} trace
 * @param {number} n
 * @returns {Promise<{ event: RawEvent, part: number } | null>}
 */
export async function eventBeforeLoad(trace, n) {
  if (trace.parts.length !== 1) return null;
  try {
    const event = await scanEvent(trace.parts[0].source, n);
    return event ? { event, part: 0 } : null;
  } catch {
    return null;
  }
}
