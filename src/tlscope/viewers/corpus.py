"""The project's real traces (corpus/traces/), for any viewer's tests: where they are, what they are.

They ship in a companion package, `tlscope-corpus` (corpus/pyproject.toml; `pip install
./corpus` from a checkout), so the main wheel stays small. Looked up in order: the
TLSCOPE_CORPUS environment variable, the installed `tlscope_corpus` package, the checkout
an editable install runs from.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from tlscope.format.errors import TlscopeError
from tlscope.viewers import HERE


class CorpusMissing(TlscopeError, LookupError):
    """No corpus found anywhere."""


@dataclass(frozen=True)
class CorpusTrace:
    """One trace: a folder holding one log, or the rank logs of one job."""

    name: str
    path: Path
    logs: int
    size: int


def corpus_root() -> Path:
    """The folder of the corpus traces (each trace a subfolder of logs)."""
    env = os.environ.get("TLSCOPE_CORPUS")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("tlscope_corpus")
    if spec is not None and spec.origin is not None:
        installed = Path(spec.origin).parent / "traces"
        if installed.is_dir():
            return installed
    checkout = HERE.parents[2] / "corpus" / "traces"  # src/tlscope/viewers -> the repository
    if checkout.is_dir():
        return checkout
    raise CorpusMissing("the trace corpus is not installed: pip install tlscope-corpus (or ./corpus from a checkout)")


def traces(root: Path | None = None) -> list[CorpusTrace]:
    """Every trace of the corpus: each folder that directly holds logs, named by its relative path."""
    base = root or corpus_root()
    found: dict[Path, list[Path]] = {}
    for log in sorted(base.rglob("*.log*")):
        if log.is_file() and (log.name.endswith(".log") or log.name.endswith(".log.gz")):
            found.setdefault(log.parent, []).append(log)
    return [
        CorpusTrace(folder.relative_to(base).as_posix(), folder, len(logs), sum(p.stat().st_size for p in logs))
        for folder, logs in sorted(found.items())
    ]


def trace_path(name: str, root: Path | None = None) -> Path:
    """The folder of trace `name` (as `traces()` names it); KeyError when there is none."""
    for trace in traces(root):
        if trace.name == name:
            return trace.path
    raise KeyError(name)
