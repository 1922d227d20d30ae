"""compiles.json and log_size.json: the answers index files, written from one pass with the others.

The sink runs right after the format writer (pipeline/single.py), so each record's raw.jsonl
line is known when it is folded. The folds are analyse/'s; this module only writes their results.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

import msgspec

from tlscope.analyse.fold.compile_fold import CompileFold
from tlscope.analyse.fold.compileresult import entries
from tlscope.analyse.fold.graphbreaks import distinct_graph_breaks
from tlscope.analyse.fold.shapes import input_shapes
from tlscope.analyse.fold.usercode import UserCode
from tlscope.analyse.logsize_fold import LogSizeFold
from tlscope.format.compiles import Answers, CompileEntry, CompilesFile, DistinctGraphBreak, FrameShapes, Symbol
from tlscope.format.manifest import FORMAT_MINOR, FORMAT_VERSION
from tlscope.format.status import STATUSES
from tlscope.model.problems import NoteKind, ProblemKind, Problems
from tlscope.model.record import Record
from tlscope.write.context import RunContext
from tlscope.write.format import FormatWriter

_ENCODER = msgspec.json.Encoder()


class AnswersSink:
    """Folds every record into the compile and log-size analyses; writes both files at the end."""

    def __init__(self, writer: FormatWriter, problems: Problems, log: Path, user: UserCode | None = None) -> None:
        self._writer = writer
        self._log = log
        self.compiles = CompileFold(
            lambda line, message: problems.add(ProblemKind.BAD_PAYLOAD_JSON, line, message, str(log)),
            lambda line, message: problems.note(NoteKind.RECOMPILE_REASONS_TEXT, line, message, str(log)),
            user,
        )
        self.size = LogSizeFold()

    def feed(self, record: Record) -> None:
        self.compiles.feed(record, self._writer.last_raw_line)
        self.size.feed(record)

    def finish(self, ctx: RunContext) -> None:
        found = entries(self.compiles)
        breaks = distinct_graph_breaks(found)
        symbols = self.compiles.symbols.result()
        shapes = input_shapes(found)
        with ctx.out.path("compiles.json").open("wb") as f:
            write_compiles(f, found, breaks, symbols, shapes)
        source = ctx.reader.source
        size = self.size.result(
            path=str(self._log),
            total_bytes=ctx.reader.bytes_total,
            total_lines=ctx.reader.lines_read,
            file_bytes=self._log.stat().st_size,
            compressed=bool(source and source.compressed),
            version=(FORMAT_VERSION, FORMAT_MINOR),
        )
        ctx.out.path("log_size.json").write_bytes(msgspec.json.format(_ENCODER.encode(size)) + b"\n")
        ctx.answers = Answers(compiles=found, graph_breaks=breaks, log_size=size, symbols=symbols, input_shapes=shapes)


def write_compiles(
    f: IO[bytes],
    compiles: Iterable[CompileEntry],
    breaks: list[DistinctGraphBreak],
    symbols: Sequence[Symbol] = (),
    shapes: Sequence[FrameShapes] = (),
) -> None:
    """compiles.json with one compile entry a line (a viewer can show the head of a big file);
    then the distinct breaks, the symbols and the input shapes, one item a line too."""
    head = CompilesFile(
        format_version=FORMAT_VERSION, format_minor=FORMAT_MINOR, statuses=STATUSES, compiles=[], graph_breaks=[]
    )
    f.write(_ENCODER.encode(head)[:-1].replace(b',"compiles":[],"graph_breaks":[],"symbols":[],"input_shapes":[]', b""))
    f.write(b',"compiles":[')
    for i, entry in enumerate(compiles):
        f.write(b"\n" if i == 0 else b",\n")
        f.write(_ENCODER.encode(entry))
    f.write(b'\n],"graph_breaks":[')
    for i, group in enumerate(breaks):
        f.write(b"\n" if i == 0 else b",\n")
        f.write(_ENCODER.encode(group))
    for name, items in ((b"symbols", symbols), (b"input_shapes", shapes)):
        f.write(b'\n],"' + name + b'":[')
        for i, item in enumerate(items):
            f.write(b"\n" if i == 0 else b",\n")
            f.write(_ENCODER.encode(item))
    f.write(b"\n]}\n")
