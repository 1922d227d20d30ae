"""A job's combined chromium events: every rank's in one array, pid = rank (reference §6.5).

tlparse writes this array as OUT/chromium_events.json beside each rank's own
rank_N/chromium_events.json: the same events twice, about half the size of the logs (a real
4-rank job's output was 1.8x its logs, 0.52x of it this copy). tlscope writes only the ranks'
files (and every rank's events packed in OUT/timeline.bin); the combined array is made from the
ranks' files when asked for (`chunks`): `tlscope serve` answers OUT/chromium_events.json with
it, so the landing page's link and the explorer's "Open in Perfetto" still get it. One rank's
events are in memory at a time.
See docs/DEVIATIONS.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tlscope.format import layout
from tlscope.format.json_boundary import JsonError, decode
from tlscope.write.landing.jsonout import JSON_AS_PYTHON, array_body

#: Chromium files bigger than this are left out of the combined array: one is loaded at a time.
MAX_CHROMIUM_BYTES = 512 * 1024 * 1024


def _decode(folder: Path) -> Any:
    """The rank's chromium_events.json decoded for array_body; None: no such file, too big or unreadable."""
    path = folder / layout.CHROMIUM_EVENTS
    try:
        if path.stat().st_size > MAX_CHROMIUM_BYTES:
            return None
        return decode(path.read_bytes(), JSON_AS_PYTHON)
    except (OSError, JsonError):
        return None


def _body(events: Any, rank: int) -> bytes:
    """The events with pid = rank, as elements of the combined array (b"" for none)."""
    if not isinstance(events, list):
        return b""
    kept: list[dict[str, Any]] = [event for event in events if isinstance(event, dict)]
    for event in kept:
        event["pid"] = rank
    return array_body(kept)


def job_ranks(root: Path) -> list[int]:
    """The ranks of the job folder `root` (its rank_N folders), in rank order."""
    ranks: list[int] = []
    for child in root.iterdir():
        suffix = child.name.removeprefix("rank_")
        if suffix.isdigit() and child.name == layout.rank_dir(int(suffix)) and child.is_dir():
            ranks.append(int(suffix))
    return sorted(ranks)


def chunks(root: Path, ranks: Iterable[int]) -> Iterator[bytes]:
    """The combined array's text, rank by rank: tlparse's OUT/chromium_events.json (2-space JSON,
    keys sorted, events in rank order then log order, pid = rank); `[]` when no rank has one."""
    first = True
    for rank in ranks:
        text = _body(_decode(root / layout.rank_dir(rank)), rank)
        if text:
            yield (b"[" if first else b",") + text
            first = False
    yield b"[]" if first else b"\n]"
