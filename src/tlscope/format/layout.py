"""The layout of an output folder: its file names, and how a multi-rank folder lists its ranks.

The one module (with the writers that make the files) that spells the format's file names. The
rules are written once, without I/O: "is this an output folder", "is it a job's", "which ranks
does it hold" are generators that yield what they need to know about the folder (`Exists`,
`Read`, `Subfolders`) and get the answer sent back. `run` answers them from a synchronous
`Files` (a local folder, format/folder.py), `run_async` from an asynchronous one (a folder in a
remote store, serve/stores.py), so both apply the very same rules.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol, TypeVar

import msgspec

from tlscope.format.json_boundary import JsonError, decode

T = TypeVar("T")

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
#: Each FX graph payload as data, `graphs/<md5>.json` beside `payloads/<md5>.txt` (since 1.11).
GRAPHS = "graphs"
#: Inductor provenance of every compilation that logged it (since 1.13; absent when none did).
PROVENANCE = "provenance.json"
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


# -- the rules, written once for local folders and stores -------------------------------------


# Probes are frozen msgspec Structs, not dataclasses: the dataclasses module and the code each
# dataclass generates at import were ~1.5 ms of every run's start-up, msgspec is there anyway.
class Exists(msgspec.Struct, frozen=True):
    """Which of these files (relative paths) the folder holds: answered with a tuple of bools."""

    rels: tuple[str, ...]


class Read(msgspec.Struct, frozen=True):
    """The bytes of a file of the folder: answered with them, or None when it has none there."""

    rel: str


class Subfolders(msgspec.Struct, frozen=True):
    """The names of the folder's subfolders (a store that cannot be listed answers [])."""


Probe = Exists | Read | Subfolders
#: A layout rule: yields probes, is sent each one's answer, returns its verdict.
Rule = Generator[Probe, Any, T]


class Files(Protocol):
    """A folder's files, read synchronously."""

    def is_file(self, rel: str) -> bool: ...
    def read(self, rel: str) -> bytes | None: ...
    def subfolders(self) -> list[str]: ...


class AsyncFiles(Protocol):
    """A folder's files, read asynchronously (a store's)."""

    async def is_file(self, rel: str) -> bool: ...
    async def read(self, rel: str) -> bytes | None: ...
    async def subfolders(self) -> list[str]: ...


def is_output_folder_rule() -> Rule[bool]:
    """A folder holding a manifest.json (one log's output) or a multi_rank_summary.json (a job's)."""
    found = yield Exists(MARKERS)
    return any(found)


def multi_rank_rule() -> Rule[bool]:
    """A job's folder: an output folder without a manifest.json of its own."""
    (single,) = yield Exists((MANIFEST,))
    return not single


def ranks_rule() -> Rule[list[int]]:
    """The ranks of a job's folder in its summary's order ([] for a single log's folder).

    Those its multi_rank_summary.json lists whose `rank_N` folder holds the rank's events
    (raw.jsonl); without a readable summary, the `rank_N` folders holding them, in rank order.
    """
    if not (yield from multi_rank_rule()):
        return []
    data = yield Read(MULTI_RANK_SUMMARY)
    try:
        listed = listed_ranks(decode(data)) if data is not None else None
    except JsonError:
        listed = None
    if listed is None:
        names = yield Subfolders()
        listed = sorted(r for name in names if (r := rank_of_dir(name)) is not None)
    present = yield Exists(tuple(rank_file(r, RAW) for r in listed))
    return [r for r, there in zip(listed, present, strict=True) if there]


def parts_rule() -> Rule[list[tuple[int | None, str]]]:
    """(rank, folder relative to this one) of each single-log part: `""` for a single log's
    folder, each rank's `rank_N` in order for a job's."""
    if not (yield from multi_rank_rule()):
        return [(None, "")]
    return [(r, rank_dir(r)) for r in (yield from ranks_rule())]


def run(rule: Rule[T], files: Files) -> T:
    """A rule's verdict on a folder read synchronously."""
    answer: Any = None
    while True:
        try:
            probe = rule.send(answer)
        except StopIteration as done:
            verdict: T = done.value
            return verdict
        if isinstance(probe, Exists):
            answer = tuple(files.is_file(rel) for rel in probe.rels)
        elif isinstance(probe, Read):
            answer = files.read(probe.rel)
        else:
            answer = files.subfolders()


async def run_async(rule: Rule[T], files: AsyncFiles) -> T:
    """A rule's verdict on a folder read asynchronously (the files of one `Exists` concurrently)."""
    import asyncio  # here: asyncio and what it imports (ssl, sockets...) are ~10 ms a parse never needs

    answer: Any = None
    while True:
        try:
            probe = rule.send(answer)
        except StopIteration as done:
            verdict: T = done.value
            return verdict
        if isinstance(probe, Exists):
            answer = tuple(await asyncio.gather(*(files.is_file(rel) for rel in probe.rels)))
        elif isinstance(probe, Read):
            answer = await files.read(probe.rel)
        else:
            answer = await files.subfolders()


def graph_name(payload_name: str) -> str | None:
    """`graphs/<md5>.json` for the payload `payloads/<md5>.txt`; None for any other name."""
    if not is_payload_name(payload_name) or not payload_name.endswith(".txt"):
        return None
    return f"{GRAPHS}/{payload_name[len(PAYLOADS) + 1 : -4]}.json"


def is_graph_name(name: str) -> bool:
    """`graphs/<file>.json`: the only graphs names a reader may be pointed to."""
    rest = name.removeprefix(GRAPHS + "/")
    plain = rest != name and "/" not in rest and "\\" not in rest and not rest.startswith(".")
    return plain and rest.endswith(".json")
