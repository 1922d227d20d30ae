"""The seam between reading and writing: every writer is a Sink fed the same Record stream.

The pipeline reads the log once and feeds each Record to every sink in order; at the end each
sink's `finish` gets the RunContext (output folder, problems, the reader's tables, the run's
ParseOptions, write/run_options.py).
The format writer is the first sink, so a later sink may link to payloads/<md5>.txt it has written.
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
        #: compiles.json's and log_size.json's data, set by the answers sink when it finishes
        #: (before the report's sinks, which show it); None in a run without it.
        self.answers: Answers | None = None


class Sink(Protocol):
    def feed(self, record: Record) -> None: ...

    def finish(self, ctx: RunContext) -> None: ...


def abort(sinks: Sequence[Sink]) -> None:
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
