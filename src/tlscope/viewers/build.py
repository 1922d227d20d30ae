"""The explorer as `tlscope serve` sends it: its ES modules bundled into one `app.js`.

The explorer is written as plain ES modules (no build step: edit a file, reload the page). Sent
that way, a page asks for each module (17 when measured, more since); on a loaded two-core
machine the browser's work for those requests, and the module graph's evaluation waiting on
the last of them, was most of the time before the first rows (bench/viewers.py: the 40k-event
case's median went from about 300 ms to about 225 ms in a freshly launched chromium). So serve
sends a build of it, made here from the same files each time they change (`built_explorer()`
compares their sizes and modification times on every call, so a developer's edit shows on the
next reload):

* `app.js`: the bundle (viewers/bundle.py) of app.js and every module it imports;
* `index.html`: the page without its `<link rel="modulepreload">` hints (nothing left to preload);
* every other file of the explorer that is not one of the bundled modules, as it is
  (`prefetch.js`, `explorer.css`).

`tlscope pack` inlines the same bundle and stylesheet into one HTML file (`packed_page`).
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from tlscope.format.errors import TlscopeError
from tlscope.viewers import EXPLORER, LIB
from tlscope.viewers.bundle import BundleError, bundle, modules

STYLESHEET = '<link rel="stylesheet" href="explorer.css">'
MODULE = '<script type="module" src="app.js"></script>'
PREFETCH = '<script src="prefetch.js"></script>'
_PRELOAD = re.compile(r'[ \t]*<link rel="modulepreload"[^>]*>\n')
_PRELOAD_NOTE = re.compile(r"[ \t]*<!--[^>]*-->\n(?=[ \t]*<link rel=\"modulepreload\")")


class BuildError(TlscopeError, ValueError):
    """The explorer's page or modules are not in the shape the build expects."""


def without_preloads(page: str) -> str:
    """`page` without its modulepreload links (and the comment just above them)."""
    return _PRELOAD.sub("", _PRELOAD_NOTE.sub("", page))


def _checked_page(page: str) -> str:
    for tag in (STYLESHEET, MODULE, PREFETCH):
        if tag not in page:
            raise BuildError(f"the explorer's index.html no longer has {tag}")
    return page


def packed_page(pack_json: str) -> str:
    """The explorer as one page for file:// (`tlscope pack`): stylesheet and modules inlined,
    `pack_json` (already escaped for a script element) as its data, no prefetch (nothing to ask)."""
    page = _checked_page((EXPLORER / "index.html").read_text(encoding="utf-8"))
    style = (EXPLORER / "explorer.css").read_text(encoding="utf-8").replace("</", "<\\/")
    page = without_preloads(page).replace(STYLESHEET, f"<style>\n{style}</style>").replace(PREFETCH + "\n", "")
    data = f'<script type="application/json" id="tlscope-pack">{pack_json}</script>'
    return page.replace(MODULE, f'{data}\n<script type="module">\n{_bundled()}</script>')


def _bundled() -> str:
    try:
        return bundle(EXPLORER / "app.js")
    except BundleError as err:
        raise BuildError(str(err)) from None


def build_explorer(dest: Path) -> None:
    """Write the served explorer into `dest` (a new folder; its parent must exist). Whole or
    nothing: it is made beside `dest` and renamed into place."""
    page = without_preloads(_checked_page((EXPLORER / "index.html").read_text(encoding="utf-8")))
    script = _bundled()
    bundled = set(modules(EXPLORER / "app.js"))
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        for path in sorted(EXPLORER.iterdir()):
            if path.is_file() and path.resolve() not in bundled and path.name != "index.html":
                shutil.copyfile(path, work / path.name)
        (work / "index.html").write_text(page, encoding="utf-8")
        (work / "app.js").write_text(script, encoding="utf-8")
        work.rename(dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _stamp(folders: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
    """What changes when a source of the build does: each file's path, size and mtime."""
    out = []
    for folder in folders:
        for path in sorted(folder.iterdir()):
            if path.is_file():
                st = path.stat()
                out.append((str(path), st.st_size, st.st_mtime_ns))
    return tuple(out)


class _Builds:
    """The current build in a temporary folder of this process (removed at exit), remade when a
    source changes. A failed build leaves the last good one in use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.root: Path | None = None
        self.stamp: tuple[tuple[str, int, int], ...] = ()
        self.current: Path | None = None
        self.count = 0

    def get(self) -> Path:
        with self.lock:
            stamp = _stamp((EXPLORER, LIB))
            if self.current is not None and stamp == self.stamp:
                return self.current
            if self.root is None:
                self.root = Path(tempfile.mkdtemp(prefix="tlscope-explorer-"))
                atexit.register(shutil.rmtree, self.root, True)
            self.count += 1
            dest = self.root / f"build-{self.count}"
            build_explorer(dest)
            # The build before last goes: a response may still be reading the last one's files.
            if self.count > 2:
                shutil.rmtree(self.root / f"build-{self.count - 2}", ignore_errors=True)
            self.current, self.stamp = dest, stamp
            return dest


_BUILDS = _Builds()


def built_explorer() -> Path:
    """The folder of the explorer's current build (see the module doc). Raises BuildError or
    OSError when it cannot be made."""
    return _BUILDS.get()
