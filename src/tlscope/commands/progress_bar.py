"""The progress bars a command shows on stderr while it reads a big log (`tlscope LOG`, `tlscope
summary LOG`: rich's bar of bytes read) or a job's ranks (`tlscope summary JOB`: ranks parsed of
the job's), only when stderr is a terminal, gone when the read ends. Not a command: the commands
that parse a log share it."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tlscope.model.record import Record
    from tlscope.pipeline.single import ReadProgress, Tracker

#: Below this size a progress bar would only flicker.
MIN_BYTES = 8 * 1024 * 1024


def read_progress() -> Tracker:
    """A Tracker drawing the bar for a log of MIN_BYTES or more when stderr is a terminal."""

    def track(records: Iterable[Record], reader: ReadProgress) -> Iterator[Record]:
        size = reader.path.stat().st_size
        if not sys.stderr.isatty() or size < MIN_BYTES:
            yield from records
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        columns = (BarColumn(), DownloadColumn(binary_units=True), TransferSpeedColumn(), TimeRemainingColumn())
        from tlscope.terminal import console

        with Progress(*columns, transient=True, console=console(stderr=True)) as progress:
            task = progress.add_task("read", total=size)
            for i, record in enumerate(records):
                if i % 2048 == 0:
                    progress.update(task, completed=reader.bytes_read)
                yield record

    return track


class RanksBar:
    """A job's ranks parsed, of how many (`on_ranks`, then `on_rank` per finished rank, from the
    pool's threads: rich's Progress is thread-safe); nothing unless stderr is a terminal."""

    def __init__(self) -> None:
        self.progress: Any = None
        self.task: Any = None

    def on_ranks(self, ranks: Sequence[int]) -> None:
        if not sys.stderr.isatty():
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from tlscope.terminal import console

        columns = (TextColumn("ranks parsed"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self.progress = Progress(*columns, transient=True, console=console(stderr=True))
        self.progress.start()
        self.task = self.progress.add_task("ranks", total=len(ranks))

    def on_rank(self, rank: int) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
