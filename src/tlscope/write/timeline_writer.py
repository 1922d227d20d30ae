"""timeline.bin: every chromium event of a log (or of a job's ranks) packed in 16 bytes.

Layout in `tlscope.format.timeline_bin` and docs/FORMAT.md section 17. Streamed: the writer holds
one block of records (at most 1 MiB), the open spans of each thread (their `E` has not come
yet) and the string tables (distinct names, categories and compile ids), never the events. A
`B` is written where it comes, in log order, and its duration is patched in when its `E`
comes: in the block still in memory, or with a seek into the file when its block was flushed
(a span enclosing more than a block's events).
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import msgspec

from tlscope.format import timeline_bin as tl

#: Chromium `ts` beyond this are left out: epoch µs as a double is exact only below 2^53.
_MAX_TS = float(2**53)
_LABEL_OVERFLOW = "(more distinct names than timeline.bin indexes)"


class _Tables:
    """The deduplicated strings, (name, category) labels and compile ids the records index."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {}
        self.labels: dict[tuple[int, int], int] = {}
        self.compile_ids: dict[int, int] = {}

    def string(self, text: str) -> int:
        found = self.strings.get(text)
        if found is None:
            found = self.strings[text] = len(self.strings)
        return found

    def label(self, name: str, cat: str) -> int:
        key = (self.string(name), self.string(cat))
        found = self.labels.get(key)
        if found is None:
            if len(self.labels) >= tl.INDEX_MASK:  # 16M distinct names: a hostile log, not a trace
                return self.label(_LABEL_OVERFLOW, "") if name != _LABEL_OVERFLOW else 0
            found = self.labels[key] = len(self.labels)
        return found

    def compile_id(self, display: str | None) -> int:
        if display is None:
            return tl.NO_COMPILE_ID
        sid = self.string(display)
        found = self.compile_ids.get(sid)
        if found is None:
            if len(self.compile_ids) >= tl.NO_COMPILE_ID:
                return tl.NO_COMPILE_ID
            found = self.compile_ids[sid] = len(self.compile_ids)
        return found

    def encode(self) -> bytes:
        parts = [len(self.strings).to_bytes(4, "little")]
        for text in self.strings:
            data = text.encode("utf-8", "surrogatepass")
            parts += [len(data).to_bytes(4, "little"), data]
        parts.append(len(self.labels).to_bytes(4, "little"))
        parts += [name.to_bytes(4, "little") + cat.to_bytes(4, "little") for name, cat in self.labels]
        parts.append(len(self.compile_ids).to_bytes(4, "little"))
        parts += [sid.to_bytes(4, "little") for sid in self.compile_ids]
        return b"".join(parts)


class _Blocks:
    """The output file: blocks of records, one in memory, then the tables and the header."""

    def __init__(self, path: Path, block_events: int = tl.BLOCK_EVENTS) -> None:
        self._file: IO[bytes] = path.open("w+b")
        self._block_events = min(block_events, tl.BLOCK_EVENTS)
        self._file.write(bytes(tl.HEADER.size))
        self._buffer = bytearray()
        self._rank = tl.NO_RANK
        self._base = 0
        #: Where the block in memory will be written (the file's end until it is flushed).
        self._at = tl.HEADER.size
        self.events = 0

    def append(self, rank: int, start: int, words: tuple[int, int, int]) -> int:
        """Add a record; returns its offset in the file (where `patch` finds it)."""
        offset = start - self._base
        count = len(self._buffer) // tl.EVENT.size
        if not self._buffer or rank != self._rank or count >= self._block_events or not 0 <= offset <= tl.U32:
            self.flush()
            self._rank, self._base, offset = rank, start, 0
        at = self._at + tl.BLOCK.size + len(self._buffer)
        self._buffer += tl.EVENT.pack(offset, *words)
        self.events += 1
        return at

    def patch(self, at: int, duration: int, label_word: int) -> None:
        """Rewrite a record's duration and label word (a `B` its `E` closed)."""
        data = tl.EVENT.pack(0, duration, label_word, 0)[4:12]
        inside = at - self._at - tl.BLOCK.size
        if inside >= 0:
            self._buffer[inside + 4 : inside + 12] = data
            return
        self._file.seek(at + 4)
        self._file.write(data)
        self._file.seek(self._at)

    def flush(self) -> None:
        if not self._buffer:
            return
        count = len(self._buffer) // tl.EVENT.size
        self._file.write(tl.BLOCK.pack(self._rank, count, self._base))
        self._file.write(self._buffer)
        self._at += tl.BLOCK.size + len(self._buffer)
        self._buffer = bytearray()

    def write_block(self, rank: int, base: int, records: bytes) -> None:
        """A whole block at once (a job's merge): the block in memory is flushed first."""
        self.flush()
        self._file.write(tl.BLOCK.pack(rank, len(records) // tl.EVENT.size, base))
        self._file.write(records)
        self._at += tl.BLOCK.size + len(records)
        self.events += len(records) // tl.EVENT.size

    def close(self, tables: _Tables, skipped: int) -> None:
        self.flush()
        self._file.write(tables.encode())
        self._file.seek(0)
        self._file.write(tl.HEADER.pack(tl.MAGIC, tl.VERSION, tl.MINOR, 0, self._at, self.events, skipped))
        self._file.close()

    def abort(self) -> None:
        self._file.close()


class _Open(msgspec.Struct, array_like=True):
    """A `B` waiting for its `E`."""

    at: int
    start: int
    label: int


class TimelineWriter:
    """Feed it each chromium event (decoded payload) with its rank, in log order; then `close`."""

    def __init__(self, path: Path, block_events: int = tl.BLOCK_EVENTS) -> None:
        """`block_events`: events per block (fewer than the layout's most only in tests)."""
        self._blocks = _Blocks(path, block_events)
        self._tables = _Tables()
        #: Open spans per thread (rank, pid, tid); a thread with none open is dropped.
        self._open: dict[tuple[int, str, str], list[_Open]] = {}
        self.skipped = 0

    @property
    def events(self) -> int:
        return self._blocks.events

    def add(self, event: Any, rank: int | None) -> None:
        start = _start(event)
        if start is None:
            self.skipped += 1
            return
        r = tl.NO_RANK if rank is None or not 0 <= rank < tl.NO_RANK else rank
        thread = (r, _key(event.get("pid")), _key(event.get("tid")))
        stack = self._open.get(thread)
        ph = event.get("ph")
        if ph == "E" and stack:
            begin = stack.pop()
            if not stack:
                del self._open[thread]
            self._close(begin, start)
            return
        label = self._tables.label(_text(event.get("name")), _text(event.get("cat")))
        depth = min(len(stack) if stack else 0, tl.MAX_DEPTH)
        cid = self._tables.compile_id(_display(event.get("args")))
        kind, duration = _kind(ph, event)
        word, duration = _duration(label | kind << 24, duration)
        at = self._blocks.append(r, start, (duration, word, cid | depth << 24))
        if ph == "B":
            self._open.setdefault(thread, []).append(_Open(at, start, label))

    def _close(self, begin: _Open, end: int) -> None:
        word, duration = _duration(begin.label | tl.KIND_SPAN << 24, max(0, end - begin.start))
        self._blocks.patch(begin.at, duration, word)

    def close(self) -> None:
        self._blocks.close(self._tables, self.skipped)

    def abort(self) -> None:
        self._blocks.abort()


def _start(event: Any) -> int | None:
    """The event's start in whole µs, or None when it is not an event with a usable `ts`."""
    if not isinstance(event, dict):
        return None
    ts = event.get("ts")
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not abs(ts) < _MAX_TS:
        return None  # also NaN (a comparison with NaN is false)
    return math.floor(ts)


def _kind(ph: Any, event: dict[str, Any]) -> tuple[int, int]:
    if ph == "B":
        return tl.KIND_UNCLOSED, 0  # until its E comes
    if ph == "E":
        return tl.KIND_UNOPENED, 0
    if ph == "X":
        dur = event.get("dur")
        if isinstance(dur, (int, float)) and not isinstance(dur, bool) and 0 <= dur < _MAX_TS:
            return tl.KIND_COMPLETE, math.floor(dur)
        return tl.KIND_COMPLETE, 0
    return tl.KIND_INSTANT, 0


def _duration(word: int, duration: int) -> tuple[int, int]:
    """(label word, duration field): µs, or ms with FLAG_MS when µs do not fit in 32 bits."""
    if duration <= tl.U32:
        return word, duration
    return word | tl.FLAG_MS << 24, min(duration // 1000, tl.U32)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _key(value: Any) -> str:
    """A pid or tid as a dict key whatever JSON it is (a hostile log may put an object there)."""
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def _display(args: Any) -> str | None:
    """args.compile_id (`0/1`, chromium's text) in display form (`[0/1]`); None for `None`."""
    cid = args.get("compile_id") if isinstance(args, dict) else None
    return f"[{cid}]" if isinstance(cid, str) and cid != "None" else None


# -- a job's file: the ranks' files merged -----------------------------------------------------


def merge(parts: Iterable[tuple[int, Path]], target: Path) -> int:
    """OUT/timeline.bin from each rank's (rank, rank_N/timeline.bin), in the order given.

    The ranks' strings are merged into one table and each record's indexes remapped; each
    block is stamped with its folder's rank. One block in memory at a time. Returns the events.
    A rank without a readable file is skipped (its folder says why).
    """
    blocks = _Blocks(target)
    tables = _Tables()
    skipped = 0
    try:
        for rank, path in parts:
            skipped += _merge_one(blocks, tables, rank, path)
    except BaseException:
        blocks.abort()
        raise
    blocks.close(tables, skipped)
    return blocks.events


def _merge_one(blocks: _Blocks, tables: _Tables, rank: int, path: Path) -> int:
    try:
        with path.open("rb") as f:
            header, strings, labels, cids = tl.read_tables(f)
            label_map = [tables.label(strings[n], strings[c]) for n, c in labels]
            cid_map = [tables.compile_id(strings[s]) for s in cids]
            f.seek(tl.HEADER.size)
            while f.tell() < header.tables_offset:
                _, count, base = tl.BLOCK.unpack(f.read(tl.BLOCK.size))
                words = array("I", f.read(count * tl.EVENT.size))
                if _SWAP:
                    words.byteswap()
                _remap(words, label_map, cid_map)
                if _SWAP:
                    words.byteswap()
                blocks.write_block(rank, base, words.tobytes())
    except (OSError, tl.TimelineError, IndexError, ValueError):
        return 0
    return header.skipped


#: The records are little-endian; `array` reads them in the machine's order.
_SWAP = sys.byteorder == "big"


def _remap(words: array[int], labels: list[int], cids: list[int]) -> None:
    mask, top = tl.INDEX_MASK, 0xFF000000
    words[2::4] = array("I", [labels[w & mask] | (w & top) for w in words[2::4]])
    words[3::4] = array(
        "I", [(w & top) | (cids[w & mask] if w & mask != tl.NO_COMPILE_ID else tl.NO_COMPILE_ID) for w in words[3::4]]
    )
