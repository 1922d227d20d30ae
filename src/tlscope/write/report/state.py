"""What the report keeps through the pass: its outputs, and the folds its global pages need."""

from __future__ import annotations

from pathlib import Path

from tlscope.analyse.tlparse.directory import DirKey
from tlscope.analyse.tlparse.metrics import FailureRow, MetricsIndex
from tlscope.analyse.tlparse.stack import ResolvedFrame, StackTrie
from tlscope.model.problems import ProblemKind
from tlscope.write.context import RunContext
from tlscope.write.report.derived import JOB_PAGES, DerivedFiles
from tlscope.write.report.export import ExportState
from tlscope.write.report.options import ReportOptions
from tlscope.write.report.outputs import Line, OutputListener, Outputs
from tlscope.write.report.pages import StackRow
from tlscope.write.report.provenance_pages import ProvenanceCollector
from tlscope.write.run_options import small_log


class ReportState:
    """Handlers (write/report/handlers.py) read and fold into this; the sink writes the end pages."""

    def __init__(self, ctx: RunContext, options: ReportOptions, listeners: list[OutputListener]) -> None:
        self.ctx = ctx
        self.options = options
        provenance = ProvenanceCollector() if options.inductor_provenance else None
        workers = options.highlight_workers
        if workers is None and small_log(ctx.reader.path):
            workers = 1
        job = Path(ctx.options.job_folder) if ctx.options.job_folder else None
        pages = DerivedFiles(workers, job / JOB_PAGES if job is not None else None)
        self.outputs = Outputs(ctx.out, pages, provenance, listeners, job)
        self.metrics = MetricsIndex()
        #: Each compile id's stack (dynamo_start), for its metrics page.
        self.stack_index: dict[DirKey, list[ResolvedFrame]] = {}
        self.trie = StackTrie()
        self.unknown_trie = StackTrie()
        #: Table rows of the metrics page to come, per compile id.
        self.specializations: dict[DirKey, list[StackRow]] = {}
        self.guards_fast: dict[DirKey, list[StackRow]] = {}
        self.failures: list[FailureRow] = []
        self.has_chromium_events = False
        self.export = ExportState() if options.export else None

    def problem(self, line: Line, message: str) -> None:
        """An event the report could not render (counted in manifest.json, the run goes on)."""
        self.ctx.problems.add(ProblemKind.REPORT, line.record.line, message, str(self.ctx.reader.path))
