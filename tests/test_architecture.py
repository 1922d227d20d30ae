"""docs/ARCHITECTURE.md stays true: every path it names exists (a moved folder fails here)."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import REPO

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
