"""A rank's RankSummary out of its parse: what the landing page compares, without reading back.

`RankFacts` rides along a rank's parse (multi-rank workers, local or on Dask): a sink fed the
records after the report, and a listener the report tells of every file it registers. It keeps
only what the cross-rank analyses need (the artifacts tlparse's landing page reads: runtime
estimations, collective schedules, the graph execution order; each compilation's metrics) and
folds them with analyse/ranks/facts.py at the end, the same functions tests/rankdir.py applies
to a folder on disk. The summary is small and picklable: it goes back from the worker as is.

The highlighted output-code page of each graph with a collective schedule is handed over by
the report at the end (`ReportSink.page`), because tlparse's parity check counts calls on that
page (quirks included): rendered in this process, it is not read back from disk.
"""

from __future__ import annotations

from collections.abc import Sequence

from tlscope.analyse.ranks import facts
from tlscope.analyse.ranks.graph_divergence import PRINTED, structure_digest
from tlscope.analyse.ranks.rank_summary import RankSummary
from tlscope.analyse.tlparse.directory import CompileDirectory
from tlscope.format import layout
from tlscope.format.compiles import Answers
from tlscope.format.raw import RAW_ADDED_FIELDS
from tlscope.model.events import Artifact, CompilationMetrics
from tlscope.model.lenient import lenient
from tlscope.model.record import Record
from tlscope.write.context import RunContext, Sink, SinkFactory, abort
from tlscope.write.report.pages import reformat_json
from tlscope.write.report.sink import ReportSink


class RankFacts:
    def __init__(self, rank: int) -> None:
        self.summary = RankSummary(rank=rank)
        self._directory: CompileDirectory | None = None
        #: The report this collector follows (it hands over the output-code pages).
        self._report: ReportSink | None = None
        #: Per compile folder, the first runtime / schedule artifact: (file name, its bytes).
        self._runtime: dict[str, tuple[str, bytes]] = {}
        self._schedule: dict[str, tuple[str, bytes]] = {}
        #: Per compile folder, the first output-code file: (path in OUT, its bytes if a .txt).
        self._code: dict[str, tuple[str, bytes | None]] = {}
        #: The newest graph-execution-order artifact: (path in OUT, its bytes).
        self._order: tuple[str, bytes] | None = None
        #: Each Dynamo (and post-grad) graph's structure by its payload file (`payloads/<md5>.txt`),
        #: read once a payload: what the job compares between ranks (analyse/ranks/graph_divergence.py).
        self._structures: dict[str, str | None] = {}

    def around(self, sinks: SinkFactory | None) -> SinkFactory:
        """`sinks` (the report) followed by this collector, told of the report's files (`_AfterReport`)."""

        def factory(ctx: RunContext) -> Sequence[Sink]:
            made = list(sinks(ctx)) if sinks is not None else []
            for sink in made:
                if isinstance(sink, ReportSink):
                    sink.listen(self.on_output)
                    self._directory = sink.directory
                    self._report = sink
            return [_AfterReport(made, self)]

        return factory

    def on_output(self, rel: str, number: int, record: Record) -> None:
        """A file the report registered; artifacts of a compile folder that the analyses read are kept."""
        graph, slash, name = rel.partition("/")
        if not slash or "/" in name:
            return  # only a compile folder's own files count (what tlparse's landing page lists)
        stem, suffix = _stem_suffix(name)
        if suffix == ".json":
            if stem.startswith(facts.RUNTIME_PREFIX) and graph not in self._runtime:
                self._runtime[graph] = (name, _json_file(record))
            if stem.startswith(facts.SCHEDULE_PREFIX) and graph not in self._schedule:
                self._schedule[graph] = (name, _json_file(record))
            if facts.is_execution_order_name(name):
                self._order = (rel, _json_file(record))  # registered later: numbered higher
        elif suffix in (".html", ".txt") and stem.startswith(facts.CODE_PREFIX) and graph not in self._code:
            self._code[graph] = (rel, None if suffix == ".html" else record.payload or b"")

    def feed(self, record: Record) -> None:
        """Compilation metrics, as raw.jsonl holds them (every written event line with that key),
        and the structure of each Dynamo and post-grad graph."""
        if record.key in ("str", "chromium_event") or record.compile_id is None:
            return
        if _printed(record) and record.payload is not None and record.payload_md5 is not None:
            name = f"{layout.PAYLOADS}/{record.payload_md5}.txt"
            if name not in self._structures:
                self._structures[name] = structure_digest(record.payload_text)
            return
        value = record.envelope.get("compilation_metrics")
        if not isinstance(value, dict) or any(k in record.envelope for k in RAW_ADDED_FIELDS):
            return
        typed = record.event if record.key == "compilation_metrics" else None
        metrics = typed if isinstance(typed, CompilationMetrics) else lenient(value, CompilationMetrics)
        if metrics is not None:
            facts.note_metrics(record.compile_id, metrics, self.summary)

    def finish(self, ctx: RunContext, answers: Answers) -> None:
        """Fold the answers, the directory and the kept artifacts (after the report: `_AfterReport`)."""
        summary = self.summary
        facts.note_compiles(
            answers.compiles, summary, self._structures.get, answers.dynamic, answers.settings, answers.first_answers
        )
        if self._directory is None:
            summary.errors.append("compile_directory.json is missing")
        else:
            facts.note_directory(self._directory.json_items(), summary)
            if self._order is not None:
                summary.execution_order = facts.execution_order(*self._order, summary)
        for graph in sorted(self._runtime.keys() | self._schedule.keys()):
            self._graph(graph)
        summary.tensor_meta.sort()

    def _graph(self, graph: str) -> None:
        summary = self.summary
        if graph in self._runtime:
            facts.note_runtime(graph, *self._runtime[graph], summary)
        if graph not in self._schedule:
            return
        schedule = facts.schedule_of(graph, *self._schedule[graph], summary)
        code = self._code.get(graph)
        if schedule is None or code is None:
            return
        rel, data = code
        if data is None:
            assert self._report is not None  # the page was registered by it (`on_output`)
            try:
                data = self._report.page(rel)
            except OSError as err:
                summary.errors.append(f"{rel}: {err.strerror}")
                return
        # Read as text files are (universal newlines), as tlparse's check and tests/rankdir.py read it.
        text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        facts.note_parity(graph, schedule, text, summary)


class _AfterReport:
    """The report's sinks, then the rank facts: fed after them, finished once their pages exist."""

    def __init__(self, report: Sequence[Sink], facts: RankFacts) -> None:
        self._report = report
        self._facts = facts

    def feed(self, record: Record) -> None:
        for sink in self._report:
            sink.feed(record)
        self._facts.feed(record)

    def finish(self, ctx: RunContext, answers: Answers) -> None:
        for sink in self._report:
            sink.finish(ctx, answers)
        self._facts.finish(ctx, answers)

    def abort(self) -> None:
        abort(self._report)


def _printed(record: Record) -> bool:
    """A graph each rank's print is made of (`PRINTED`): its own key, or (today's torch logs the
    post-grad graph so) an artifact of that name."""
    if record.key in PRINTED:
        return True
    event = record.event
    return record.key == "artifact" and isinstance(event, Artifact) and event.name in PRINTED


def _stem_suffix(name: str) -> tuple[str, str]:
    """PurePosixPath(name)'s stem and suffix for a name without `/`, without making a path: this
    runs for every file a rank's report registers (~110 a rank of a job)."""
    if name == ".":  # a path's name is then empty
        return "", ""
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:
        return name[:dot], name[dot:]
    return name, ""


def _json_file(record: Record) -> bytes:
    """What the report writes for a json artifact: its payload pretty-printed like serde_json."""
    return b"" if record.payload is None else reformat_json(record.payload)
