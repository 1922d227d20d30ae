"""The seam between reading and writing: every writer is fed the same Record stream.

The pipeline (pipeline/single.py) reads the log once. Each Record goes first to the format
writer, whose `feed` returns the record's raw.jsonl line, then to the answers (given that line),
then to the run's other sinks (the report): so a sink may link to the payloads/<md5>.txt the
format writer has written. At the end the format writer and the answers finish first; the
answers' `finish` returns the `Answers` (compiles.json's and log_size.json's data), handed to
each other sink's `finish` with the RunContext (output folder, problems, the reader's tables,
the run's ParseOptions, write/run_options.py). Nothing passes between sinks any other way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from tlscope.format.compiles import Answers
from tlscope.model.problems import Problems
from tlscope.model.record import Record
from tlscope.read.reader import LogReader
from tlscope.write.outdir import OutputDir
from tlscope.write.run_options import ParseOptions


class RunContext:
    """What a sink may use besides the records."""

    def __init__(self, out: OutputDir, reader: LogReader, problems: Problems, options: ParseOptions) -> None:
        self.out = out
        self.reader = reader
        self.problems = problems
        self.options = options


class Sink(Protocol):
    """A writer fed every record after the format writer and the answers (pipeline/single.py)."""

    def feed(self, record: Record) -> None: ...

    def finish(self, ctx: RunContext, answers: Answers) -> None:
        """The pass is over: the format files and the answers' files are written, `answers` is their data."""
        ...


def abort(sinks: Sequence[object]) -> None:
    """A run failed or was interrupted: let each sink that has an `abort()` stop its helpers
    (worker processes, open files) now rather than when the process exits. Optional, so a sink
    that holds nothing needs no method for it."""
    for sink in sinks:
        stop = getattr(sink, "abort", None)
        if callable(stop):
            stop()


#: Builds the extra sinks of a run (e.g. the HTML report) once the output folder is open.
#: A module-level function, so multi-rank workers (processes, Dask) can be sent it.
SinkFactory = Callable[[RunContext], Sequence[Sink]]
