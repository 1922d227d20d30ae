"""compiles.json and log_size.json: the answers index files, written from one pass with the others.

pipeline/single.py feeds each record with the raw.jsonl line the format writer just gave it
(compiles.json points at it). `result` is the answers' data alone (what `tlscope summary`
shows); `finish` also writes the two files and returns the data, which the pipeline hands to
the sinks that show it (the report). The folds are analyse/'s; this module only writes their
results.
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
from tlscope.read.reader import LogReader
from tlscope.write.outdir import OutputDir

_ENCODER = msgspec.json.Encoder()


class AnswersSink:
    """Folds every record into the compile and log-size analyses; writes both files at the end."""

    def __init__(self, problems: Problems, log: Path, user: UserCode | None = None) -> None:
        self._log = log
        self.compiles = CompileFold(
            lambda line, message: problems.add(ProblemKind.BAD_PAYLOAD_JSON, line, message, str(log)),
            lambda line, message: problems.note(NoteKind.RECOMPILE_REASONS_TEXT, line, message, str(log)),
            user,
        )
        self.size = LogSizeFold()

    def feed(self, record: Record, raw_line: int | None) -> None:
        """Fold `record`, whose raw.jsonl line is `raw_line` (None: it has none)."""
        self.compiles.feed(record, raw_line)
        self.size.feed(record)

    def result(self, reader: LogReader) -> Answers:
        """The answers of the pass `reader` read (it is over)."""
        found = entries(self.compiles)
        breaks = distinct_graph_breaks(found)
        symbols = self.compiles.symbols.result()
        shapes = input_shapes(found)
        source = reader.source
        size = self.size.result(
            path=str(self._log),
            total_bytes=reader.bytes_total,
            total_lines=reader.lines_read,
            file_bytes=self._log.stat().st_size,
            compressed=bool(source and source.compressed),
            version=(FORMAT_VERSION, FORMAT_MINOR),
        )
        return Answers(compiles=found, graph_breaks=breaks, log_size=size, symbols=symbols, input_shapes=shapes)

    def finish(self, out: OutputDir, reader: LogReader) -> Answers:
        """Write compiles.json and log_size.json into `out`; the answers, for the sinks that show them."""
        answers = self.result(reader)
        with out.path("compiles.json").open("wb") as f:
            write_compiles(f, answers.compiles, answers.graph_breaks, answers.symbols, answers.input_shapes)
        out.path("log_size.json").write_bytes(msgspec.json.format(_ENCODER.encode(answers.log_size)) + b"\n")
        return answers


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
