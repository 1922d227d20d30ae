"""`tlscope split FILE -o DIR`: one log per rank out of a log that holds several ranks.

A muxed log (several processes writing one file) interleaves ranks. Lines are routed by their
own `rank`; rank-less lines (`str` string-table entries, `torch_version`, ...) by the rank of
the process that wrote them, taken from the glog prefix's process id. String tables are per
process (indices collide across processes), so each `str` line must follow its process; a
process that logged several ranks gets its rank-less lines in each of those ranks' logs.
Payload lines travel with their envelope. Two streaming passes: memory does not grow with the log.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

import msgspec

from tlscope.read.source import LogSource
from tlscope.write.outdir import OutputDir, OutputError

_GLOG_PID = re.compile(rb"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} (\d+) [^:\n]+:\d+\] ")
_RANK = re.compile(rb'"rank"\s*:\s*(\d+)')
_DECODER = msgspec.json.Decoder()
#: Lines of processes that never said their rank go here (kept, not silently dropped).
UNRANKED_NAME = "unranked.log"


def rank_log_name(rank: int) -> str:
    """The name PyTorch gives a rank's log, so multi-rank discovery finds split logs."""
    return f"dedicated_log_torch_trace_rank_{rank}.log"


def _line_rank(line: bytes, end: int) -> int | None:
    """The envelope's own rank, or None. Cheap regex first; JSON only to confirm."""
    if _RANK.search(line, end) is None:
        return None
    try:
        envelope = _DECODER.decode(line[end:])
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    rank = envelope.get("rank") if isinstance(envelope, dict) else None
    return rank if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0 else None


def _envelopes(path: Path) -> Iterator[tuple[bytes, int | None, int | None]]:
    """(physical line, process id or None, own rank or None) for every line of the log."""
    with LogSource(path) as source:
        for line in source.stream:
            if line[:1] == b"\t":
                yield line, None, None
                continue
            match = _GLOG_PID.search(line)
            if match is None:
                yield line, None, None
                continue
            yield line, int(match.group(1)), _line_rank(line, match.end())


def process_ranks(path: Path) -> dict[int, list[int]]:
    """Pass one: the ranks each process id logged, ascending."""
    ranks: dict[int, set[int]] = {}
    for _, pid, rank in _envelopes(path):
        if pid is not None and rank is not None:
            ranks.setdefault(pid, set()).add(rank)
    return {pid: sorted(r) for pid, r in sorted(ranks.items())}


def ranks_in_log(path: Path) -> list[int]:
    return sorted({r for ranks in process_ranks(path).values() for r in ranks})


def split_log(path: Path, folder: Path) -> dict[str, int]:
    """Write one log per rank into `folder` (created if needed); returns file name -> lines written."""
    owners = process_ranks(path)
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


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tlscope split",
        description="Split a log holding several ranks into one log per rank "
        "(dedicated_log_torch_trace_rank_N.log), ready for `tlscope DIR --all-ranks-html`.",
    )
    parser.add_argument("log", type=Path, metavar="FILE", help="a log file or .gz log")
    parser.add_argument("-o", dest="out", type=Path, required=True, metavar="DIR", help="output directory")
    parser.add_argument("--overwrite", action="store_true", help="replace DIR if it exists")
    args = parser.parse_args(list(argv))
    if not args.log.is_file():
        print(f"Error: {args.log} is not a file", file=sys.stderr)
        return 1
    out = OutputDir(args.out, overwrite=args.overwrite)
    try:
        with out:
            written = split_log(args.log, out.root)
    except (OutputError, OSError) as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    for name, lines in written.items():
        print(f"{args.out / name}: {lines} lines")
    return 0
