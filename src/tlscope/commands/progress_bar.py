"""The progress bar a command shows on stderr while it reads a big log (`tlscope LOG`, `tlscope
summary LOG`): rich's bar of bytes read, only when stderr is a terminal, gone when the read ends.
Not a command: the commands that parse a log share it."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

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
