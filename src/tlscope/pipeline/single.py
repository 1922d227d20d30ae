"""One log, end to end: read it, feed every sink, write the manifest.

This is the only place that wires read -> write together for one log (multi-rank runs call it
once per rank).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import msgspec

from tlscope import __version__
from tlscope.analyse.fold.usercode import UserCode
from tlscope.format import layout
from tlscope.format.compiles import Answers
from tlscope.format.errors import OutputError, StrictFailure
from tlscope.format.manifest import FORMAT_MINOR, FORMAT_VERSION, InputFile, Manifest
from tlscope.model.problems import ProblemKind, Problems
from tlscope.model.record import Record
from tlscope.read.reader import LogReader
from tlscope.write.answers_sink import AnswersSink
from tlscope.write.context import RunContext, SinkFactory, abort
from tlscope.write.format import FormatFacts, FormatWriter, problem_summary
from tlscope.write.outdir import OutputDir
from tlscope.write.run_options import ParseOptions, small_log


#: Wraps the record stream, e.g. with a progress bar; gets the reader for its byte count.
class ReadProgress(Protocol):
    """What a tracker sees of the log being read (the LogReader): its path and bytes read so far."""

    @property
    def path(self) -> Path: ...

    @property
    def bytes_read(self) -> int: ...


Tracker = Callable[[Iterable[Record], ReadProgress], Iterable[Record]]


def untracked(records: Iterable[Record], reader: ReadProgress) -> Iterable[Record]:
    return records


def run(
    log: Path,
    out: OutputDir,
    options: ParseOptions,
    *,
    command: Sequence[str] = (),
    track: Tracker = untracked,
    sinks: SinkFactory | None = None,
    told: Callable[[Answers], None] | None = None,
) -> Manifest:
    """Parse `log` into `out` (already checked). Raises StrictFailure; OUT then stays as it was.
    `told` gets the answers once written (what the command says of them: statuses, exports)."""
    refuse_out_holding(log, out.target)
    problems = Problems()
    with out:
        reader = LogReader(log, problems=problems, max_line=options.max_line)
        ctx = RunContext(out, reader, problems, options)
        job = Path(options.job_folder) if options.job_folder else None
        small = small_log(log)
        writer = FormatWriter(out, problems, job, inline_graphs=small, held_raw=small)
        answers = AnswersSink(problems, log, UserCode(options.user_code))
        others = list(sinks(ctx)) if sinks else []
        try:
            for record in track(reader, reader):
                # The answers point at the raw.jsonl line the writer gives the record; the other
                # sinks come after both (the report links the payload files the writer wrote).
                answers.feed(record, writer.feed(record))
                for sink in others:
                    sink.feed(record)
            writer.finish(reader)
            found = answers.finish(out, reader)
            for sink in others:
                sink.finish(ctx, found)  # the report shows the answers
            if told is not None:
                told(found)
        except BaseException:
            abort([writer, answers, *others])
            raise
        manifest = _manifest(reader, writer, problems, command, log)
        _check_events(options, reader)  # first: "not a trace at all" says more than its problems
        _check_strict(options, problems)
        manifest.files = sorted([*_listing(out.root), layout.MANIFEST])
        out.path(layout.MANIFEST).write_bytes(msgspec.json.format(msgspec.json.encode(manifest)) + b"\n")
    return manifest


def answer(
    log: Path, options: ParseOptions, *, command: Sequence[str] = (), track: Tracker = untracked
) -> tuple[Answers, Manifest]:
    """`run` without writing anything: the answers (compiles.json's and log_size.json's data) and
    the manifest `run` would write but for the files (`files` empty, no `graphs`: no graph is
    read, so no `bad_graph` problem either), from one pass in memory.

    What `tlscope summary` shows needs no format file: the format's facts (problems, figures,
    each record's raw.jsonl line, which the answers point at) are folded as the writer folds
    them (FormatFacts), and no payload, raw.jsonl, graph, chromium or timeline file is written.
    Raises StrictFailure as `run` does.
    """
    problems = Problems()
    reader = LogReader(log, problems=problems, max_line=options.max_line)
    facts = FormatFacts(problems)
    answers = AnswersSink(problems, log, UserCode(options.user_code))
    for record in track(reader, reader):
        answers.feed(record, facts.feed(record))
    facts.finish(reader)
    found = answers.result(reader)
    manifest = _manifest(reader, facts, problems, command, log)
    _check_events(options, reader)
    _check_strict(options, problems)
    return found, manifest


def refuse_out_holding(path: Path, out: Path, what: str = "the log") -> None:
    """`tlscope logs/ -o logs --overwrite` would replace the folder holding the input: refuse."""
    if path.resolve().is_relative_to(out.resolve()):
        raise OutputError(f"{out} holds the input {path}: replacing it would delete {what}; choose another -o")


def no_events_text(path: str, lines: int) -> str:
    """What to say when nothing in a log was a trace event (an empty file, a binary, the wrong file)."""
    what = "it is empty" if not lines else f"none of its {lines} line{'s' if lines > 1 else ''} is one"
    return f"nothing in {path} was a trace event ({what}); is it a TORCH_TRACE log?"


def _check_events(options: ParseOptions, reader: LogReader) -> None:
    """--strict: a log with no event at all fails (an empty report would look like success).

    Without --strict the run goes on (manifest.json shows no events) and the command warns.
    """
    if options.strict and not reader.records_read:
        raise StrictFailure(f"--strict: {no_events_text(str(reader.path), reader.lines_read)}", None)


def _check_strict(options: ParseOptions, problems: Problems) -> None:
    if options.strict_compile_id and problems.counts[ProblemKind.BAD_COMPILE_ID]:
        first = next(p for p in problems.first if p.kind is ProblemKind.BAD_COMPILE_ID)
        raise StrictFailure(
            f"Some log entries did not have a valid compile id (first at line {first.line}: {first.message})",
            first,
        )
    if options.strict and problems.total:
        earliest = problems.earliest()
        where = ""
        if earliest is not None:
            where = f"; first at line {earliest.line} ({earliest.kind.value}): {earliest.message}"
        raise StrictFailure(f"--strict: {problems.total} problem(s) in the log{where}", earliest)


def _manifest(
    reader: LogReader, writer: FormatFacts, problems: Problems, command: Sequence[str], log: Path
) -> Manifest:
    source_size = log.stat().st_size
    return Manifest(
        format="tlscope",
        format_version=FORMAT_VERSION,
        format_minor=FORMAT_MINOR,
        tlscope_version=__version__,
        command=list(command),
        inputs=[
            InputFile(
                path=str(log),
                size=source_size,
                sha256=reader.sha256 or "",
                compressed=bool(reader.source and reader.source.compressed),
                lines=reader.lines_read,
                rank=reader.rank,
                name_rank=reader.name_rank,
            )
        ],
        torch_version=writer.torch_version,
        ranks=sorted(writer.ranks),
        processes=sorted(writer.processes),
        clock=writer.clock.info(),
        events=dict(sorted(writer.events.items())),
        unknown_event_keys=sorted(reader.unknown_keys),
        artifacts=dict(sorted(writer.artifacts.items())),
        compile_ids=writer.compile_id_entries(),
        unknown_compile_id_events=writer.unknown_compile_id_events,
        payloads=writer.payload_stats(),
        graphs=writer.graphs.stats() if writer.graphs is not None else None,
        chromium_events=writer.chromium_events,
        raw_jsonl_events=writer.raw_events,
        string_table_process=next(iter(reader.string_tables), None),
        problems=problem_summary(problems),
        notes=problem_summary(problems.notes or Problems()),
        files=[],
    )


#: Folders the manifest summarises (`payloads`, `graphs`) instead of listing their files.
_SUMMARISED = (layout.PAYLOADS, layout.GRAPHS)


def _listing(root: Path) -> Iterator[str]:
    """Every file under `root` but payloads/ and graphs/, as relative POSIX paths (in no particular order).

    os.scandir, not Path.rglob: rglob made a Path and a stat per file and walked payloads/ only
    to drop it, a noticeable share of each small rank's parse in multi-rank runs. As with rglob,
    symlinked folders are not entered and only (links to) regular files count.
    """
    pending: list[tuple[str, str]] = [(str(root), "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if prefix or entry.name not in _SUMMARISED:
                        pending.append((entry.path, f"{prefix}{entry.name}/"))
                elif entry.is_file():
                    yield prefix + entry.name
