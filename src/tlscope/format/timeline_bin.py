"""timeline.bin (docs/FORMAT.md section 17): its layout, shared with its writer, and its reader.

Little-endian throughout. A 40-byte header, then blocks (a 16-byte block header and up to
`BLOCK_EVENTS` 16-byte event records), then the tables (strings, labels, compile ids) the
records index. One block holds events of one rank whose starts are within 2^32 µs of the
block's base, so offsets are u32 while a trace may last any time (a new block starts when an
offset would not fit).
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
VERSION = 1
MINOR = 0
#: magic, version, minor, reserved, tables offset, events, events left out.
HEADER = struct.Struct("<8sHHIQQQ")
#: rank (NO_RANK when the log has none), events in the block, base (epoch µs, signed).
BLOCK = struct.Struct("<IIq")
#: start offset from the block's base (µs), duration, label | flags << 24, compile id | depth << 24.
EVENT = struct.Struct("<IIII")
#: At most this many events per block: the writer holds one block (1 MiB) in memory.
BLOCK_EVENTS = 65536
NO_RANK = 0xFFFFFFFF
NO_COMPILE_ID = 0xFFFFFF
INDEX_MASK = 0xFFFFFF
MAX_DEPTH = 255
U32 = 0xFFFFFFFF

# Flags (the top byte of the label word): the kind in bits 0-2, bit 3 a duration in ms.
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
#: The duration field counts milliseconds (a duration of 2^32 µs, 71.6 minutes, or more).
FLAG_MS = 0x08

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
        while f.tell() < header.tables_offset:
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


def read_tables(f: IO[bytes]) -> tuple[Header, list[str], list[tuple[int, int]], list[int]]:
    """The header and the tables: strings, labels (name, category string ids), compile ids."""
    f.seek(0)
    magic, version, minor, _, tables_offset, events, skipped = HEADER.unpack(_exactly(f, HEADER.size))
    if magic != MAGIC:
        raise TimelineError("not a timeline.bin (bad magic)")
    if version != VERSION:
        raise TimelineError(f"timeline.bin version {version}; this decoder reads version {VERSION}")
    header = Header(version, minor, tables_offset, events, skipped)
    f.seek(tables_offset)
    # The tables end the file: read at once and decoded from memory. Read a field at a time
    # (~270 reads a rank), a 1,000-rank job's merge spent seconds in them after its last rank.
    tables = _TableBytes(f.read())
    strings = [tables.take(tables.u32()).decode("utf-8", "replace") for _ in range(tables.u32())]
    pairs = tables.u32s(2 * tables.u32())
    labels = list(zip(pairs[0::2], pairs[1::2], strict=True))
    cids = list(tables.u32s(tables.u32()))
    return header, strings, labels, cids


class _TableBytes:
    """The tables' bytes, read from the start: TimelineError when they end too soon."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

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


def _exactly(f: IO[bytes], size: int) -> bytes:
    data = f.read(size)
    if len(data) != size:
        raise TimelineError("timeline.bin is truncated")
    return data
