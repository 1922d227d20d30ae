"""The HTML report as a sink of a parse: how the pipeline builds it and warms it up."""

from __future__ import annotations

from collections.abc import Sequence

from tlscope.write.context import RunContext, Sink
from tlscope.write.report.render import environment
from tlscope.write.report.sink import ReportSink


def report_sinks(ctx: RunContext) -> Sequence[Sink]:
    """The HTML report, fed in the same pass as the format writer, with the run's report options."""
    return [ReportSink(ctx, ctx.options.report)]


def preload_report() -> None:
    """Load the report's templates now (multi-rank: once before forking the workers, which inherit
    them); importing this module already imported the report's code."""
    env = environment()
    for name in env.list_templates():
        env.get_template(name)
