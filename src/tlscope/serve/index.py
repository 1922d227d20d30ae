"""The events index of one trace: what `GET /api/traces/{id}/events` answers from.

Built once per trace (in a worker thread) by one pass over its raw.jsonl files, in rank order for
a multi-rank folder (rank_0/raw.jsonl, rank_1/raw.jsonl... as multi_rank_summary.json lists
them, the order the JS client's local mode uses). Per event it keeps the file, byte offset and
length of its line, and ids of its event key, compile id (display form) and rank; per event key
and per compile id a posting list. About 20 bytes an event: a million events cost ~20 MB.

A query intersects postings, checks the rank column, and for text (`q`) reads only the candidate
lines' bytes: linear in what it reads, with `q` bounded by the config. The matches of recent
filters are kept (a small LRU), so paging through one filter scans once. A page is the events'
raw.jsonl lines themselves, byte for byte, joined into the JSON answer without re-encoding.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from tlscope.format.folder import OutputFolder
from tlscope.format.json_boundary import JsonError
from tlscope.format.json_boundary import decode as decode_json
from tlscope.format.raw import display_compile_id, event_key

_KEEP_FILTERS = 16
#: A page stops growing past this many bytes (a page of huge lines); `events` may then be shorter
#: than `limit` before the end; the next page starts at offset + len(events).
MAX_PAGE_BYTES = 32 * 1024 * 1024
_SCAN_BLOCK = 4 * 1024 * 1024


@dataclass(frozen=True)
class Part:
    """One raw.jsonl of the trace and the rank its folder stands for (None: single rank)."""

    path: Path
    rank: int | None


class Filter(msgspec.Struct, frozen=True):
    kind: str | None = None
    compile_id: str | None = None
    rank: int | None = None
    q: str | None = None


class EventIndex:
    """Offsets and columns of every event line of a trace (see the module doc)."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self.parts = list(parts)
        self.part_of = array("H")
        self.offset = array("Q")
        self.length = array("I")
        self.rank = array("i")
        self.keys: dict[str, int] = {}
        self.cids: dict[str, int] = {}
        self.by_key: dict[int, array[int]] = {}
        self.by_cid: dict[int, array[int]] = {}
        self._recent: OrderedDict[Filter, array[int]] = OrderedDict()
        self._lock = threading.Lock()
        for number, part in enumerate(self.parts):
            self._add_part(number, part)

    @property
    def total(self) -> int:
        return len(self.offset)

    def _add_part(self, number: int, part: Part) -> None:
        for offset, line in _lines(part.path):
            try:
                event = decode_json(line)
            except JsonError:
                event = None
            if not isinstance(event, dict) or (offset == 0 and "string_table" in event):
                continue
            i = len(self.offset)
            self.part_of.append(number)
            self.offset.append(offset)
            self.length.append(len(line))
            rank = event.get("rank")
            self.rank.append(
                rank if type(rank) is int and 0 <= rank < 2**31 else part.rank if part.rank is not None else -1
            )
            _post(self.by_key, _intern(self.keys, event_key(event)), i)
            _post(self.by_cid, _intern(self.cids, display_compile_id(event)), i)

    def key_counts(self) -> dict[str, int]:
        return {key: len(self.by_key[k]) for key, k in self.keys.items()}

    def matching(self, f: Filter) -> array[int]:
        """Line numbers (global, ascending) of the events that pass `f`."""
        with self._lock:
            hit = self._recent.get(f)
            if hit is not None:
                self._recent.move_to_end(f)
                return hit
        found = self._compute(f)
        with self._lock:
            self._recent[f] = found
            while len(self._recent) > _KEEP_FILTERS:
                self._recent.popitem(last=False)
        return found

    def _compute(self, f: Filter) -> array[int]:
        lists: list[array[int]] = []
        for wanted, ids, postings in ((f.kind, self.keys, self.by_key), (f.compile_id, self.cids, self.by_cid)):
            if wanted is not None:
                k = ids.get(wanted)
                if k is None:
                    return array("I")
                lists.append(postings[k])
        if lists:
            lists.sort(key=len)
            others = [frozenset(x) for x in lists[1:]]
            candidates: Iterator[int] = (i for i in lists[0] if all(i in o for o in others))
        else:
            candidates = iter(range(self.total))
        if f.rank is not None:
            rank, col = f.rank, self.rank
            candidates = (i for i in candidates if col[i] == rank)
        if f.q is not None:
            candidates = self._search(candidates, f.q)
        return array("I", candidates)

    def _search(self, candidates: Iterator[int], q: str) -> Iterator[int]:
        """Candidates whose line contains `q`, case-insensitively (ASCII fast path; others fold Unicode)."""
        ascii_q = q.isascii()
        needle = q.lower().encode() if ascii_q else q.lower()
        fds = [os.open(p.path, os.O_RDONLY) for p in self.parts]
        try:
            for i in candidates:
                line = os.pread(fds[self.part_of[i]], self.length[i], self.offset[i])
                if ascii_q:
                    if needle in line.lower():  # type: ignore[operator]
                        yield i
                elif needle in line.decode("utf-8", "replace").lower():  # type: ignore[operator]
                    yield i
        finally:
            for fd in fds:
                os.close(fd)

    def page(self, f: Filter, offset: int, limit: int) -> bytes:
        """The JSON answer `{"total", "offset", "events"}` for one page, events as their raw lines."""
        found = self.matching(f)
        chosen = found[offset : offset + limit]
        out = [b'{"total":%d,"offset":%d,"events":[' % (len(found), offset)]
        size = 0
        fds: dict[int, int] = {}
        try:
            for n, i in enumerate(chosen):
                part = self.part_of[i]
                if part not in fds:
                    fds[part] = os.open(self.parts[part].path, os.O_RDONLY)
                line = os.pread(fds[part], self.length[i], self.offset[i])
                size += len(line)
                if n and size > MAX_PAGE_BYTES:
                    break
                out.append((b"," if n else b"") + line)
        finally:
            for fd in fds.values():
                os.close(fd)
        out.append(b"]}")
        return b"".join(out)


def _intern(ids: dict[str, int], value: str) -> int:
    k = ids.get(value)
    if k is None:
        k = ids[value] = len(ids)
    return k


def _post(postings: dict[int, array[int]], k: int, i: int) -> None:
    got = postings.get(k)
    if got is None:
        got = postings[k] = array("I")
    got.append(i)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line without its newline) of every non-empty line, read a block at a time."""
    with path.open("rb") as f:
        offset = 0
        tail = b""
        while True:
            block = f.read(_SCAN_BLOCK)
            if not block:
                break
            data = tail + block
            start = 0
            while True:
                nl = data.find(b"\n", start)
                if nl < 0:
                    break
                line = data[start:nl].rstrip(b"\r")
                if line:
                    yield offset + start, line
                start = nl + 1
            offset += start
            tail = data[start:]
        if tail.strip():
            yield offset, tail.rstrip(b"\r")


def parts_of(folder: Path) -> list[Part]:
    """The raw.jsonl files of an output folder: itself, or each rank of a multi-rank folder in order."""
    return [Part(part.raw_path(), rank) for rank, part in OutputFolder(folder).parts()]
