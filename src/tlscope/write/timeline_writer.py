"""timeline.bin: every chromium event of a log (or of a job's ranks) packed in ~8 bytes.

Layout (version 2) in `tlscope.format.timeline_bin` and docs/FORMAT.md section 17. Streamed: the
writer holds one block of events (4,096, as typed columns), the open spans of each
thread (their `E` has not come yet) and the string tables (distinct names, categories and
compile ids), never the events. A `B` takes its place in log order and gets its duration when
its `E` comes: in the block still in memory, or, when its block was written before (a span
enclosing more than a block's events), by a seek into the file: its duration was written as a
padded varint of a fixed size and its kind byte said `unclosed` until then.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import msgspec

from tlscope.format import timeline_bin as tl

#: Chromium `ts` beyond this are left out: epoch µs as a double is exact only below 2^53.
_MAX_TS = float(2**53)
#: A `B`'s duration until its `E` comes.
_PENDING = -1


class _Tables:
    """The deduplicated strings, (name, category) labels and compile ids the blocks index."""

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
            found = self.labels[key] = len(self.labels)
        return found

    def compile_id(self, display: str) -> int:
        sid = self.string(display)
        found = self.compile_ids.get(sid)
        if found is None:
            found = self.compile_ids[sid] = len(self.compile_ids)
        return found

    def encode(self) -> bytes:
        out = bytearray()
        tl.put_varint(out, len(self.strings))
        for text in self.strings:
            data = text.encode("utf-8", "surrogatepass")
            tl.put_varint(out, len(data))
            out += data
        tl.put_varint(out, len(self.labels))
        for name, cat in self.labels:
            tl.put_varint(out, name)
            tl.put_varint(out, cat)
        tl.put_varint(out, len(self.compile_ids))
        for sid in self.compile_ids:
            tl.put_varint(out, sid)
        return bytes(out)


class _Block:
    """The block in memory: one rank's events as columns, and its own label and compile-id
    tables (the global index of each local one)."""

    def __init__(self, rank: int, base: int) -> None:
        self.rank = rank
        self.base = self.last = base
        # Typed columns: 26 bytes an event, a full block ~106 KB (lists of ints: ~4 times that).
        self.kinds = array("B")
        self.depths = array("B")
        self.starts = array("q")
        self.durations = array("q")
        self.labels = array("I")
        self.cids = array("I")
        #: (name, category) -> local label; chromium's compile id text (`0/1`) -> local index + 1
        #: (0: none): its display form (`[0/1]`) is made once per block, not once per event.
        self.label_of: dict[tuple[str, str], int] = {}
        self.cid_of: dict[str, int] = {}
        self.label_globals: list[int] = []
        self.cid_globals: list[int] = []

    def label(self, name: str, cat: str, tables: _Tables) -> int:
        local = self.label_of.get((name, cat))
        if local is None:
            local = self.label_of[(name, cat)] = len(self.label_globals)
            self.label_globals.append(tables.label(name, cat))
        return local

    def compile_id(self, text: str | None, tables: _Tables) -> int:
        """The local index + 1 of chromium's `args.compile_id` text (`0/1`; 0: none, or `None`)."""
        if text is None or text == "None":
            return 0
        local = self.cid_of.get(text)
        if local is None:
            self.cid_globals.append(tables.compile_id(f"[{text}]"))  # the display form `[0/1]`
            local = self.cid_of[text] = len(self.cid_globals)
        return local

    def encode(self, final: bool) -> tuple[bytes, dict[int, tuple[int, int]]]:
        """The block's bytes after its header, and where each still pending span's kind byte
        and padded duration are in them (none when `final`: they stay unclosed, duration 0)."""
        out = bytearray()
        put = tl.put_varint
        put(out, len(self.label_globals))
        for g in self.label_globals:
            put(out, g)
        put(out, len(self.cid_globals))
        for g in self.cid_globals:
            put(out, g)
        pending: dict[int, tuple[int, int]] = {}
        prev = self.base
        has_duration = tl.HAS_DURATION
        for i, (kind, depth, start, duration, label, cid) in enumerate(
            zip(self.kinds, self.depths, self.starts, self.durations, self.labels, self.cids, strict=True)
        ):
            kind_at = len(out)
            if depth < tl.DEPTH_ESCAPE:
                out.append(kind | depth << tl.DEPTH_SHIFT)
            else:
                out += bytes((kind | tl.DEPTH_ESCAPE << tl.DEPTH_SHIFT, depth))
            delta = start - prev
            put(out, delta << 1 if delta >= 0 else (-delta << 1) - 1)
            prev = start
            if kind in has_duration:
                if duration != _PENDING:
                    put(out, duration)
                elif final:
                    out.append(0)
                else:
                    pending[i] = (kind_at, len(out))
                    out += tl.padded_varint(0)
            put(out, label)
            put(out, cid)
        return bytes(out), pending


class _Open(msgspec.Struct, array_like=True):
    """A `B` waiting for its `E`: its slot in the block in memory (while `block` is that
    block's number), else where its kind byte and padded duration were written."""

    block: int
    slot: int
    start: int
    depth: int
    kind_at: int = -1
    duration_at: int = -1


class _Blocks:
    """The output file: blocks, one in memory, then the tables and the header."""

    def __init__(self, path: Path, block_events: int = tl.BLOCK_EVENTS) -> None:
        self._file: IO[bytes] = path.open("w+b")
        self.block_events = min(block_events, tl.MAX_BLOCK_EVENTS)
        self._file.write(bytes(tl.HEADER.size))
        self.block: _Block | None = None
        #: The number of the block in memory (each flush starts the next).
        self.number = 0
        #: Where the next block will be written (the file's end).
        self._at = tl.HEADER.size
        self.events = 0

    def flush(self, final: bool = False) -> dict[int, tuple[int, int]]:
        """Write the block in memory; the file offsets of its pending spans' kind and duration."""
        block, self.block = self.block, None
        self.number += 1
        if block is None or not block.kinds:
            return {}
        body, pending = block.encode(final)
        at = self._write(block.rank, len(block.kinds), block.base, body)
        return {slot: (at + k, at + d) for slot, (k, d) in pending.items()}

    def write_block(self, rank: int, count: int, base: int, body: bytes) -> None:
        """A whole block at once, its events counted (a job's merge writes a rank's blocks so)."""
        self._write(rank, count, base, body)
        self.events += count

    def _write(self, rank: int, count: int, base: int, body: bytes) -> int:
        """A block's header and bytes at the file's end; returns where the bytes start."""
        self._file.write(tl.BLOCK2.pack(rank, count, len(body), base))
        self._file.write(body)
        self._at += tl.BLOCK2.size + len(body)
        return self._at - len(body)

    def patch(self, kind_at: int, duration_at: int, depth: int, duration: int) -> None:
        """Close a span whose block was written: its kind byte and padded duration."""
        self._file.seek(kind_at)
        self._file.write(bytes((tl.KIND_SPAN | min(depth, tl.DEPTH_ESCAPE) << tl.DEPTH_SHIFT,)))
        self._file.seek(duration_at)
        self._file.write(tl.padded_varint(duration))
        self._file.seek(self._at)

    def close(self, tables: _Tables, skipped: int) -> None:
        self.flush(final=True)
        self._file.write(tables.encode())
        self._file.seek(0)
        self._file.write(tl.HEADER.pack(tl.MAGIC, tl.VERSION, tl.MINOR, 0, self._at, self.events, skipped))
        self._file.close()

    def abort(self) -> None:
        self._file.close()


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
        # Once per chromium event (three quarters of a rank's records): the common case (a dict, a
        # number `ts`, text name, category and `args.compile_id`) read inline, each key once.
        ts = event.get("ts") if type(event) is dict else None
        start = math.floor(ts) if (type(ts) is float or type(ts) is int) and abs(ts) < _MAX_TS else _start(event)
        if start is None:
            self.skipped += 1
            return
        r = tl.NO_RANK if rank is None or not 0 <= rank < tl.NO_RANK else rank
        pid, tid = event.get("pid"), event.get("tid")
        thread = (
            r,
            pid if type(pid) is str else str(pid) if type(pid) is int else _key(pid),
            tid if type(tid) is str else str(tid) if type(tid) is int else _key(tid),
        )
        stack = self._open.get(thread)
        ph = event.get("ph")
        if ph == "E" and stack:
            begin = stack.pop()
            if not stack:
                del self._open[thread]
            self._close(begin, start)
            return
        blocks = self._blocks
        block = blocks.block
        if (  # a new block: the first, another rank's, a full one, or too far from the last start
            block is None
            or r != block.rank
            or len(block.kinds) >= blocks.block_events
            or abs(start - block.last) > tl.MAX_DELTA
        ):
            self._new_block(r, start)
            block = blocks.block
            assert block is not None
        depth = min(len(stack), tl.MAX_DEPTH) if stack else 0
        if ph == "B":
            kind, duration = tl.KIND_UNCLOSED, _PENDING  # until its E comes
            self._open.setdefault(thread, []).append(_Open(blocks.number, len(block.kinds), start, depth))
        elif ph == "E":
            kind, duration = tl.KIND_UNOPENED, 0
        else:
            kind, duration = _kind(ph, event)
        block.kinds.append(kind)
        block.depths.append(depth)
        block.starts.append(start)
        block.durations.append(duration)
        name, cat = event.get("name"), event.get("cat")
        local = block.label_of.get((name, cat)) if type(name) is str and type(cat) is str else None
        block.labels.append(local if local is not None else block.label(_text(name), _text(cat), self._tables))
        args = event.get("args")
        cid = args.get("compile_id") if type(args) is dict else None
        if type(cid) is str:
            local = block.cid_of.get(cid)
            block.cids.append(local if local is not None else block.compile_id(cid, self._tables))
        else:
            block.cids.append(0)  # no compile id text (absent, null, not a string)
        block.last = start
        blocks.events += 1

    def _new_block(self, rank: int, start: int) -> None:
        number = self._blocks.number
        written = self._blocks.flush()
        for stack in self._open.values():
            for span in stack:
                if span.block == number:
                    span.kind_at, span.duration_at = written[span.slot]
        self._blocks.block = _Block(rank, start)

    def _close(self, begin: _Open, end: int) -> None:
        duration = min(max(0, end - begin.start), tl.MAX_DURATION)
        block = self._blocks.block
        if begin.block == self._blocks.number and block is not None:
            block.kinds[begin.slot] = tl.KIND_SPAN
            block.durations[begin.slot] = duration
        else:
            self._blocks.patch(begin.kind_at, begin.duration_at, begin.depth, duration)

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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _key(value: Any) -> str:
    """A pid or tid as a dict key whatever JSON it is (a hostile log may put an object there)."""
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


# -- a job's file: the ranks' files merged -----------------------------------------------------


def merge(parts: Iterable[tuple[int, Path]], target: Path) -> int:
    """OUT/timeline.bin from each rank's (rank, rank_N/timeline.bin), in the order given.

    The ranks' strings are merged into one table and each block's own tables remapped; each
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
    """A rank's blocks copied with their own tables remapped to the job's: the records' bytes
    index those, so they are copied as they are."""
    try:
        with path.open("rb") as f:
            header, strings, labels, cids = tl.read_tables(f)
            if header.version != tl.VERSION:
                return 0
            label_map = [tables.label(strings[n], strings[c]) for n, c in labels]
            cid_map = [tables.compile_id(strings[s]) for s in cids]
            f.seek(tl.HEADER.size)
            while f.tell() < header.tables_offset:
                _, count, base, data = tl.read_block2(f)
                body = tl.VarintReader(data)
                local_labels, local_cids = tl.block_tables(body)
                out = bytearray()
                tl.put_varint(out, len(local_labels))
                for g in local_labels:
                    tl.put_varint(out, label_map[g])
                tl.put_varint(out, len(local_cids))
                for g in local_cids:
                    tl.put_varint(out, cid_map[g])
                out += data[body.at :]
                blocks.write_block(rank, count, base, bytes(out))
    except (OSError, tl.TimelineError, IndexError, ValueError):
        return 0
    return header.skipped
