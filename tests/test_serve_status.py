"""`GET /api/traces/{id}/status` (docs/SERVER.md): the trace at once, its parse started when it
had not, with the progress to poll and, once ready, whether it is a job's folder; and
`/favicon.ico`, which every page a browser opens asks for (issue 20, findings 7 and 8)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import CORPUS, LiveServer

RAW_LOG = next((CORPUS / "graph_breaks").glob("*.log.gz"))
JOB_LOGS = CORPUS / "ranks_diverge_2"


@pytest.fixture(scope="module")
def live(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(
        [str(viewer_traces["single"]), str(viewer_traces["multi"]), str(RAW_LOG), str(JOB_LOGS)],
        tmp_path_factory.mktemp("status"),
    )
    yield server
    server.close()


def _id(live: LiveServer, source: Path) -> str:
    wanted = str(source.resolve())
    return next(t.id for t in live.server.traces.by_id.values() if t.source == wanted)


def _poll(client: httpx.Client, trace_id: str) -> list[dict[str, Any]]:
    """Every answer until ready (each answered at once: the parse goes on meanwhile)."""
    seen = []
    end = time.monotonic() + 60
    while time.monotonic() < end:
        answer = client.get(f"/api/traces/{trace_id}/status")
        assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
        seen.append(answer.json())
        if seen[-1]["state"] in ("ready", "failed"):
            return seen
        time.sleep(0.02)
    pytest.fail(f"not ready: {seen[-1]}")


@pytest.mark.parametrize(("name", "multi"), [("single", False), ("multi", True)])
def test_an_output_folder_is_ready_with_its_layout(
    client: httpx.Client, live: LiveServer, viewer_traces: dict[str, Path], name: str, multi: bool
) -> None:
    status = client.get(f"/api/traces/{_id(live, viewer_traces[name])}/status").json()
    assert status["state"] == "ready" and status["summary"]["multi_rank"] is multi


def test_a_raw_log_starts_parsing_on_the_first_status_and_ends_ready(client: httpx.Client, live: LiveServer) -> None:
    trace_id = _id(live, RAW_LOG)
    listed = {t["id"]: t for t in client.get("/api/traces").json()}
    assert listed[trace_id]["state"] == "pending"  # the listing starts nothing
    seen = _poll(client, trace_id)
    assert seen[0]["state"] in ("parsing", "pending", "ready")
    assert seen[-1]["state"] == "ready" and seen[-1]["summary"]["multi_rank"] is False
    assert seen[-1]["summary"]["events"] > 0
    trace = live.server.traces.by_id[trace_id]
    assert trace.local is not None and (trace.local / "manifest.json").is_file()  # parsed, by the status alone


def test_a_jobs_logs_say_how_many_ranks_and_end_a_multi_rank_folder(client: httpx.Client, live: LiveServer) -> None:
    trace_id = _id(live, JOB_LOGS)
    seen: list[dict[str, int]] = []
    live.server.traces.on_progress = lambda t: seen.append(dict(t.progress)) if t.id == trace_id else None
    try:
        final = _poll(client, trace_id)[-1]
    finally:
        live.server.traces.on_progress = None
    assert final["state"] == "ready" and final["summary"]["multi_rank"] is True
    assert seen[0] == {"ranks_done": 0, "ranks_total": 2}  # before any rank finished
    assert [p["ranks_done"] for p in seen] == [0, 1, 2] and {p["ranks_total"] for p in seen} == {2}


def test_an_unknown_trace_is_404(client: httpx.Client) -> None:
    assert client.get("/api/traces/nope-00000000/status").status_code == 404


def test_the_icon_every_page_asks_for(client: httpx.Client) -> None:
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert icon.content.startswith(b"<svg")
    # The explorer carries its own inline (packed files have no server), so it asks for none.
    page = client.get("/viewers/explorer/").text
    assert '<link rel="icon" href="data:image/svg+xml,' in page


def test_ready_is_said_with_its_summary_when_the_parse_ends_during_the_status(tmp_path: Path) -> None:
    """The status asks for the summary as a task of its own (asyncio.wait_for); when the parse ended
    between that task's look at the trace (still parsing: no summary) and the answer, the answer
    said "ready" with a null summary (seen once in a full test run), and the explorer reads the
    summary to know which index files the folder has. Here the summary's first look is held until
    the parse has ended, every time: the answer must still carry the summary."""
    import asyncio

    log = next((CORPUS / "simple").glob("*.log.gz"))
    server = LiveServer([str(log)], tmp_path)
    traces = server.server.traces
    real = traces.summary

    async def late(trace: Any) -> dict[str, Any] | None:
        looked_ready = trace.state == "ready"  # what the real one looks at first
        if trace.ready_task is not None:
            await asyncio.shield(trace.ready_task)  # ...and the parse ends meanwhile
        return await real(trace) if looked_ready else trace.summary

    traces.summary = late  # type: ignore[method-assign]
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            (trace_id,) = server.trace_ids()
            status = client.get(f"/api/traces/{trace_id}/status").json()
            assert status["state"] == "ready"
            assert status["summary"] is not None and status["summary"]["multi_rank"] is False
    finally:
        server.close()
