"""inductor_output_code pages: Pygments-highlighted Python, one code line per HTML line.

Layout contract (provenance line numbers and tlparse's tests depend on it): line 1 of the
file is the opening `<pre>` line, code line i is file line i + 1, and an identifier is never
split by markup. Highlighting is the dominant cost of a tlparse run, so three things keep it
off our critical path: a lean lexer (lexer.py, ~5x faster than Pygments' PythonLexer), a
small process pool that writes pages while the main pass goes on, and identical code (same
MD5) highlighted once and hard-linked.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import Future, ProcessPoolExecutor
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
    """Highlights payload files into pages, in parallel, once per distinct content."""

    def __init__(self, workers: int | None = None) -> None:
        count = workers if workers is not None else min(4, os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(count) if count > 1 else None
        self._first: dict[str, tuple[Path, Future[None] | None]] = {}
        self._copies: list[tuple[Path, Path]] = []

    def submit(self, md5: str, source: Path, dest: Path) -> None:
        seen = self._first.get(md5)
        if seen is not None:
            self._copies.append((seen[0], dest))
            return
        if self._pool is None:
            write_page(str(source), str(dest))
            self._first[md5] = (dest, None)
        else:
            self._first[md5] = (dest, self._pool.submit(write_page, str(source), str(dest)))

    def close(self) -> None:
        """Wait for every page; raise the first worker error."""
        try:
            for _, future in self._first.values():
                if future is not None:
                    future.result()
            for source, dest in self._copies:
                link_or_copy(source, dest)
        finally:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None
