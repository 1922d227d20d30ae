"""compiles.json and log_size.json: the answers index files, written from one pass with the others.

pipeline/single.py feeds each record with the raw.jsonl line the format writer just gave it
(compiles.json points at it). `result` is the answers' data alone (what `tlscope summary`
shows); `finish` also writes the two files and returns the data, which the pipeline hands to
the sinks that show it (the report). The folds are analyse/'s; this module only writes their
results.

Memory stays flat with the log's size (issue 21): the compile fold hands the frames the log has
moved past to `SpilledFrames`, a temporary file (analyse/fold/framestore.py says when), and
`finish` writes compiles.json's entries a frame at a time, as they are made (the input-shape
tables, which come last in the file, spooled to a temporary file meanwhile); the answers it
returns read both back from the written file (`WrittenItems`) when a sink iterates them.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TypeVar, overload

import msgspec

from tlscope.analyse.fold.compile_fold import CompileFold
from tlscope.analyse.fold.compileresult import aot_inductor, frame_entries
from tlscope.analyse.fold.framestore import Frame, FrameState
from tlscope.analyse.fold.graphbreaks import BreakGroups
from tlscope.analyse.fold.shapes import input_shapes
from tlscope.analyse.fold.usercode import UserCode
from tlscope.analyse.fxgraph.model import TensorMeta
from tlscope.analyse.headline import FirstAnswers
from tlscope.analyse.logsize_fold import LogSizeFold
from tlscope.format.compiles import (
    Answers,
    AotInductorCompile,
    CompileEntry,
    CompilesFile,
    DistinctGraphBreak,
    Dynamic,
    ExportCall,
    FirstAnswer,
    FrameShapes,
    Settings,
    Symbol,
    Vllm,
)
from tlscope.format.manifest import FORMAT_MINOR, FORMAT_VERSION
from tlscope.format.status import STATUS_ORDER, STATUSES
from tlscope.model.problems import NoteKind, ProblemKind, Problems
from tlscope.model.record import Record
from tlscope.read.reader import LogReader
from tlscope.write.outdir import OutputDir

#: pickle and tempfile are imported where a frame spills or a table spools (`_temporary_file`):
#: a small log's answers do neither, and the two are ~5 ms of imports.
_ENCODER = msgspec.json.Encoder()
T = TypeVar("T")
#: Bytes of input-shape tables `AnswersSink.finish` keeps in memory before spilling them to a file.
_SPOOL_IN_MEMORY = 1 << 20


@functools.cache
def _entries() -> msgspec.json.Decoder[CompileEntry]:
    """compiles.json's entries' typed decoder, made on first use: building it walks CompileEntry's
    nested Structs (~2.4 ms; a run that reads no entry back need not)."""
    return msgspec.json.Decoder(CompileEntry)


@functools.cache
def _shape_tables() -> msgspec.json.Decoder[FrameShapes]:
    """compiles.json's input-shape tables' typed decoder, made on first use (most logs have none)."""
    return msgspec.json.Decoder(FrameShapes)


def _temporary_file(in_memory: int = 0) -> IO[bytes]:
    """An anonymous temporary file (in memory up to `in_memory` bytes); tempfile (with random,
    shutil...) imported only when one is needed: a small log's answers never spill a frame nor
    spool an input-shape table."""
    import tempfile

    if in_memory:
        return tempfile.SpooledTemporaryFile(in_memory)
    return tempfile.TemporaryFile()


class SpilledFrames:
    """The compile fold's FrameStore in an anonymous temporary file: each frame the log moved past
    pickled there (this process's own data, read back by it alone), its span kept in memory."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._at: dict[Frame, tuple[int, int]] = {}
        self._end = 0

    def put(self, frame: Frame, state: FrameState) -> None:
        import pickle  # here: see the note above _ENCODER

        if self._file is None:
            self._file = _temporary_file()  # closed by close(), after the end
        data = pickle.dumps(state, pickle.HIGHEST_PROTOCOL)
        self._file.seek(self._end)
        self._file.write(data)
        # A frame stored again leaves its older copy behind, unread: the file only grows on disk.
        self._at[frame] = (self._end, len(data))
        self._end += len(data)

    def take(self, frame: Frame) -> FrameState | None:
        found = self.peek(frame)
        self._at.pop(frame, None)
        return found

    def peek(self, frame: Frame) -> FrameState | None:
        at = self._at.get(frame)
        if at is None or self._file is None:
            return None
        import pickle  # here: see the note above _ENCODER

        self._file.seek(at[0])
        state: FrameState = pickle.loads(self._file.read(at[1]))
        return state

    def frames(self) -> Iterator[Frame]:
        return iter(list(self._at))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._at.clear()


class _Gathered:
    """What compiles.json holds after its entries, gathered from each frame's entries in turn;
    with a `spool`, the input-shape tables are encoded into it as they come (a table per frame that
    recompiled: a big log's would not all fit in memory), their lengths kept. The spool, a
    temporary file, is made for the first table (most small logs have none) and closed by `close`."""

    def __init__(self, *, spooling: bool = False) -> None:
        self.breaks = BreakGroups()
        self.shapes: list[FrameShapes] = []
        #: Compile ids per status, `outside` left out, and the recompiles (Answers `statuses`, `recompiles`).
        self.statuses: dict[str, int] = {}
        self.recompiles = 0
        #: The first failed entry and the first recompile, for the run's headline (one each).
        self.first = FirstAnswers()
        self.spooling = spooling
        self.spool: IO[bytes] | None = None
        self.spooled: list[int] = []
        self._metas: dict[str, TensorMeta] = {}
        self._results: tuple[list[DistinctGraphBreak], list[FirstAnswer]] | None = None

    def results(self) -> tuple[list[DistinctGraphBreak], list[FirstAnswer]]:
        """The distinct breaks and the run's first answers, made once every entry was added:
        compiles.json's tail writes them, then the answers hand them to the other sinks."""
        if self._results is None:
            breaks = self.breaks.result()
            self._results = (breaks, self.first.answers(breaks))
        return self._results

    def add(self, found: list[CompileEntry]) -> None:
        for entry in found:
            self.breaks.add(entry)
            if entry.status != "outside":
                self.statuses[entry.status] = self.statuses.get(entry.status, 0) + 1
            self.recompiles += entry.recompile is not None
            self.first.add(entry)
        tables = input_shapes(found, self._metas)
        if not self.spooling:
            self.shapes.extend(tables)
            return
        for table in tables:
            if self.spool is None:
                # In memory up to 1 MiB, then a file (a big log's): a rank of a job that
                # recompiled creates no file for its tables (~0.3-0.5 ms each on this machine).
                self.spool = _temporary_file(_SPOOL_IN_MEMORY)
            data = _ENCODER.encode(table)
            self.spool.write(data)
            self.spooled.append(len(data))

    def unspool(self) -> Iterator[bytes]:
        """The spooled tables' bytes, in order."""
        if self.spool is None:
            return
        self.spool.seek(0)
        for length in self.spooled:
            yield self.spool.read(length)

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()


class AnswersSink:
    """Folds every record into the compile and log-size analyses; writes both files at the end."""

    def __init__(self, problems: Problems, log: Path, user: UserCode | None = None) -> None:
        self._log = log
        self._store = SpilledFrames()
        self.compiles = CompileFold(
            lambda line, message: problems.add(ProblemKind.BAD_PAYLOAD_JSON, line, message, str(log)),
            lambda line, message: problems.note(NoteKind.RECOMPILE_REASONS_TEXT, line, message, str(log)),
            user,
            self._store,
        )
        self.size = LogSizeFold()

    @functools.cached_property
    def _vllm(self) -> list[Vllm]:
        """compiles.json's `vllm`, made once the pass is over (read by the file and the answers)."""
        return self.compiles.vllm.result()

    @functools.cached_property
    def _aoti(self) -> list[AotInductorCompile]:
        """compiles.json's `aot_inductor`, made once the pass is over."""
        return aot_inductor(self.compiles)

    def feed(self, record: Record, raw_line: int | None) -> None:
        """Fold `record`, whose raw.jsonl line is `raw_line` (None: it has none)."""
        self.compiles.feed(record, raw_line)
        self.size.feed(record)

    def abort(self) -> None:
        self._store.close()

    def result(self, reader: LogReader) -> Answers:
        """The answers of the pass `reader` read (it is over), all in memory."""
        gathered = _Gathered()
        found: list[CompileEntry] = []
        for frame in frame_entries(self.compiles):
            gathered.add(frame)
            found.extend(frame)
        self._store.close()
        return self._answers(found, gathered, reader)

    def _run_answers(self) -> tuple[Dynamic | None, Settings | None]:
        """The run's dynamic and settings answers, once every frame's entries were made (the
        dynamic fold reads them: analyse/fold/dynamic.py `attach_why`)."""
        return self.compiles.dynamic.result(), self.compiles.settings.result()

    def _answers(
        self,
        found: Sequence[CompileEntry],
        gathered: _Gathered,
        reader: LogReader,
        shapes: Sequence[FrameShapes] | None = None,
        run: tuple[Dynamic | None, Settings | None] | None = None,
    ) -> Answers:
        dynamic, settings = run or self._run_answers()
        source = reader.source
        size = self.size.result(
            path=str(self._log),
            total_bytes=reader.bytes_total,
            total_lines=reader.lines_read,
            file_bytes=self._log.stat().st_size,
            compressed=bool(source and source.compressed),
            version=(FORMAT_VERSION, FORMAT_MINOR),
        )
        breaks, first = gathered.results()
        return Answers(
            compiles=found,
            graph_breaks=breaks,
            log_size=size,
            symbols=self.compiles.symbols.result(),
            input_shapes=gathered.shapes if shapes is None else shapes,
            exports=self.compiles.exports.result(),
            exports_note=self.compiles.exports.note(),
            aot_inductor=self._aoti,
            vllm=self._vllm,
            dynamic=dynamic,
            settings=settings,
            statuses={k: gathered.statuses[k] for k in STATUS_ORDER if k in gathered.statuses},
            recompiles=gathered.recompiles,
            first_answers=first,
        )

    def finish(self, out: OutputDir, reader: LogReader) -> Answers:
        """Write compiles.json (its entries a frame at a time, as they are made) and log_size.json
        into `out`; the answers, for the sinks that show them, read the entries back from the file."""
        path = out.path("compiles.json")
        spans: list[tuple[int, int]] = []
        gathered = _Gathered(spooling=True)
        with path.open("wb") as f, contextlib.closing(gathered):
            write_head(f)
            for frame in frame_entries(self.compiles):
                gathered.add(frame)
                for entry in frame:
                    spans.append(write_entry(f, entry, first=not spans))
            self._store.close()
            (breaks, first), symbols = gathered.results(), self.compiles.symbols.result()
            exports = self.compiles.exports
            run = self._run_answers()
            shape_spans = write_tail(
                f,
                breaks,
                symbols,
                (),
                gathered.unspool(),
                exports.result(),
                exports.note(),
                self._aoti,
                self._vllm,
                *run,
                first,
            )
        shapes = WrittenItems(path, shape_spans, _shape_tables)
        answers = self._answers(WrittenItems(path, spans, _entries), gathered, reader, shapes, run)
        out.path("log_size.json").write_bytes(msgspec.json.format(_ENCODER.encode(answers.log_size)) + b"\n")
        return answers


class WrittenItems(Sequence[T]):
    """Items of compiles.json (its entries, its input-shape tables), decoded from the file each
    time they are read (one at a time): the answers' sinks read them once or twice, and a big
    log's would not all fit in memory. Valid until the output folder is committed."""

    def __init__(
        self, path: Path, spans: list[tuple[int, int]], decoder: Callable[[], msgspec.json.Decoder[T]]
    ) -> None:
        self._path = path
        #: Each item's (offset, length) in the file.
        self._spans = spans
        #: The items' decoder, asked for when one is read.
        self._decoder = decoder

    def __len__(self) -> int:
        return len(self._spans)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return WrittenItems(self._path, self._spans[index], self._decoder)
        offset, length = self._spans[index]
        with self._path.open("rb") as f:
            f.seek(offset)
            return self._decoder().decode(f.read(length))

    def __iter__(self) -> Iterator[T]:
        if not self._spans:
            return
        decoder = self._decoder()
        with self._path.open("rb") as f:
            for offset, length in self._spans:
                f.seek(offset)
                yield decoder.decode(f.read(length))


def write_compiles(
    f: IO[bytes],
    compiles: Iterable[CompileEntry],
    breaks: list[DistinctGraphBreak],
    symbols: Sequence[Symbol] = (),
    shapes: Sequence[FrameShapes] = (),
    exports: Sequence[ExportCall] = (),
    exports_note: str | None = None,
    aoti: Sequence[AotInductorCompile] = (),
    vllm: Sequence[Vllm] = (),
    dynamic: Dynamic | None = None,
    settings: Settings | None = None,
    first_answers: Sequence[FirstAnswer] = (),
) -> None:
    """compiles.json with one compile entry a line (a viewer can show the head of a big file);
    then the distinct breaks, the symbols, the input shapes and the export calls, one item a line too."""
    write_head(f)
    for i, entry in enumerate(compiles):
        write_entry(f, entry, first=i == 0)
    write_tail(f, breaks, symbols, shapes, (), exports, exports_note, aoti, vllm, dynamic, settings, first_answers)


def write_head(f: IO[bytes]) -> None:
    """compiles.json up to its first entry."""
    head = CompilesFile(
        format_version=FORMAT_VERSION, format_minor=FORMAT_MINOR, statuses=STATUSES, compiles=[], graph_breaks=[]
    )
    f.write(
        _ENCODER.encode(head)[:-1].replace(
            b',"compiles":[],"graph_breaks":[],"symbols":[],"input_shapes":[],"exports":[],"exports_note":null,'
            b'"aot_inductor":[],"vllm":[],"dynamic":null,"settings":null,"first_answers":[]',
            b"",
        )
    )
    f.write(b',"compiles":[')


def write_entry(f: IO[bytes], entry: CompileEntry, *, first: bool) -> tuple[int, int]:
    """One compile entry, on its own line; its (offset, length) in the file."""
    f.write(b"\n" if first else b",\n")
    data = _ENCODER.encode(entry)
    offset = f.tell()
    f.write(data)
    return offset, len(data)


def write_tail(
    f: IO[bytes],
    breaks: Sequence[DistinctGraphBreak],
    symbols: Sequence[Symbol],
    shapes: Sequence[FrameShapes],
    encoded_shapes: Iterable[bytes] = (),
    exports: Sequence[ExportCall] = (),
    exports_note: str | None = None,
    aoti: Sequence[AotInductorCompile] = (),
    vllm: Sequence[Vllm] = (),
    dynamic: Dynamic | None = None,
    settings: Settings | None = None,
    first_answers: Sequence[FirstAnswer] = (),
) -> list[tuple[int, int]]:
    """compiles.json after its last entry: the distinct breaks, the symbols, the input shapes
    (`shapes`, then those already encoded), the export calls and their note, the AOT Inductor and
    vLLM compiles, what made inputs dynamic, the compiles under other settings and the run's first
    answers; each input-shape table's (offset, length)."""
    _write_items(f, b'\n],"graph_breaks":[', breaks)
    _write_items(f, b'\n],"symbols":[', symbols)
    f.write(b'\n],"input_shapes":[')
    spans: list[tuple[int, int]] = []
    for data in itertools.chain(map(_ENCODER.encode, shapes), encoded_shapes):
        f.write(b"\n" if not spans else b",\n")
        spans.append((f.tell(), len(data)))
        f.write(data)
    _write_items(f, b'\n],"exports":[', exports)
    _write_items(f, b'\n],"exports_note":' + _ENCODER.encode(exports_note) + b',"aot_inductor":[', aoti)
    _write_items(f, b'\n],"vllm":[', vllm)
    f.write(b'\n],"dynamic":' + _ENCODER.encode(dynamic) + b',"settings":' + _ENCODER.encode(settings))
    _write_items(f, b',"first_answers":[', first_answers)
    f.write(b"\n]}\n")
    return spans


def _write_items(f: IO[bytes], head: bytes, items: Iterable[msgspec.Struct]) -> None:
    """`head` (the end of the list before and this list's key), then one item a line."""
    f.write(head)
    for i, item in enumerate(items):
        f.write(b"\n" if i == 0 else b",\n")
        f.write(_ENCODER.encode(item))
