"""`tlscope.load(path)`: a trace for notebooks and scripts, read from the tlscope format.

PATH is a log (plain or .gz), a folder of logs, or a tlscope output folder. A log is parsed once
into a temporary folder (removed when the Trace is garbage-collected, or by `close()`); an
output folder is read where it is. Everything comes from the format files (docs/FORMAT.md):
`compiles.json`, `log_size.json`, `manifest.json`, `raw.jsonl` and `payloads/`, so the figures
are those of `tlscope summary`, the report and the explorer.

>>> import tlscope
>>> trace = tlscope.load(CORPUS / "graph_breaks")
>>> [(c.id, c.status) for c in trace.compiles][:3]
[('[-/-]', 'outside'), ('[0/0]', 'restarted'), ('[0/0_1]', 'graph_break')]
>>> top = trace.graph_breaks[0]
>>> top.count, top.reason, top.user_frame.line
(2, 'Attempted to copy.deepcopy a tensor', 18)
>>> size = trace.log_size
>>> size.total_bytes == sum(s.bytes for s in size.by_event_key.values()) + size.other.bytes
True
>>> event = next(trace.events(kind="dynamo_output_graph", compile_id="[0/0_1]"))
>>> print(trace.payload(event).splitlines()[0])
class GraphModule(torch.nn.Module):
>>> graph = trace.graph(event)
>>> [(n.name, n.op, n.target, n.users) for n in graph.nodes]
[('l_x_', 'placeholder_alias', 'L_x_', ['x']), ('x', 'call_function', 'torch.sin', [])]
>>> graph.nodes[1].source.line, graph.inputs[0].meta.shape, graph.outputs
(22, ['4', '4'], ['x'])
>>> trace.diff(trace).equal
True
>>> flame = trace.flame_graph()
>>> flame.seconds == round(sum(c.time.duration_s for c in trace.compiles if c.time), 6)
True
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tlscope.analyse.diff import TraceDiff, diff_traces, size_changes
from tlscope.analyse.flame import FlameNode, flame_tree
from tlscope.analyse.fxgraph import FxGraph, FxGraphFailure, from_stored, parse_graph
from tlscope.analyse.fxgraph.graph_parser import NO_CLASS
from tlscope.analyse.ranks.divergence import Divergence, JobView, RankLine, job_view, rank_overview, read_ranks_file
from tlscope.analyse.ranks.graph_divergence import rank_masked, structure_digest
from tlscope.analyse.ranks.job_answers import JobAnswers
from tlscope.analyse.ranks.settings_divergence import settings_digest
from tlscope.analyse.ranks.stragglers import Stragglers
from tlscope.analyse.trace_summary import Summary, summarise_trace
from tlscope.format import layout
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
from tlscope.format.errors import FormatError
from tlscope.format.folder import OutputFolder
from tlscope.format.logsize import LogSize
from tlscope.format.manifest import Manifest
from tlscope.pipeline.classify import InputKind, classify

if TYPE_CHECKING:
    from tlscope.pipeline.single import Tracker

#: The format minor from which output folders hold graphs/ (FORMAT.md, "graphs/").
_GRAPHS_MINOR = 11


class TraceError(FormatError):
    """PATH is neither a log nor an output folder tlscope can read."""


class UnknownCompileId(TraceError, KeyError):
    """`trace.compile(id)` for an id the trace does not hold (a KeyError too, as for a dict)."""

    def __str__(self) -> str:  # KeyError's own would quote the message
        return Exception.__str__(self)


def load(
    path: str | Path,
    *,
    rank: int | None = None,
    user_code: Sequence[str] = (),
    latest: bool = False,
    track: Tracker | None = None,
    on_rank: Callable[[int], None] | None = None,
    on_ranks: Callable[[Sequence[int]], None] | None = None,
) -> Trace:
    """Open a log, a folder of logs or a tlscope output folder (see the module docstring).

    A multi-rank output folder (`rank_N` subfolders) opens rank `rank` (default: the lowest);
    `trace.rank_numbers` lists them, `trace.ranks` gives each one's figures (compiles, compile
    time, breaks, recompiles, failures, cache), `trace.stragglers` the slow ones, and
    `trace.rank(n)` opens another. `user_code`: the patterns of `tlscope --user-code` for a log
    parsed here (an output folder was analysed when written). `latest`: PATH is a folder of
    logs, read its newest (as `tlscope --latest`). `track`: wraps a single log's records as it is
    read (`tlscope summary`'s progress bar; pipeline/single.py's Tracker); `on_ranks` and `on_rank`:
    a job's ranks, told before the first is parsed and each as it finishes (`parse`'s).
    """
    path = Path(path)
    kind = classify(path, sniff=False).kind
    if kind is InputKind.OUTPUT_FOLDER:
        return Trace(path, rank=rank)
    if kind is InputKind.MISSING:
        raise TraceError("no such file or folder", path=path)
    scratch = Path(tempfile.mkdtemp(prefix="tlscope-load-"))
    try:
        mine = tuple(user_code)
        _parse_into(path, scratch / "out", mine, latest=latest, track=track, on_rank=on_rank, on_ranks=on_ranks)
        # Errors name PATH as the user gave it, never the temporary folder it was parsed into.
        trace = Trace(scratch / "out", rank=rank, label=str(path))
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    trace._finalizer = weakref.finalize(trace, shutil.rmtree, scratch, True)
    return trace


def summarise(
    path: str | Path,
    *,
    rank: int | None = None,
    user_code: Sequence[str] = (),
    latest: bool = False,
    track: Tracker | None = None,
    on_rank: Callable[[int], None] | None = None,
    on_ranks: Callable[[Sequence[int]], None] | None = None,
) -> Summary:
    """`load(path, ...).summary()`, what `tlscope summary` prints, with nothing written for a log.

    A single log's answers are computed in memory from one pass (no format file: `summary`
    shows none of them; issue 19); a job's logs, an output folder or a `rank` go through `load`.
    """
    path = Path(path)
    if rank is None and classify(path, sniff=False).kind not in (InputKind.OUTPUT_FOLDER, InputKind.MISSING):
        from tlscope.pipeline.parse import ParseOptions, answer_log
        from tlscope.pipeline.single import untracked

        done = answer_log(path, ParseOptions(user_code=tuple(user_code)), latest=latest, track=track or untracked)
        if done is not None:
            answers, manifest = done
            return _summary(answers, manifest)
    trace = load(path, rank=rank, user_code=user_code, latest=latest, track=track, on_rank=on_rank, on_ranks=on_ranks)
    return trace.summary()


def _summary(answers: Answers, manifest: Manifest, *, rank: int | None = None, job: JobView | None = None) -> Summary:
    """The summary of a trace's answers: the one call for a folder's files (`Trace.summary`) and a
    log's answers computed in memory (`summarise`), so the two cannot show different fields."""
    return summarise_trace(
        answers.compiles,
        answers.graph_breaks,
        answers.log_size,
        manifest,
        rank=rank,
        job=job,
        input_shapes=answers.input_shapes,
        symbols=answers.symbols,
        exports=answers.exports,
        exports_note=answers.exports_note,
        aot_inductor=answers.aot_inductor,
        vllm=answers.vllm,
        dynamic=answers.dynamic,
        settings=answers.settings,
        first_answers=answers.first_answers,
    )


def _parse_into(
    path: Path,
    out: Path,
    user_code: tuple[str, ...] = (),
    *,
    latest: bool = False,
    track: Tracker | None = None,
    on_rank: Callable[[int], None] | None = None,
    on_ranks: Callable[[Sequence[int]], None] | None = None,
) -> None:
    """The one adapter to the programmatic parse entry point (pipeline/parse.py)."""
    # Imported by a parse only: an output folder is just read.
    from tlscope.pipeline.parse import ParseOptions, parse
    from tlscope.pipeline.single import untracked

    # The format and the answers are all a Trace reads: no HTML report (issue 19: 2x faster).
    parse(
        path,
        out,
        ParseOptions(user_code=user_code),
        latest=latest,
        command=["tlscope.load", str(path)],
        report=False,
        track=track or untracked,
        on_rank=on_rank,
        on_ranks=on_ranks,
    )


class _JobFolder:
    """An output folder's top and its ranks (ascending), read once for every Trace of its ranks:
    opening each rank of a 1,000-rank job listed them all again, O(ranks²)."""

    def __init__(self, folder: OutputFolder) -> None:
        self.folder = folder
        self.numbers = tuple(sorted(folder.ranks()))
        self.known = frozenset(self.numbers)


class Trace:
    """One rank's tlscope output folder, read lazily (see `load`)."""

    _finalizer: weakref.finalize[Any, Any] | None = None

    def __init__(
        self, folder: Path, *, rank: int | None = None, label: str | None = None, job: _JobFolder | None = None
    ) -> None:
        self.root = folder
        #: What the user named (a log, a folder of logs): what errors say, not a temporary folder.
        self.label = label or str(folder)
        #: The top folder and its ranks, read once and shared by every rank's Trace (`rank`).
        self._top = job or _JobFolder(OutputFolder(folder))
        top, ranks = self._top.folder, self._top.numbers
        if ranks:
            if rank is not None and rank not in self._top.known:
                raise TraceError(f"has no rank {rank} (its ranks: {', '.join(map(str, ranks))})", path=self.label)
            rank = ranks[0] if rank is None else rank
            self._folder = top.rank(rank)
        elif rank is not None:
            raise TraceError(f"has no rank {rank}: it is a single-rank trace", path=self.label)
        else:
            self._folder = top
        self.folder = self._folder.path
        #: The ranks of a multi-rank trace, ascending (empty for a single log).
        self.rank_numbers = list(ranks)
        self.current_rank = rank

    def __repr__(self) -> str:
        where = f", rank {self.current_rank}" if self.current_rank is not None else ""
        return f"<tlscope.Trace {str(self.folder)!r}{where}>"

    def rank(self, n: int) -> Trace:
        """Another rank of a multi-rank trace (sharing its temporary folder)."""
        other = Trace(self.root, rank=n, label=self.label, job=self._top)
        other._keep = self  # type: ignore[attr-defined]  # the temporary folder lives as long as both
        return other

    def close(self) -> None:
        """Remove the temporary folder of a parsed log now (an output folder is never touched)."""
        if self._finalizer is not None:
            self._finalizer()

    @cached_property
    def manifest(self) -> Manifest:
        return self._folder.manifest()

    @cached_property
    def _compiles_file(self) -> CompilesFile:
        try:
            return self._folder.compiles()
        except FormatError as err:
            if self._folder.file(layout.COMPILES).is_file():
                raise
            raise TraceError(f"{err} (written by tlscope 0.1 format 1.1 and later)", path=self.folder) from None

    @property
    def compiles(self) -> list[CompileEntry]:
        """One entry per compile id (compiles.json): `.id`, `.status`, `.graph_breaks`, `.recompile`…"""
        return self._compiles_file.compiles

    def compile(self, compile_id: str) -> CompileEntry:
        """The entry of one compile id (display form, e.g. `[0/1]`); UnknownCompileId if none."""
        for entry in self.compiles:
            if entry.id == compile_id:
                return entry
        ids = [e.id for e in self.compiles if e.id != "[-/-]"]
        shown = ", ".join(ids[:12]) + (f", … ({len(ids)} in all)" if len(ids) > 12 else "")
        raise UnknownCompileId(f"{self.label}: no compile id {compile_id} (its compile ids: {shown or 'none'})")

    @property
    def graph_breaks(self) -> list[DistinctGraphBreak]:
        """The distinct graph breaks, most frequent first."""
        return self._compiles_file.graph_breaks

    @property
    def symbols(self) -> list[Symbol]:
        """Where each dynamic dimension comes from (compiles.json `symbols`): `.symbol`, `.source`,
        `.input`, `.dim`, `.range`, `.entered_at` (the user's call), `.specializations`, `.guards`."""
        return self._compiles_file.symbols

    @property
    def input_shapes(self) -> list[FrameShapes]:
        """Did the sizes change? Per frame compiled more than once, its graphs' input shapes per
        compile id with the changed dimensions (compiles.json `input_shapes`)."""
        return self._compiles_file.input_shapes

    @property
    def exports(self) -> list[ExportCall]:
        """Each torch.export call and how it ended (compiles.json `exports`): `.status`, `.sentence`,
        `.program`, `.issues` (each with `.kind`, `.sentence`, `.user_frame`, `.fix`)."""
        return self._compiles_file.exports

    @property
    def exports_note(self) -> str | None:
        """What the export calls cannot say (compiles.json `exports_note`), e.g. that without
        TORCH_DTRACE only failed calls show; None when nothing is to say."""
        return self._compiles_file.exports_note

    @property
    def aot_inductor(self) -> list[AotInductorCompile]:
        """Each AOT Inductor compile (compiles.json `aot_inductor`): `.status`, `.time`,
        `.user_frame` (the call), `.graphs`, `.code`, `.failure`."""
        return self._compiles_file.aot_inductor

    @property
    def vllm(self) -> list[Vllm]:
        """Each vLLM compile (compiles.json `vllm`): `.config`, `.ranges` (each with its
        `.sentence`), `.piecewise` (each piece's `.submod`, range, `.graphs`, `.code`)."""
        return self._compiles_file.vllm

    @property
    def dynamic(self) -> Dynamic | None:
        """What made inputs dynamic that no line of the code marked (compiles.json `dynamic`):
        `.sources` (automatic dynamic shapes, a PGO profile), `.recommended` (the
        TORCH_COMPILE_DYNAMIC_SOURCES value that asks for them at once), `.sentence`."""
        return self._compiles_file.dynamic

    @property
    def settings(self) -> Settings | None:
        """The compiles that ran under other settings than the run's first (compiles.json
        `settings`): `.groups` (each with its `.compile_ids` and `.settings`), `.sentence`."""
        return self._compiles_file.settings

    @cached_property
    def first_answers(self) -> list[FirstAnswer]:
        """The run's first answers (compiles.json `first_answers`): the first failure, the most
        frequent graph break, the first recompile and the slowest compile, each a `.kind`, the `.compile_id` it is
        about and the `.text` `tlscope LOG` printed; found from the entries in a folder written
        before format 1.41, which does not hold them."""
        from tlscope.analyse.headline import read_first_answers

        return read_first_answers(self._compiles_file)

    @property
    def recompiles(self) -> list[CompileEntry]:
        """The entries that explain a recompile (`entry.recompile` is set)."""
        return [entry for entry in self.compiles if entry.recompile is not None]

    @cached_property
    def log_size(self) -> LogSize:
        return self._folder.log_size()

    def summary(self) -> Summary:
        """What `tlscope summary` shows (and prints with --json): every rank first, then this one's details."""
        job = self.job_view() if self.rank_numbers else None
        answers = Answers(
            compiles=self.compiles,
            graph_breaks=self.graph_breaks,
            log_size=self.log_size,
            symbols=self.symbols,
            input_shapes=self.input_shapes,
            exports=self.exports,
            exports_note=self.exports_note,
            aot_inductor=self.aot_inductor,
            vllm=self.vllm,
            dynamic=self.dynamic,
            settings=self.settings,
            first_answers=self.first_answers,
        )
        return _summary(answers, self.manifest, rank=self.current_rank, job=job)

    def job_view(self) -> JobView:
        """A multi-rank trace's rank lines, divergence and stragglers (its ranks.json): read from the
        job's ranks.json, or folded from each rank's compiles.json when the folder has none."""
        return self._job

    @cached_property
    def _job(self) -> JobView:
        written = self.root / layout.RANKS
        if written.is_file():
            read = read_ranks_file(written.read_bytes())
            # The view without the file's header: what a job folded here gives, `summary --json`'s.
            return JobView(
                ranks=read.ranks,
                divergence=read.divergence,
                stragglers=read.stragglers,
                first_answers=read.first_answers,
            )
        overviews = []
        # By payload name: one job store, so a graph every rank logged is read once for all.
        known: dict[str, str | None] = {}
        for n in self.rank_numbers:
            trace = self if n == self.current_rank else self.rank(n)
            settings = settings_digest(trace.first_configs())
            overviews.append(
                rank_overview(
                    n,
                    trace.compiles,
                    _structures(trace, known),
                    settings,
                    trace.dynamic,
                    trace.settings,
                    trace.first_answers,
                )
            )
        # A job's ranks share one payload store: any rank's folder reads the others' graphs.
        found = job_view(overviews, _payload_reader(self), lambda n: self.rank(n).first_configs())
        if found.stragglers is not None and found.stragglers.ranks:
            from tlscope.analyse.ranks.straggler_why import explain_stragglers

            explain_stragglers(found.stragglers, lambda n: self.rank(n).compiles, found.divergence.settings)
        return found

    @property
    def ranks(self) -> list[RankLine]:
        """Each rank's figures (ranks.json's lines: `.rank`, `.compiles`, `.compile_time_s`,
        `.graph_breaks`, `.recompiles`, `.failures`, `.cache_hits`, `.cache_misses`), ranks
        ascending; empty for a single log."""
        return self._job.ranks if self.rank_numbers else []

    @property
    def divergence(self) -> Divergence | None:
        """How the ranks' compiles diverge (ranks.json's `divergence`): `.groups` of ranks by compile
        id sequence, `.not_on_every_rank`, `.collectives`, the compile ids whose collectives
        differ between ranks, `.graphs`, those whose Dynamo graphs differ (`.groups`, `.kind`,
        `.sentence`), `.settings`, the ranks that ran under other settings than the most
        ranks (`.ranks`, `.than`, `.changed`, `.sentence`; with `.id`, a compile some ranks ran
        under other settings after their first compile), `.frames`, the ranks that compiled
        other functions than the most ranks or numbered them differently (`.ranks`, `.than`,
        `.extra`, `.missing`, `.renumbered`, `.sentence`), and `.caches`, the compiles whose cache
        lookups answered differently on different ranks (`.id`, `.groups` with their `.lookups`,
        `.caches`, `.sentence`); None for a single log."""
        return self._job.divergence if self.rank_numbers else None

    @property
    def stragglers(self) -> Stragglers | None:
        """The ranks markedly slower to compile than the median rank, with the rule; None for a single log."""
        return self._job.stragglers if self.rank_numbers else None

    @property
    def rank_answers(self) -> JobAnswers | None:
        """A job's first answers (ranks.json's `first_answers`): each rank's first failure, most
        frequent graph break, first recompile and slowest compile, `.lines` each once with its `.ranks` and `.who`;
        None for a single log (its own are `first_answers`)."""
        return self._job.first_answers if self.rank_numbers else None

    def flame_graph(self) -> FlameNode:
        """The stack trie weighted by compile time, AOT Inductor compiles included (what
        compile_time.html draws)."""
        return flame_tree(self.compiles, self.aot_inductor)

    def events(
        self, kind: str | None = None, compile_id: str | None = None, rank: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """raw.jsonl's events in log order (streamed), each the JSON object of its line.

        `kind` is an event key or an artifact name; `compile_id` a display form (`[0/1]`; runtime
        events with no attempt match attempt 0); `rank` picks a rank of a multi-rank trace
        (default: this trace's rank).
        """
        folder = self._folder if rank is None else Trace(self.root, rank=rank, label=self.label, job=self._top)._folder
        yield from folder.events(kind, compile_id)

    def payload(self, event: dict[str, Any] | str) -> str | None:
        """The payload text of a raw.jsonl event (or a `payloads/<md5>.txt` name); None without one."""
        name = event if isinstance(event, str) else event.get("payload_filename")
        if not isinstance(name, str):
            return None
        try:
            return self._folder.payload(name)
        except FormatError:
            raise TraceError(f"{name!r} is not a payload file", path=self.folder) from None

    def graph(self, event: dict[str, Any] | str) -> FxGraph | FxGraphFailure | None:
        """The FX graph printed in an event's payload (or a `payloads/<md5>.txt` name), typed:
        `.inputs`, `.nodes` (`.name`, `.op`, `.target`, `.args`, `.users`, `.shape`, `.dtype`,
        `.source`, `.module`), `.outputs`. Read from `graphs/<md5>.json` (format 1.11); parsed
        from the payload in older folders. None without a payload or when the payload is no
        printed graph; an `FxGraphFailure` (with its reason) when it looks like one but cannot be read."""
        name = event if isinstance(event, str) else event.get("payload_filename")
        if not isinstance(name, str):
            return None
        try:
            stored = self._folder.graph(name)
        except FormatError as err:
            raise TraceError(f"{name!r}: {err}", path=self.folder) from None
        if stored is not None:
            return from_stored(stored.graph) if stored.graph is not None else FxGraphFailure(stored.failure or "")
        if self.manifest.format_minor >= _GRAPHS_MINOR:
            return None  # written by a version that writes graphs/: the payload is no graph
        text = self.payload(name)
        parsed = None if text is None else parse_graph(text)
        return None if isinstance(parsed, FxGraphFailure) and parsed.reason == NO_CLASS else parsed

    def diff(self, other: Trace, sides: tuple[str, str] = ("A", "B"), own_devices: bool = False) -> TraceDiff:
        """Compiles matched by function and order; graphs, guards, code and metrics compared; the
        torch.export calls in order. `sides` names the two in the sentences (`rank 0`, `rank 1`).
        `own_devices`: the two are ranks of one job, each on its own GPU, so the device indices
        their graphs, guards and code print, and their processes' environment, are masked
        (`cuda:…`), not differences."""
        from tlscope.analyse.config_diff import config_diff
        from tlscope.analyse.dynamic_diff import dynamic_lines
        from tlscope.analyse.headline import answer_changes

        read_a: Callable[[str], str | None] = self.payload
        read_b: Callable[[str], str | None] = other.payload
        if own_devices:
            read_a, read_b = _rank_masked(read_a), _rank_masked(read_b)
        result = diff_traces(self.compiles, other.compiles, read_a, read_b, (self.exports, other.exports))
        result.sizes = size_changes(self.log_size, other.log_size)
        result.summary.dynamic = dynamic_lines(self.dynamic, other.dynamic, sides)
        result.summary.config = config_diff(self.first_configs(), other.first_configs())
        result.summary.first_answers = answer_changes(self.first_answers, other.first_answers, sides)
        return result

    def first_configs(self) -> dict[str, dict[str, Any]]:
        """The configs the first metrics record logged (dynamo, compiler, functorch, inductor), by
        section: the run's settings as its first compile saw them (read from raw.jsonl)."""
        from tlscope.analyse.config_diff import first_configs

        if "compilation_metrics" not in self.manifest.events:
            return {}  # an export-only log, say: not a scan of all raw.jsonl for nothing
        return first_configs(self.events("compilation_metrics"))

    def to_pandas(self) -> Any:
        """One row per compile id: id, status, function, time, graph breaks, recompile reason, failure.

        Needs the optional extra: `pip install "tlscope[pandas]"`.
        """
        try:  # the optional `pandas` extra; imported by name so mypy needs no stubs without it
            pandas = importlib.import_module("pandas")
        except ImportError as err:
            raise ImportError('to_pandas() needs pandas: pip install "tlscope[pandas]"') from err
        return pandas.DataFrame([_row(entry) for entry in self.compiles])


def _row(entry: CompileEntry) -> dict[str, Any]:
    function = entry.function
    return {
        "id": entry.id,
        "status": entry.status,
        "function": function.name if function else None,
        "file": function.file if function else None,
        "line": function.line if function else None,
        "duration_s": entry.time.duration_s if entry.time else None,
        "graph_breaks": len(entry.graph_breaks),
        "recompile_reason": entry.recompile.reason if entry.recompile else None,
        "fail_type": entry.failure.type if entry.failure else None,
        "events": entry.events,
    }


def _payload_reader(trace: Trace) -> Callable[[str], str | None]:
    """`trace.payload` by name, None for a payload it cannot read."""

    def read(name: str) -> str | None:
        try:
            return trace.payload(name)
        except (TraceError, OSError):  # a folder copied without its payloads: nothing to compare
            return None

    return read


def _rank_masked(read: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """`read` with what is each rank's own masked in what it returns (`rank_masked`)."""

    def masked(name: str) -> str | None:
        text = read(name)
        return None if text is None else rank_masked(text)

    return masked


def _structures(trace: Trace, known: dict[str, str | None]) -> Callable[[str], str | None]:
    """Each Dynamo graph's structure by payload name, read from `trace`'s folder once (`known`
    keeps them: ranks.json's graph comparison, for a job folder written without one)."""
    read = _payload_reader(trace)

    def digest_of(name: str) -> str | None:
        if name not in known:
            text = read(name)
            known[name] = structure_digest(text) if text is not None else None
        return known[name]

    return digest_of
