"""The JS client's unit tests (tests/js/*.test.mjs) under node's test runner, on real corpus outputs too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO


def test_js_client_unit_tests(viewer_traces: dict[str, Path], timeline_cases: list[dict[str, str]]) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    env = {
        **os.environ,
        "TLSCOPE_JS_TRACES": json.dumps({k: str(v) for k, v in viewer_traces.items()}),
        "TLSCOPE_TIMELINE_CASES": json.dumps(timeline_cases),
    }
    run = subprocess.run(
        [node, "--test", "--test-reporter=tap", *sorted(str(p) for p in (REPO / "tests" / "js").glob("*.test.mjs"))],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout
    assert "# skipped 0" in run.stdout  # the real-trace test ran
