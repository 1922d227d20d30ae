"""Split a log that holds several ranks into one log per rank (`tlscope split`, multi-rank runs).

A muxed log (several processes writing one file) interleaves ranks. Lines are routed by their
own `rank`; rank-less lines (`str` string-table entries, `torch_version`, ...) by the rank of
the process that wrote them, taken from the glog prefix's process id. String tables are per
process (indices collide across processes), so each `str` line must follow its process; a
process that logged several ranks gets its rank-less lines in each of those ranks' logs.
Payload lines travel with their envelope. Two streaming passes: memory does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

from tlscope.read.glog import process_id
from tlscope.read.log_ranks import line_rank
from tlscope.read.names import rank_log_name
from tlscope.read.source import LogSource

#: Lines of processes that never said their rank go here (kept, not silently dropped).
UNRANKED_NAME = "unranked.log"


def _envelopes(path: Path) -> Iterator[tuple[bytes, int | None, int | None]]:
    """(physical line, process id or None, own rank or None) for every line of the log."""
    with LogSource(path) as source:
        for line in source.stream:
            if line[:1] == b"\t":
                yield line, None, None
                continue
            found = process_id(line)
            if found is None:
                yield line, None, None
                continue
            yield line, found[0], line_rank(line, found[1])


def process_ranks(path: Path) -> dict[int, list[int]]:
    """Pass one: the ranks each process id logged, ascending."""
    ranks: dict[int, set[int]] = {}
    for _, pid, rank in _envelopes(path):
        if pid is not None and rank is not None:
            ranks.setdefault(pid, set()).add(rank)
    return {pid: sorted(r) for pid, r in sorted(ranks.items())}


def ranks_of(owners: dict[int, list[int]]) -> list[int]:
    """Every rank of `process_ranks`'s map, ascending."""
    return sorted({r for ranks in owners.values() for r in ranks})


def split_log(path: Path, folder: Path, owners: dict[int, list[int]] | None = None) -> dict[str, int]:
    """Write one log per rank into `folder` (created if needed); returns file name -> lines written.

    `owners` is `process_ranks(path)` when the caller already has it (pass one, not read again).
    """
    owners = process_ranks(path) if owners is None else owners
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    with ExitStack() as stack:
        files: dict[str, BinaryIO] = {}

        def emit(name: str, line: bytes) -> None:
            if name not in files:
                files[name] = stack.enter_context((folder / name).open("wb"))
                written[name] = 0
            files[name].write(line if line.endswith(b"\n") else line + b"\n")
            written[name] += 1

        targets: list[str] = []
        for line, pid, rank in _envelopes(path):
            if pid is not None:  # a new envelope decides where it and its payload lines go
                if rank is not None:
                    targets = [rank_log_name(rank)]
                elif owners.get(pid):
                    targets = [rank_log_name(r) for r in owners[pid]]
                else:
                    targets = [UNRANKED_NAME]
            for name in targets or [UNRANKED_NAME]:
                emit(name, line)
    return dict(sorted(written.items()))
