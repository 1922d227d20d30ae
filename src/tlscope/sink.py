"""The seam between reading and writing: every writer is a Sink fed the same Record stream.

The pipeline reads the log once and feeds each Record to every sink in order; at the end each
sink's `finish` gets the RunContext (output folder, problems, the reader's tables). The format
writer is the first sink, so a later sink may link to payloads/<md5>.txt it has written.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from tlscope.model.problems import Problems
from tlscope.model.record import Record
from tlscope.read.reader import DEFAULT_MAX_LINE, LogReader
from tlscope.write.outdir import OutputDir


class ParseOptions(msgspec.Struct, kw_only=True, frozen=True):
    """Options of one run; later features add their flags here."""

    strict: bool = False
    strict_compile_id: bool = False
    max_line: int = DEFAULT_MAX_LINE
    #: -p: inductor_output_code as plain .txt instead of highlighted .html.
    plain_text: bool = False
    #: -e: draft-export report instead of the compile report.
    export: bool = False
    #: -i: provenance tracking pages.
    inductor_provenance: bool = False
    #: --custom-header-html: the user's markup at the top of index.html (not escaped, by design).
    custom_header_html: str = ""
    #: Set by multi-rank runs: each rank folder gets collectives_parity.json, so link it.
    multi_rank: bool = False
    #: Processes that highlight inductor output code (None: up to 4; 1: in-process).
    highlight_workers: int | None = None


class RunContext:
    """What a sink may use besides the records."""

    def __init__(self, out: OutputDir, reader: LogReader, problems: Problems, options: ParseOptions) -> None:
        self.out = out
        self.reader = reader
        self.problems = problems
        self.options = options


class Sink(Protocol):
    def feed(self, record: Record) -> None: ...

    def finish(self, ctx: RunContext) -> None: ...
