"""The options of one parse: how strictly to read, and what the report is asked for."""

from __future__ import annotations

import msgspec

from tlscope.read.reader import DEFAULT_MAX_LINE
from tlscope.write.report.options import ReportOptions


class ParseOptions(msgspec.Struct, kw_only=True, frozen=True):
    """Options of one run (picklable: multi-rank workers and Dask get them whole)."""

    #: --strict: fail (OUT untouched) if the log has any problem.
    strict: bool = False
    #: --strict-compile-id: fail if any event has a malformed compile id.
    strict_compile_id: bool = False
    #: Lines longer than this are skipped and counted.
    max_line: int = DEFAULT_MAX_LINE
    #: The HTML report's options, passed to it as they are.
    report: ReportOptions = msgspec.field(default_factory=ReportOptions)
