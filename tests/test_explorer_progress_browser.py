"""The explorer shows a served log's parse progress while the server parses it (issue 20, finding
8): before, "Opening…" over an empty table for 13 s on a 55 MB log. The server's real parse runs
(its child's real progress lines), then is held at its end by the test, so the page is seen
showing the progress deterministically (no sleep to race); released, the page opens the trace."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import CORPUS, LiveServer, wait_hook

from tlscope.serve.traces import ServedTrace

CASES = {
    "log": (next((CORPUS / "graph_breaks").glob("*.log.gz")), r"Log read \(\d+\.\d MiB\)"),
    "job": (CORPUS / "ranks_diverge_2", r"Parsing the job: 2 of 2 rank\(s\) done"),
}


@pytest.fixture
def held(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LiveServer, threading.Event]]:
    """A server whose parses run, then wait for the test's gate before the trace is ready."""
    live = LiveServer([str(CASES[request.param][0])], tmp_path)
    traces = live.server.traces
    gate = threading.Event()
    real = traces._parse

    async def parse_then_wait(trace: ServedTrace, src: Path, out: Path) -> None:
        await real(trace, src, out)
        while not gate.is_set():  # the server's loop keeps answering meanwhile
            await asyncio.sleep(0.01)

    traces._parse = parse_then_wait  # type: ignore[method-assign]
    yield live, gate
    gate.set()
    live.close()


@pytest.mark.parametrize("held", list(CASES), indirect=True)
def test_the_page_shows_the_parse_progress_until_the_trace_is_ready(
    browser: Any, held: tuple[LiveServer, threading.Event], request: pytest.FixtureRequest
) -> None:
    live, gate = held
    (trace,) = live.server.traces.by_id.values()
    expected = CASES[request.node.callspec.params["held"]][1]
    page = browser.new_page()
    page.goto(f"{live.url}/viewers/explorer/?trace={quote(trace.url(), safe='')}")
    hook = wait_hook(page, lambda h: bool(h.get("preparingSteps")) and h["preparing"]["fraction"] == 1, timeout=60)
    assert trace.state == "parsing"  # still held: what the page shows is the parse's progress
    box = page.locator("#preparing")
    assert box.is_visible()
    text = box.locator("p").inner_text()
    assert re.fullmatch(expected + ".*", text), text
    assert page.locator("#preparing progress").evaluate("p => p.value") == 1
    assert page.locator("#status").inner_text() == text
    progress = hook["preparing"]["progress"]
    assert progress == trace.progress  # the server's figures, as served
    gate.set()
    loaded = wait_hook(page, lambda h: h.get("loaded") is True, timeout=60)
    assert loaded["total"] > 0
    assert page.locator("#preparing").count() == 0  # gone once the trace is open
    page.close()
