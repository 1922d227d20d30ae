"""timeline.bin (docs/FORMAT.md section 17): its layout, shared with its writer, and its reader.

Little-endian throughout. A 40-byte header, then blocks, then the tables (strings, labels,
compile ids) the records index. Layout version 2 (written since format 1.16): a block is a
20-byte header, the block's own label and compile-id tables (global indexes) and its records,
each a kind/depth byte and LEB128 varints (start as a delta from the previous event's, duration,
label, compile id): ~8 bytes an event. Version 1 (format 1.6 to 1.15, still read): fixed
16-byte records after a 16-byte block header, starts as u32 offsets from the block's base.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import msgspec

from tlscope.format import layout
from tlscope.format.errors import FormatError

MAGIC = b"TLSTIME\x00"
#: The layout this writer writes; decoders read it and VERSION_1.
VERSION = 2
VERSION_1 = 1
MINOR = 0
#: magic, version, minor, reserved, tables offset, events, events left out.
HEADER = struct.Struct("<8sHHIQQQ")
#: The writer's events per block (it holds one in memory): 4,096, not more, because a block's
#: own tables index its labels and compile ids in one byte while it uses fewer than 128 of each
#: (the 1 GB trace's 64,148 events: 9.19 bytes an event in one block, 8.45 in blocks of 4,096).
BLOCK_EVENTS = 4096
#: No block holds more (FORMAT.md: a streaming decoder may rely on it).
MAX_BLOCK_EVENTS = 65536
NO_RANK = 0xFFFFFFFF
MAX_DEPTH = 255
U32 = 0xFFFFFFFF
#: The largest duration stored (2^53 - 1 µs, 285 years): every value is exact in a JS number.
MAX_DURATION = 2**53 - 1
#: A start more than this from the previous event's begins a new block (its zigzag delta, below
#: 2^53, stays exact in a JS number).
MAX_DELTA = 2**52 - 1

# -- version 2 ---------------------------------------------------------------------------------

#: rank (NO_RANK when the log has none), events, bytes of the block after this header, base
#: (epoch µs, signed: the first event's start is base + its delta).
BLOCK2 = struct.Struct("<IIIq")
#: The record's first byte: kind in bits 0-2, depth in bits 3-7; DEPTH_ESCAPE there: a byte follows.
DEPTH_SHIFT = 3
DEPTH_ESCAPE = 31
#: Bytes of a duration the writer may patch later (a span still open when its block was
#: written): a varint padded with redundant continuation bytes, 8 bytes carry 56 bits.
PADDED = 8

# -- version 1 ---------------------------------------------------------------------------------

#: rank (NO_RANK when the log has none), events in the block, base (epoch µs, signed).
BLOCK = struct.Struct("<IIq")
#: start offset from the block's base (µs), duration, label | flags << 24, compile id | depth << 24.
EVENT = struct.Struct("<IIII")
NO_COMPILE_ID = 0xFFFFFF
INDEX_MASK = 0xFFFFFF
#: Version 1's flag: the duration field counts milliseconds.
FLAG_MS = 0x08

# -- kinds, both versions ----------------------------------------------------------------------

KIND_MASK = 0x07
#: A `B` event closed by its `E` (the `E` is folded into it).
KIND_SPAN = 0
#: An `X` event (its own `dur`).
KIND_COMPLETE = 1
#: Any other phase (`i`, `I`, `n`, `C`…): a moment, duration 0.
KIND_INSTANT = 2
#: A `B` never closed: duration 0.
KIND_UNCLOSED = 3
#: An `E` with no open `B` on its thread: duration 0.
KIND_UNOPENED = 4
#: Version 2: the kinds whose record carries a duration (an unclosed span's is 0, or patched
#: to its length when its `E` comes after its block was written: the kind becomes span).
HAS_DURATION = frozenset({KIND_SPAN, KIND_COMPLETE, KIND_UNCLOSED})

KIND_NAMES = {
    KIND_SPAN: "span",
    KIND_COMPLETE: "complete",
    KIND_INSTANT: "instant",
    KIND_UNCLOSED: "unclosed",
    KIND_UNOPENED: "unopened",
}


class TimelineEvent(msgspec.Struct, frozen=True):
    """One event of timeline.bin, as `read` returns it."""

    #: The rank of the log line (None when the log carries none).
    rank: int | None
    name: str
    cat: str
    #: Epoch microseconds (the chromium event's `ts`, rounded down).
    start_us: int
    dur_us: int
    #: Display form (`[0/1]`), or None for chromium's `"None"` and events without one.
    compile_id: str | None
    #: Open spans enclosing it on its thread (0 for a top-level span); capped at 255.
    depth: int
    #: `span`, `complete`, `instant`, `unclosed` or `unopened`.
    kind: str


class TimelineError(FormatError):
    """Not a timeline.bin this decoder can read (wrong magic, newer version, truncated)."""


class Header(msgspec.Struct, frozen=True):
    version: int
    minor: int
    tables_offset: int
    events: int
    #: Chromium events left out (not an object, or no usable `ts`).
    skipped: int


# -- varints (version 2) -----------------------------------------------------------------------


def put_varint(out: bytearray, value: int) -> None:
    """LEB128: 7 bits a byte, low first, the top bit set on every byte but the last."""
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def padded_varint(value: int) -> bytes:
    """`value` (below 2^56) as a varint of exactly PADDED bytes (redundant continuation bytes)."""
    return bytes([(value >> (7 * i)) & 0x7F | (0x80 if i < PADDED - 1 else 0) for i in range(PADDED)])


def zigzag(value: int) -> int:
    """A signed delta as an unsigned varint value: 0, -1, 1, -2... -> 0, 1, 2, 3..."""
    return value * 2 if value >= 0 else -value * 2 - 1


class VarintReader:
    """Bytes read from `at` on (varints, u32s, byte strings): TimelineError when they end too soon."""

    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data = data
        self.at = at

    def varint(self) -> int:
        try:
            value, self.at = _varint(self.data, self.at)
        except IndexError:
            raise TimelineError("timeline.bin is truncated") from None
        return value

    def varints(self, count: int) -> list[int]:
        return [self.varint() for _ in range(count)]

    def take(self, size: int) -> bytes:
        end = self.at + size
        if end > len(self.data):
            raise TimelineError("timeline.bin is truncated")
        chunk, self.at = self.data[self.at : end], end
        return chunk

    def u32(self) -> int:
        value: int = _U32.unpack(self.take(4))[0]
        return value

    def u32s(self, count: int) -> tuple[int, ...]:
        return struct.unpack(f"<{count}I", self.take(4 * count))


_U32 = struct.Struct("<I")


# -- reading -----------------------------------------------------------------------------------


def read(path: str | Path) -> list[TimelineEvent]:
    """Every event of the file (or of the folder's timeline.bin), in file order."""
    return list(iter_events(path))


def iter_events(path: str | Path) -> Iterator[TimelineEvent]:
    """The events one block at a time (memory: one block and the tables)."""
    path = Path(path)
    if path.is_dir():
        path = path / layout.TIMELINE
    with path.open("rb") as f:
        header, strings, labels, cids = read_tables(f)
        names = [(strings[n], strings[c]) for n, c in labels]
        ids = [strings[s] for s in cids]
        f.seek(HEADER.size)
        blocks = _blocks_v2 if header.version == VERSION else _blocks_v1
        yield from blocks(f, header.tables_offset, names, ids)


def read_tables(f: IO[bytes]) -> tuple[Header, list[str], list[tuple[int, int]], list[int]]:
    """The header and the tables: strings, labels (name, category string ids), compile ids."""
    f.seek(0)
    magic, version, minor, _, tables_offset, events, skipped = HEADER.unpack(_exactly(f, HEADER.size))
    if magic != MAGIC:
        raise TimelineError("not a timeline.bin (bad magic)")
    if version not in (VERSION, VERSION_1):
        raise TimelineError(f"timeline.bin version {version}; this decoder reads versions 1 and {VERSION}")
    header = Header(version, minor, tables_offset, events, skipped)
    f.seek(tables_offset)
    # The tables end the file: read at once and decoded from memory. Read a field at a time
    # (~270 reads a rank), a 1,000-rank job's merge spent seconds in them after its last rank.
    tables = VarintReader(f.read())
    number = tables.varint if version == VERSION else tables.u32
    strings = [tables.take(number()).decode("utf-8", "replace") for _ in range(number())]
    pairs = tables.varints(2 * number()) if version == VERSION else tables.u32s(2 * tables.u32())
    labels = list(zip(pairs[0::2], pairs[1::2], strict=True))
    cids = list(tables.varints(number()) if version == VERSION else tables.u32s(tables.u32()))
    return header, strings, labels, cids


def read_block2(f: IO[bytes]) -> tuple[int, int, int, bytes]:
    """A version-2 block at the file's position: (rank, events, base, the bytes after its header)."""
    rank, count, size, base = BLOCK2.unpack(_exactly(f, BLOCK2.size))
    return rank, count, base, _exactly(f, size)


def block_tables(body: VarintReader) -> tuple[list[int], list[int]]:
    """A version-2 block's own tables, read from the start of its body: the global label and
    compile-id indexes its records' local indexes stand for."""
    labels = body.varints(body.varint())
    cids = body.varints(body.varint())
    return labels, cids


def _blocks_v2(f: IO[bytes], end: int, names: list[tuple[str, str]], ids: list[str]) -> Iterator[TimelineEvent]:
    while f.tell() < end:
        rank, count, base, data = read_block2(f)
        body = VarintReader(data)
        label_ids, cid_ids = block_tables(body)
        try:
            local_names = [names[g] for g in label_ids]
            local_ids: list[str | None] = [None, *(ids[g] for g in cid_ids)]
        except IndexError:
            raise TimelineError("timeline.bin's block indexes a missing label or compile id") from None
        yield from _records_v2(body, count, None if rank == NO_RANK else rank, base, local_names, local_ids)


def _records_v2(
    body: VarintReader,
    count: int,
    rank: int | None,
    start: int,
    names: list[tuple[str, str]],
    ids: list[str | None],
) -> Iterator[TimelineEvent]:
    data, at = body.data, body.at
    try:
        for _ in range(count):
            first = data[at]
            kind, depth = first & KIND_MASK, first >> DEPTH_SHIFT
            at += 1
            if depth == DEPTH_ESCAPE:
                depth = data[at]
                at += 1
            if kind not in KIND_NAMES:
                raise TimelineError(f"timeline.bin holds an event of kind {kind}")
            # One-byte varints (most fields) read inline: a call each made decoding 3x slower.
            delta = data[at]
            at += 1
            if delta > 0x7F:
                delta, at = _varint(data, at - 1)
            start += -(delta >> 1) - 1 if delta & 1 else delta >> 1
            duration = 0
            if kind in HAS_DURATION:
                duration = data[at]
                at += 1
                if duration > 0x7F:
                    duration, at = _varint(data, at - 1)
            label = data[at]
            at += 1
            if label > 0x7F:
                label, at = _varint(data, at - 1)
            cid = data[at]
            at += 1
            if cid > 0x7F:
                cid, at = _varint(data, at - 1)
            if label >= len(names) or cid >= len(ids):
                raise TimelineError("timeline.bin's event indexes a missing label or compile id")
            name, cat = names[label]
            yield TimelineEvent(rank, name, cat, start, duration, ids[cid], depth, KIND_NAMES[kind])
    except IndexError:
        raise TimelineError("timeline.bin is truncated") from None
    if at != len(data):
        raise TimelineError("timeline.bin's block is longer than its events")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at `at` and where the next field starts (IndexError past the end)."""
    byte = data[at]
    if byte < 0x80:
        return byte, at + 1
    value, shift = byte & 0x7F, 7
    while byte & 0x80:
        at += 1
        byte = data[at]
        value |= (byte & 0x7F) << shift
        shift += 7
    return value, at + 1


def _blocks_v1(f: IO[bytes], end: int, names: list[tuple[str, str]], ids: list[str]) -> Iterator[TimelineEvent]:
    while f.tell() < end:
        rank, count, base = BLOCK.unpack(_exactly(f, BLOCK.size))
        block_rank = None if rank == NO_RANK else rank
        for offset, duration, label_word, cid_word in EVENT.iter_unpack(_exactly(f, count * EVENT.size)):
            flags = label_word >> 24
            name, cat = names[label_word & INDEX_MASK]
            cid = cid_word & INDEX_MASK
            yield TimelineEvent(
                rank=block_rank,
                name=name,
                cat=cat,
                start_us=base + offset,
                dur_us=duration * 1000 if flags & FLAG_MS else duration,
                compile_id=None if cid == NO_COMPILE_ID else ids[cid],
                depth=cid_word >> 24,
                kind=KIND_NAMES.get(flags & KIND_MASK, "instant"),
            )


def _exactly(f: IO[bytes], size: int) -> bytes:
    data = f.read(size)
    if len(data) != size:
        raise TimelineError("timeline.bin is truncated")
    return data
