"""inductor_output_code pages: Pygments-highlighted Python, one code line per HTML line.

Layout contract (provenance line numbers and tlparse's tests depend on it): line 1 of the
file is the opening `<pre>` line, code line i is file line i + 1, and an identifier is never
split by markup. Highlighting is the dominant cost of a tlparse run, so three things keep it
off our critical path: a lean lexer (lexer.py, ~5x faster than Pygments' PythonLexer), a
small process pool that writes pages while the main pass goes on, and identical code (same
MD5) highlighted once and hard-linked.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
from multiprocessing.process import BaseProcess
from multiprocessing.queues import SimpleQueue
from pathlib import Path

from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

from tlscope.write.report.lexer import LeanPythonLexer

_STYLE = "friendly"
HEAD = '<meta charset="UTF-8"><pre class="highlight">\n'
_lexer = LeanPythonLexer(stripnl=False, ensurenl=False)
_formatter = HtmlFormatter(nowrap=True, style=_STYLE)


def tail() -> str:
    """What follows the code: the closing tag and the colours (after the code, so lines stay put)."""
    css = _formatter.get_style_defs(".highlight")
    return f"</pre>\n<style>\n.highlight {{ background: #ffffff; }}\n{css}\n</style>\n"


def render_code(code: str) -> str:
    """The whole page for one code payload."""
    body = highlight(code, _lexer, _formatter) if code else ""
    if body and not body.endswith("\n"):
        body += "\n"
    return HEAD + body + tail()


def write_page(source: str, dest: str) -> None:
    """Worker entry: read a payload file, write its highlighted page."""
    code = Path(source).read_bytes().decode("utf-8", "replace")
    Path(dest).write_text(render_code(code), encoding="utf-8")


def link_or_copy(source: Path, dest: Path) -> None:
    """Hard-link (cheap, same content) or copy when the file system refuses."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)


class Highlighter:
    """Highlights payload files into pages, in worker processes, once per distinct content.

    Workers take jobs from one shared pipe (multiprocessing.SimpleQueue): no helper threads in
    this process. ProcessPoolExecutor's manager and feeder threads fought the main pass for the
    GIL, and each submit waited out a GIL switch interval (8% of the big trace's main pass).
    """

    def __init__(self, workers: int | None = None) -> None:
        self._count = workers if workers is not None else min(4, os.cpu_count() or 1)
        self._jobs: SimpleQueue[tuple[str, str] | None] | None = None
        self._results: SimpleQueue[str | None] | None = None
        self._workers: list[BaseProcess] = []
        self._first: dict[str, Path] = {}
        self._copies: list[tuple[Path, Path]] = []

    def submit(self, md5: str, source: Path, dest: Path) -> None:
        seen = self._first.get(md5)
        if seen is not None:
            self._copies.append((seen, dest))
            return
        self._first[md5] = dest
        if self._jobs is None and self._count > 1:
            self._start()
        if self._jobs is None:
            write_page(str(source), str(dest))
        else:
            self._jobs.put((str(source), str(dest)))

    def _start(self) -> None:
        """Start the workers on the first page (a trace without output code needs none)."""
        context = multiprocessing.get_context()
        jobs: SimpleQueue[tuple[str, str] | None] = context.SimpleQueue()
        results: SimpleQueue[str | None] = context.SimpleQueue()
        try:
            for _ in range(self._count):
                # Daemons: a run that dies part-way must not leave highlighters behind.
                worker = context.Process(target=_work, args=(jobs, results), daemon=True)
                worker.start()
                self._workers.append(worker)
        except AssertionError:  # inside a daemonic process (a pool worker): no children allowed
            self._count = 1
            if not self._workers:
                return
        self._jobs, self._results = jobs, results

    def close(self) -> None:
        """Wait for every page; raise the first worker error."""
        errors = self._drain()
        if errors:
            raise RuntimeError(f"highlighting failed: {errors[0]}")
        for source, dest in self._copies:
            link_or_copy(source, dest)

    def _drain(self) -> list[str]:
        if self._jobs is None or self._results is None:
            return []
        for _ in self._workers:
            self._jobs.put(None)
        errors = [e for e in (self._results.get() for _ in self._workers) if e is not None]
        for worker in self._workers:
            worker.join()
        self._jobs = self._results = None
        self._workers = []
        return errors


def _work(jobs: SimpleQueue[tuple[str, str] | None], results: SimpleQueue[str | None]) -> None:
    """Worker loop: write pages until the end marker, then report the first error (or None).

    A failed page does not stop the loop: the queue must keep draining or the main pass,
    blocked on a full pipe, would wait forever.
    """
    error: str | None = None
    while (job := jobs.get()) is not None:
        try:
            write_page(*job)
        except Exception as err:  # reported to the main process, which raises it
            error = error or f"{job[1]}: {type(err).__name__}: {err}"
    results.put(error)
