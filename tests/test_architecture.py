"""docs/ARCHITECTURE.md stays true: every path it names exists (a moved folder fails here), and
how often a log is read is what it says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, REPO

DOC = REPO / "docs" / "ARCHITECTURE.md"
PACKAGE = REPO / "src" / "tlscope"
#: A code span that names a file or folder: `src/tlscope/read/`, `pipeline/single.py`, `glog.py`.
_PATH = re.compile(r"`([\w./-]+(?:/|\.py|\.md))`")
_ROOTS = ("src/", "docs/", "tests/", "tools/", "bench/", "corpus/")


def named_paths() -> list[str]:
    return sorted(set(_PATH.findall(DOC.read_text(encoding="utf-8"))))


def resolve(name: str) -> Path | None:
    """Where a named path is: from the repository root, else in the package: from its top, or
    below a folder the text is about (`ranks/compare.py` in analyse/, a bare `glog.py` in read/)."""
    if name.startswith(_ROOTS):
        return REPO / name
    if (PACKAGE / name).exists():
        return PACKAGE / name
    return next(PACKAGE.rglob(name.rstrip("/")), None)


def test_every_path_the_map_names_exists() -> None:
    names = named_paths()
    assert len(names) > 30  # the map names its folders and modules
    missing = [n for n in names if (path := resolve(n)) is None or not path.exists()]
    assert missing == [], f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"


def test_the_map_names_every_folder_of_the_package() -> None:
    folders = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    text = DOC.read_text(encoding="utf-8")
    assert {f for f in folders if f"src/tlscope/{f}/" not in text} == set()


def _log_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths LogSource opens from now on (every read of a log's bytes goes through it)."""
    from tlscope.read import source

    opened: list[str] = []
    original = source.LogSource.__init__

    def counting(self: source.LogSource, path: Path, *args: Any, **kwargs: Any) -> None:
        opened.append(Path(path).name)
        original(self, path, *args, **kwargs)

    monkeypatch.setattr(source.LogSource, "__init__", counting)
    return opened


@pytest.mark.parametrize("report", [True, False])
def test_a_log_is_read_as_the_map_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report: bool) -> None:
    """Parsed once; the report's raw.log copy is the one other read (none without a report)."""
    from tlscope.pipeline.parse import parse

    log = next((CORPUS / "simple").glob("*.log.gz"))
    opened = _log_opens(monkeypatch)
    parse(log, tmp_path / "out", report=report)
    # The muxed-log sniff of a single file (its head), the parse, and the report's copy.
    assert opened == [log.name] * (3 if report else 2)


def test_a_muxed_log_is_read_twice_before_its_ranks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sniff (a head), the process -> rank map, then the split with that map: never a third pass."""
    from tlscope.pipeline.parse import parse

    log = next((CORPUS / "muxed").glob("*.log.gz"))
    opened = _log_opens(monkeypatch)
    parse(log, tmp_path / "out", jobs=1)
    assert opened.count(log.name) == 3
