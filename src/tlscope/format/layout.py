"""The layout of an output folder: its file names, and how a multi-rank folder lists its ranks.

The one module (with the writers that make the files) that spells the format's file names. The
rules are pure functions of names and decoded values, so a local folder (format/folder.py) and a
folder in a remote store (serve/stores.py) apply the same ones.
"""

from __future__ import annotations

from typing import Any

MANIFEST = "manifest.json"
COMPILES = "compiles.json"
LOG_SIZE = "log_size.json"
RAW = "raw.jsonl"
CHROMIUM_EVENTS = "chromium_events.json"
#: Every chromium event packed (FORMAT.md section 17); a job's holds every rank's.
TIMELINE = "timeline.bin"
COMPILE_DIRECTORY = "compile_directory.json"
#: A multi-rank folder's list of its ranks (written by the landing page's writer).
MULTI_RANK_SUMMARY = "multi_rank_summary.json"
#: A job's ranks at a glance: lines, divergence, stragglers (FORMAT.md section 16).
RANKS = "ranks.json"
PAYLOADS = "payloads"
#: A folder holding one of these is an output folder: a single log's, or a job's.
MARKERS = (MANIFEST, MULTI_RANK_SUMMARY)
_RANK_PREFIX = "rank_"


def rank_dir(rank: int) -> str:
    """The subfolder of a multi-rank output folder holding rank `rank`'s output folder."""
    return f"{_RANK_PREFIX}{rank}"


def rank_file(rank: int | None, name: str) -> str:
    """`name` of rank `rank` (None: the folder itself), relative to the output folder."""
    return name if rank is None else f"{rank_dir(rank)}/{name}"


def rank_of_dir(name: str) -> int | None:
    """The rank a `rank_N` subfolder stands for, None for any other name."""
    suffix = name.removeprefix(_RANK_PREFIX)
    return int(suffix) if suffix != name and suffix.isdigit() and suffix.isascii() else None


def listed_ranks(summary: Any) -> list[int]:
    """The ranks a decoded multi_rank_summary.json lists, in its order (anything else: none)."""
    entries = summary if isinstance(summary, list) else []
    ranks = [e.get("rank") for e in entries if isinstance(e, dict)]
    return [r for r in ranks if type(r) is int and r >= 0]


def is_payload_name(name: str) -> bool:
    """`payloads/<file>`: the only names a raw.jsonl line may point a reader to."""
    rest = name.removeprefix(PAYLOADS + "/")
    return rest != name and rest not in ("", ".", "..") and "/" not in rest and "\\" not in rest
