"""Ranks in a log's content: an envelope's own rank, and whether a log holds several ranks.

An envelope's `rank` is its process's rank in a distributed job. A log with lines of several
ranks is muxed (several processes wrote one file); multi-rank runs split it first.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tlscope.format.json_boundary import JsonError, decode
from tlscope.read.names import U32_MAX, as_u32
from tlscope.read.source import LogSource

#: The envelope's rank field as text: a cheap test before decoding, and the muxed-log sniff.
_RANK_FIELD = re.compile(rb'"rank"\s*:\s*(\d+)')
#: How much of a single log is looked at to tell whether it is muxed (several ranks' events).
SNIFF_BYTES = 8 * 1024 * 1024


def valid_rank(value: Any) -> int | None:
    """`value` as a rank: an integer (not a boolean) from 0 to 2**32 - 1, else None.

    A rank is a u32 in PyTorch and tlparse, and multi-rank discovery ignores rank logs named
    beyond it: a larger rank taken here would route a log to multi-rank runs that then find
    none of its ranks (an empty report, and no word why).
    """
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= U32_MAX
    return value if ok else None


def line_rank(line: bytes, start: int) -> int | None:
    """The own rank of the envelope at `line[start:]`, or None. Cheap regex first; JSON to confirm."""
    if _RANK_FIELD.search(line, start) is None:
        return None
    try:
        envelope = decode(line[start:])
    except JsonError:
        return None
    return valid_rank(envelope.get("rank")) if isinstance(envelope, dict) else None


def sniff_several_ranks(path: Path) -> bool:
    """Whether the head of the log at `path` has lines of more than one rank.

    A muxed log interleaves its ranks from the start, so only its head is read: a full scan
    would double the cost of every ordinary single-log run. Unreadable: False (the single-log
    path then reports the file properly).
    """
    try:
        with LogSource(path, hashed=False) as source:
            head = source.stream.read(SNIFF_BYTES)
    except OSError:
        return False
    # Payload lines (tab-led) may quote any rank, so the answer needs the envelope lines alone,
    # split in Python; but when the whole head has at most one rank, so have its envelope
    # lines, and one scan in C says so (every single-rank log: 1-3 ms less on the corpus traces).
    if len({as_u32(r) for r in set(_RANK_FIELD.findall(head))} - {None}) <= 1:
        return False
    lines = (line for line in head.split(b"\n") if line[:1] != b"\t")
    ranks = {m.group(1) for line in lines for m in _RANK_FIELD.finditer(line)}
    return len({as_u32(r) for r in ranks} - {None}) > 1
