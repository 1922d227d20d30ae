"""What tests share, imported one way: `from helpers import ...` (pytest puts tests/ on sys.path).

Fixtures live in conftest.py and use these; test modules never import conftest or each other.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
#: CI clones the repo with ../shared beside it; tests that need it skip when it is absent.
#: A worktree elsewhere points at it with TLSCOPE_SHARED.
SHARED = Path(os.environ.get("TLSCOPE_SHARED", REPO.parent / "shared"))
TLPARSE_TRACES = SHARED / "traces" / "tlparse"
TLPARSE_VERSION = "0.4.3"
CORPUS = REPO / "corpus" / "traces"


def require_shared() -> Path:
    """../shared/traces/tlparse, or skip the calling test with the reason."""
    if not TLPARSE_TRACES.is_dir():
        pytest.skip(f"shared traces not found at {TLPARSE_TRACES} (clone with ../shared beside the repo)")
    return TLPARSE_TRACES


def all_traces() -> list[str]:
    """Every file under the tlparse traces folder (empty ones too), or one id that skips."""
    if not TLPARSE_TRACES.is_dir():
        return ["<shared traces absent>"]
    return sorted(
        p.relative_to(TLPARSE_TRACES).as_posix()
        for p in TLPARSE_TRACES.rglob("*")
        if p.is_file() and p.name != "LICENSE"
    )


def trace_path(rel: str) -> Path:
    return require_shared() / rel


# -- an independent view of the log format (shares no code with tlscope's reader) -------------

#: Envelope fields that are context, not the event (from PyTorch's structured logging and
#: docs/FORMAT.md); written out here rather than imported so counts stay independent.
CONTEXT = {
    "rank",
    "compiled_autograd_id",
    "frame_id",
    "frame_compile_id",
    "attempt",
    "has_payload",
    "stack",
    "severity",
    "timestamp",
    "pathname",
    "thread",
}
GLOG = re.compile(rb"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^:]+:\d+\] ")


# -- the browser tests ---------------------------------------------------------------------

#: As the machine notes say: headless, no sandbox as root, and no background connections
#: (the closed network refuses them, many at a time).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium_or_skip() -> str:
    """The chromium executable; skip the test (with the reason) when it or Playwright is missing."""
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright for Python is not installed")
    return found


# -- scripts outside the package -------------------------------------------------------------


def load_script(folder: str, name: str) -> ModuleType:
    """Import <repo>/<folder>/<name>.py under a unique module name (bench/, tools/ are scripts)."""
    path = REPO / folder / f"{name}.py"
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # for the script's own sibling imports
    spec = importlib.util.spec_from_file_location(f"tlscope_{folder}_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def load_tool(name: str) -> ModuleType:
    """tools/<name>.py as a module."""
    return load_script("tools", name)
