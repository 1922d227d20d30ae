"""Shared fixtures: the shared traces and the reference tlparse binary (helpers: helpers.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    CHROMIUM_ARGS,
    REPO,
    TLPARSE_VERSION,
    chromium_or_skip,
    require_shared,
    write_edge_timeline,
    write_packing_timeline,
)

# The tests that press Ctrl-C on a tlscope child (test_signals, test_messages, serve's and run's)
# play a terminal's foreground job, whose SIGINT is never ignored. A suite started where it is
# (a background job of a non-interactive shell, nohup) passes that ignore down to every child,
# across exec, and tlscope rightly keeps it: those children then ran to the end (exit 0 for 130)
# or served on. A handler here is reset to the default in each child on exec, as a terminal has it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def tlparse_traces() -> Path:
    """../shared/traces/tlparse, or skip."""
    return require_shared()


def _find_tlparse() -> Path | None:
    env = os.environ.get("TLPARSE_BIN")
    if env:
        return Path(env)
    found = shutil.which("tlparse")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def tlparse_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference tlparse 0.4.3: $TLPARSE_BIN, `tlparse` on PATH, or a venv made here.

    Making the venv needs PyPI; without it the parity tests skip with the reason.
    """
    found = _find_tlparse()
    if found is not None and found.exists():
        return found
    venv = REPO / ".venv-tlparse"
    binary = venv / "bin" / "tlparse"
    if not binary.exists():
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
            subprocess.run(
                [str(venv / "bin" / "pip"), "install", "-q", f"tlparse=={TLPARSE_VERSION}"],
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (subprocess.SubprocessError, OSError) as err:
            pytest.skip(f"reference tlparse {TLPARSE_VERSION} unavailable: {err}")
    return binary


@pytest.fixture(scope="module")
def client(live: Any) -> Iterator[Any]:
    """An httpx client of the module's `live` server (each serve test module starts its own, with
    the sources and stores it tests); a module may define its own `client` instead."""
    import httpx

    with httpx.Client(base_url=live.url, timeout=120) as c:
        yield c


@pytest.fixture(scope="session")
def viewer_traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Output folders of real corpus traces for the viewer tests: `single` (one log), `multi` (2 ranks),
    `breaks` (the same graph breaks hit under several compile ids)."""
    from tlscope.cli import main as tlscope_main

    root = tmp_path_factory.mktemp("viewer-traces")
    made = {
        "single": REPO / "corpus" / "traces" / "compile_failure",
        "multi": REPO / "corpus" / "traces" / "ranks_same_2",
        "breaks": REPO / "corpus" / "traces" / "graph_breaks_repeated",
    }
    for name, src in made.items():
        assert tlscope_main([str(src), "-o", str(root / name), "--no-browser"]) == 0
    return {name: root / name for name in made}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium driven by Playwright (skips when either is missing), for one test module.

    Module scope, not session: Playwright's sync API runs an event loop while it is open, and
    other modules start their own.
    """
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def timeline_cases(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    """Every corpus trace parsed (a folder of rank logs as a job), and for each timeline.bin in
    the outputs (a job's and each rank's) the events the Python decoder reads from it, as JSON:
    the conformance cases the JS decoder must read alike (tests/js/timeline.test.mjs)."""
    import msgspec

    from tlscope import timeline
    from tlscope.cli import main as tlscope_main

    root = tmp_path_factory.mktemp("timeline-cases")
    cases = []
    for trace, flags in _timeline_inputs():
        out = root / trace.relative_to(REPO / "corpus" / "traces").as_posix().replace("/", "-")
        assert tlscope_main([str(trace), "-o", str(out), "--no-browser", *flags]) == 0
        for path in sorted(out.rglob("timeline.bin")):
            expected = path.with_suffix(".expected.json")
            expected.write_bytes(msgspec.json.encode(timeline.read(path)))
            cases.append({"trace": out.name, "bin": str(path), "expected": str(expected)})
    made = [
        (root / "edge" / "timeline.bin", write_edge_timeline),
        (root / "packing" / "timeline.bin", write_packing_timeline),
    ]
    for path, write in made:
        path.parent.mkdir()
        write(path)
    # Files of layout version 1 (tlscope before format 1.16), which both decoders still read.
    for path in [*(p for p, _ in made), *sorted((REPO / "tests" / "conformance" / "timeline_v1").glob("*.bin"))]:
        expected = root / f"{path.parent.name}-{path.stem}.expected.json"
        expected.write_bytes(msgspec.json.encode(timeline.read(path)))
        cases.append({"trace": path.parent.name, "bin": str(path), "expected": str(expected)})
    return cases


def _timeline_inputs() -> list[tuple[Path, list[str]]]:
    """Each corpus log on its own, but a folder of rank logs as one job and the muxed log split."""
    found: list[tuple[Path, list[str]]] = []
    for log in sorted((REPO / "corpus" / "traces").rglob("*.log.gz")):
        if log.parent.name.startswith("ranks_"):
            if (log.parent, []) not in found:
                found.append((log.parent, []))
        else:
            found.append((log, ["--all-ranks-html"] if log.parent.name == "muxed" else []))
    return found


# -- the fast default run and the slow tests behind --run-slow (issue 20, finding 10) ---------------

#: Modules whose every test is slow: they start a store emulator (moto, the GCS emulator), fuzz,
#: run npm (the JS gates, the viewer templates' npm ci and builds) or parse jobs of many ranks.
SLOW_MODULES = {
    "test_serve_remote": "an S3-compatible store as a separate process",
    "test_serve_gcs": "a GCS emulator as a separate process",
    "test_serve_requests": "a file host and an S3-compatible store as separate processes",
    "test_serve_fuzz": "OpenAPI-driven fuzzing of the server",
    "test_fuzz": "coverage-guided fuzzing of the reader",
    "test_js_check": "npm ci and the JavaScript gates",
    "test_viewer_templates": "the viewer templates' npm ci, tests and builds",
    "test_scale": "jobs of many ranks",
    "test_dask": "a Dask cluster",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        help="also run the slow tests (browser, npm, store emulators, fuzzing, scale); .ci/run does",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: browser, npm, store-emulator, fuzzing or scale test (--run-slow)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow tests; skip them unless --run-slow (or `-m slow`, which asks for them)."""
    wanted = config.getoption("--run-slow") or "slow" in (config.getoption("-m") or "")
    skip = pytest.mark.skip(reason="slow test: run with --run-slow (.ci/run does)")
    for item in items:
        module = item.path.stem
        if module in SLOW_MODULES or "browser" in getattr(item, "fixturenames", ()) or "browser" in module:
            item.add_marker(pytest.mark.slow)
            if not wanted:
                item.add_marker(skip)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Say plainly what a default run left out, and how to run it."""
    from helpers import TLPARSE_TRACES

    skipped = terminalreporter.stats.get("skipped", [])
    slow = sum(1 for r in skipped if "run with --run-slow" in str(r.longrepr))
    shared = sum(1 for r in skipped if "shared traces not found" in str(r.longrepr))
    lines = []
    if slow:
        lines.append(f"{slow} slow tests not run (browser, npm, store emulators, fuzzing): add --run-slow")
    if shared:
        lines.append(
            f"{shared} tests skipped: tlparse's public traces are not at {TLPARSE_TRACES}; put the project's "
            "shared/ folder beside the checkout (../shared) or set TLSCOPE_SHARED to it"
        )
    if lines:
        terminalreporter.write_sep("-", "what this run left out")
        for line in lines:
            terminalreporter.write_line(line)
