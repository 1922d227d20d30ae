// Holding a big JSON Lines file in a tab without a JS object per line: the bytes are kept in
// blocks (each holding whole lines), with typed-array offsets of every line. A line is decoded
// and parsed only when it is looked at; 1,000,000 lines cost their bytes plus 12 bytes each.

const NEWLINE = 0x0a;

/**
 * `array`, or a copy of it at least `needed` long (doubling).
 * @param {Uint32Array<ArrayBuffer>} array
 * @param {number} needed
 * @returns {Uint32Array<ArrayBuffer>}
 */
function grow(array, needed) {
  if (needed <= array.length) return array;
  const next = new Uint32Array(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}

export class LineStore {
  /** @param {number} [expected] the number of lines to make room for at once (grown by doubling past it) */
  constructor(expected = 4096) {
    const room = Math.max(16, expected);
    /** @type {Array<Uint8Array | null>} each block's bytes, null while dropped */
    this.blocks = [];
    /** @type {number[]} index of the first line of each block */
    this.blockFirst = [];
    this.blockOf = new Uint32Array(room);
    this.startOf = new Uint32Array(room);
    this.endOf = new Uint32Array(room);
    this.count = 0;
    this.bytes = 0;
    /** @type {Uint8Array[]} */
    this.carry = [];
    this.carryBytes = 0;
    this.decoder = new TextDecoder();
    /** @type {((text: string) => void) | null} */
    this.header = null;
    // Where each block is in its file, so a dropped block can be read again (HTTP Range, Blob.slice).
    this.part = 0;
    this.offset = 0; // bytes of the current file pushed so far
    /** @type {number[]} */
    this.blockPart = [];
    /** @type {number[]} */
    this.blockStart = [];
    /** @type {number[]} */
    this.blockFileLen = [];
    this.synthetic = false;
    /** @type {Set<number> | null} blocks whose last newline was added (a file's last line had none) */
    this.blockEndsSynthetic = null;
  }

  /**
   * The lines that follow come from another file (the next rank's raw.jsonl).
   * @param {number} part
   */
  startFile(part) {
    this.part = part;
    this.offset = 0;
  }

  /**
   * The next line to complete is handed to `take(text)` instead of being stored.
   * @param {(text: string) => void} take
   */
  expectHeader(take) {
    this.header = take;
  }

  /**
   * Add the next bytes of the file; returns the number of lines completed so far.
   * @param {Uint8Array} chunk
   * @returns {number}
   */
  push(chunk) {
    const last = chunk.lastIndexOf(NEWLINE);
    const fileStart = this.offset - this.carryBytes;
    this.offset += chunk.length;
    if (last < 0) {
      // No line ends here (a long line): keep the pieces, joined once its newline comes.
      this.carry.push(chunk.slice());
      this.carryBytes += chunk.length;
      return this.count;
    }
    let block;
    if (this.carry.length) {
      block = new Uint8Array(this.carryBytes + last + 1);
      let at = 0;
      for (const piece of this.carry) {
        block.set(piece, at);
        at += piece.length;
      }
      block.set(chunk.subarray(0, last + 1), at);
    } else if (chunk.byteOffset === 0 && chunk.buffer.byteLength - chunk.length < 4096) {
      // A chunk that owns its buffer (what fetch streams give) is kept as it is, not copied: the
      // copy would double what loading a big file churns through.
      block = chunk.subarray(0, last + 1);
    } else {
      block = chunk.slice(0, last + 1);
    }
    this.carry = last + 1 < chunk.length ? [chunk.slice(last + 1)] : [];
    this.carryBytes = this.carry.length ? this.carry[0].length : 0;
    this.addBlock(block, fileStart);
    return this.count;
  }

  /** The file ended: a last line without a newline becomes a line too. */
  finish() {
    if (this.carry.length) {
      this.synthetic = true; // the newline added here is not in the file
      this.push(new Uint8Array([NEWLINE]));
      this.synthetic = false;
      this.offset -= 1;
    }
    return this.count;
  }

  /** Forget every block's bytes (they are read again, when needed, with `restore`). */
  dropAll() {
    this.blocks.fill(null);
  }

  /**
   * Put back block `b` from `bytes` (its file range); false when they are not what was read.
   * @param {number} b
   * @param {Uint8Array} bytes
   * @returns {boolean}
   */
  restore(b, bytes) {
    if (bytes.length !== this.blockFileLen[b]) return false;
    let block = bytes;
    if (this.blockEndsSynthetic && this.blockEndsSynthetic.has(b)) {
      block = new Uint8Array(bytes.length + 1);
      block.set(bytes);
      block[bytes.length] = NEWLINE;
    }
    this.blocks[b] = block;
    return true;
  }

  /**
   * @param {Uint8Array} whole
   * @param {number} [fileStart]
   */
  addBlock(whole, fileStart = 0) {
    let block = whole;
    let start = fileStart;
    if (this.header) {
      // The file's first line (raw.jsonl's string table) goes to its reader, not the table; the
      // block then starts after it, so a block holds exactly its stored lines.
      const end = block.indexOf(NEWLINE);
      const take = this.header;
      this.header = null;
      take(this.decoder.decode(block.subarray(0, end < 0 ? block.length : end)).replace(/\r$/, ''));
      if (end < 0 || end + 1 >= block.length) return;
      block = block.subarray(end + 1);
      start += end + 1;
    }
    const index = this.blocks.length;
    this.blocks.push(block);
    this.blockPart.push(this.part);
    this.blockStart.push(start);
    this.blockFileLen.push(block.length - (this.synthetic ? 1 : 0));
    if (this.synthetic) (this.blockEndsSynthetic ||= new Set()).add(index);
    this.blockFirst.push(this.count);
    this.bytes += block.length;
    let at = 0;
    while (at < block.length) {
      let end = block.indexOf(NEWLINE, at);
      if (end < 0) end = block.length;
      let stop = end;
      if (stop > at && block[stop - 1] === 0x0d) stop -= 1;
      if (stop > at) this.addLine(index, at, stop);
      at = end + 1;
    }
  }

  /**
   * @param {number} block
   * @param {number} start
   * @param {number} end
   */
  addLine(block, start, end) {
    const n = this.count;
    if (n >= this.blockOf.length) {
      this.blockOf = grow(this.blockOf, n + 1);
      this.startOf = grow(this.startOf, n + 1);
      this.endOf = grow(this.endOf, n + 1);
    }
    this.blockOf[n] = block;
    this.startOf[n] = start;
    this.endOf[n] = end;
    this.count = n + 1;
  }

  /**
   * The bytes of block `b`; it must be held (not dropped).
   * @param {number} b
   * @returns {Uint8Array}
   */
  heldBlock(b) {
    const block = this.blocks[b];
    if (!block) throw new Error(`block ${b} of the file is not held (dropped: read it again first)`);
    return block;
  }

  /**
   * The bytes of line `i` (0-based, without its newline).
   * @param {number} i
   * @returns {Uint8Array}
   */
  lineBytes(i) {
    return this.heldBlock(this.blockOf[i]).subarray(this.startOf[i], this.endOf[i]);
  }

  /**
   * @param {number} i
   * @returns {string}
   */
  text(i) {
    return this.decoder.decode(this.lineBytes(i));
  }

  /**
   * The lines of block `b` as one string, and the index of its first line.
   * @param {number} b
   * @returns {{ text: string, first: number }}
   */
  blockText(b) {
    return { text: this.decoder.decode(this.heldBlock(b)), first: this.blockFirst[b] };
  }
}

/**
 * Feed `stream` into `store` chunk by chunk; `onLines(from, to)` is called after each chunk with
 * the range of lines it completed. Resolves with the line count when the stream ends.
 *
 * @param {ReadableStream<Uint8Array>} stream
 * @param {LineStore} store
 * @param {(from: number, to: number) => unknown} onLines
 * @returns {Promise<number>}
 */
export async function streamLines(stream, store, onLines) {
  const reader = stream.getReader();
  let seen = store.count;
  for (;;) {
    const { done, value } = await reader.read();
    const count = done ? store.finish() : store.push(value);
    if (count > seen) {
      await onLines(seen, count);
      seen = count;
    }
    if (done) return count;
  }
}
