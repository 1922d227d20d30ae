"""OUT/chromium_events.json: every rank's chromium events in one array, pid = rank (reference §6.5).

Encoding a rank's events as pretty JSON is most of the landing page's work, so each rank's
worker does it for its own rank during its parse (`PartWriter`, a sink fed the rank's records:
each chromium event encoded as it comes, nothing held, nothing read back), in parallel with the
other ranks, into a part file beside the rank folders (inside OUT's temporary folder, so on the
same storage as the rank folder, also on a Dask cluster). The landing page then only
concatenates the parts (`merge`), in rank order. A rank without a part (its worker failed, or
the caller built the folders another way) is encoded by `merge` itself from its file, with the
same text.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from tlscope.analyse.ranks.rank_summary import RankSummary
from tlscope.format import layout
from tlscope.format.compiles import Answers
from tlscope.format.json_boundary import JsonError, decode
from tlscope.model.record import Record
from tlscope.write.context import RunContext
from tlscope.write.landing.jsonout import JSON_AS_PYTHON, array_body

#: Chromium files bigger than this are not merged (reported instead): one is loaded at a time.
MAX_CHROMIUM_BYTES = 512 * 1024 * 1024


_PART = ".chromium_events.rank_{}.part"


class Unmergeable(Exception):
    """A rank's chromium_events.json is too big or unreadable; the message says which."""


def part_path(root: Path, rank: int) -> Path:
    """Where rank `rank`'s encoded events wait for `merge`: hidden, beside the rank folders."""
    return root / _PART.format(rank)


def _decode(folder: Path) -> Any:
    """The rank's chromium_events.json decoded for array_body; None: no such file; Unmergeable."""
    path = folder / "chromium_events.json"
    try:
        if path.stat().st_size > MAX_CHROMIUM_BYTES:
            raise Unmergeable("chromium_events.json too big to merge")
        return decode(path.read_bytes(), JSON_AS_PYTHON)
    except FileNotFoundError:
        return None
    except (OSError, JsonError) as err:
        raise Unmergeable(f"chromium_events.json unreadable ({err})") from err


def _body(events: Any, rank: int) -> bytes:
    """The events with pid = rank, as elements of the combined array (b"" for none)."""
    if not isinstance(events, list):
        return b""
    kept: list[dict[str, Any]] = [event for event in events if isinstance(event, dict)]
    for event in kept:
        event["pid"] = rank
    return array_body(kept)


class PartWriter:
    """Worker side: rank `rank`'s share of the combined array, written as its records are fed.

    Each chromium event is decoded from its payload as the format writer decodes it (one that is
    not JSON is left out, as there, and reported there), kept if an object, given pid = rank and
    encoded as `_body` encodes the rank's file: `array_body` texts of single events joined by
    "," are the `array_body` of them all. No part when the rank has no object event.
    """

    def __init__(self, root: Path, rank: int) -> None:
        self._path = part_path(root, rank)
        self._rank = rank
        self._file: IO[bytes] | None = None

    def feed(self, record: Record) -> None:
        if record.key == "chromium_event":
            self.add(record.payload or b"")

    def add(self, payload: bytes) -> None:
        """One chromium event's payload."""
        try:
            event = decode(payload, JSON_AS_PYTHON)
        except JsonError:
            return
        if not isinstance(event, dict):
            return
        event["pid"] = self._rank
        if self._file is None:
            self._file = self._path.open("wb")
        else:
            self._file.write(b",")
        self._file.write(array_body([event]))

    def finish(self, ctx: RunContext, answers: Answers) -> None:
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def abort(self) -> None:
        """The rank's parse failed: no part of it goes into the job's file."""
        self.close()
        self._path.unlink(missing_ok=True)


def merge(root: Path, target: Path, ranks: Sequence[RankSummary], problems: list[str]) -> int:
    """Write `target` from the ranks' parts (or their files); returns how many ranks had events.

    The parts are deleted. No events at all: no file, as in tlparse.
    """
    merged = 0
    with target.open("wb") as stream:
        for r in ranks:
            part = part_path(root, r.rank)
            if part.exists():
                stream.write(b"[" if merged == 0 else b",")
                with part.open("rb") as body:
                    shutil.copyfileobj(body, stream)
                part.unlink()
                merged += 1
                continue
            try:
                text = _body(_decode(root / layout.rank_dir(r.rank)), r.rank)
            except Unmergeable as err:
                problems.append(f"rank {r.rank}: {err}")
                continue
            if text:
                stream.write((b"[" if merged == 0 else b",") + text)
                merged += 1
        stream.write(b"\n]" if merged else b"[]")
    for stale in root.glob(_PART.format("*")):
        stale.unlink()  # a part of a rank not in `ranks`: never part of OUT
    if merged == 0:
        target.unlink()
    return merged
