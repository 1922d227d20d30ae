"""The options of one parse: how strictly to read, and what the report is asked for.

In write/ (not pipeline/) because the sinks get them in their RunContext (write/context.py)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

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
    #: --user-code: patterns of the files that are the user's code (analyse/fold/usercode.py); empty
    #: for the default rule (not the standard library, installed packages or torch).
    user_code: tuple[str, ...] = ()
    #: The HTML report's options, passed to it as they are.
    report: ReportOptions = msgspec.field(default_factory=ReportOptions)
    #: A rank of a job: the job's output folder (as the worker sees it), whose payloads/ holds
    #: every rank's payloads, each once (docs/FORMAT.md, payloads/). None: this parse's own OUT.
    job_folder: str | None = None


#: The environment variable holding default `--user-code` patterns (separated by os.pathsep).
USER_CODE_ENV = "TLSCOPE_USER_CODE"


def user_code_patterns(given: Sequence[str] | None) -> tuple[str, ...]:
    """The `--user-code` patterns: those given on the command line, else TLSCOPE_USER_CODE's."""
    if given:
        return tuple(given)
    return tuple(p for p in os.environ.get(USER_CODE_ENV, "").split(os.pathsep) if p)


#: Below this many bytes of log (a quarter of it gzipped), a parse starts no worker process: the
#: report's pages and graphs/ are written in this process. A worker's start and the pipe cost
#: more CPU than a small log's few pages and graphs (10-40 ms measured on the corpus's 0.7-1.9 MB
#: traces), and the main pass is too short for a second core to gain.
SMALL_LOG_BYTES = 4 << 20


def small_log(path: Path) -> bool:
    """Whether `path` is a log small enough to parse with no worker process (SMALL_LOG_BYTES)."""
    try:
        size = path.stat().st_size
    except OSError:
        return False
    return size * (4 if path.name.endswith(".gz") else 1) < SMALL_LOG_BYTES
