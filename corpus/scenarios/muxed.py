"""muxed: the events of a real 3-rank run (the ranks_diverge workload) interleaved into one file,
as when a job's ranks all write to one combined stream. Records (an envelope line with its
payload lines) are kept whole and merged in glog-timestamp order; records with the same
timestamp keep rank order. The per-rank logs are removed, leaving only muxed.log."""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Iterator
from pathlib import Path

import _ranks

_STAMP = re.compile(r"^[VIWEC](\d{4} \d\d:\d\d:\d\d\.\d{6}) ")
_RANK_FILE = re.compile(r"dedicated_log_torch_trace_rank_(\d+)_")


def records(path: Path) -> Iterator[tuple[str, str]]:
    """(timestamp, record text) for each record of one rank's log, in file order."""
    stamp, lines = "", []  # type: tuple[str, list[str]]
    with path.open(encoding="utf-8", newline="\n") as f:
        for line in f:
            match = _STAMP.match(line)
            if match and lines:
                yield stamp, "".join(lines)
                lines = []
            if match:
                stamp = match.group(1)
            lines.append(line)
    if lines:
        yield stamp, "".join(lines)


def mux(rank_logs: list[Path], out: Path) -> None:
    # heapq.merge is stable: equal timestamps come out in the order of rank_logs (by rank).
    merged = heapq.merge(*(records(p) for p in rank_logs), key=lambda r: r[0])
    with out.open("w", encoding="utf-8", newline="\n") as f:
        for _, text in merged:
            f.write(text)


def rank_of(path: Path) -> int:
    match = _RANK_FILE.search(path.name)
    assert match, path
    return int(match.group(1))


def main() -> None:
    trace_dir = Path(os.environ["TORCH_TRACE"])
    _ranks.launch(world=3, diverge=True)
    rank_logs = sorted(trace_dir.glob("dedicated_log_torch_trace_rank_*.log"), key=rank_of)
    assert len(rank_logs) == 3, rank_logs
    mux(rank_logs, trace_dir / "muxed.log")
    for p in rank_logs:
        p.unlink()


if __name__ == "__main__":
    main()
