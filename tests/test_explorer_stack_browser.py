"""The explorer's Stack tab on a graph-break event shows the user's own line first, where tracing
stopped when that was library code, and the full stack one click away with the user's frame
marked (issue 20, finding 2's stack views). The frames and which one is the user's are
compiles.json's (Python's rule): served with other --user-code patterns, the page marks other
frames, so it judges no file itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import CORPUS, LiveServer, open_explorer, wait_hook

from tlscope.serve.traces import ServedTrace

CASES = {
    # The corpus's graph-break scenario: every break in the script itself.
    "graph_breaks": (next((CORPUS / "graph_breaks").glob("*.log.gz")), ()),
    # A DDP rank: breaks stop in contextlib.py and distributed.py, called from _ranks.py.
    "ddp": (next((CORPUS / "ranks_diverge_2").glob("*rank_0_*.log.gz")), ()),
    # The same rank with those library files named the user's code.
    "ddp_patterns": (
        next((CORPUS / "ranks_diverge_2").glob("*rank_0_*.log.gz")),
        ("*/contextlib.py", "*/distributed.py"),
    ),
}


#: The logs with a hinted break among their first four (torch's Hint: lines).
CASES_HINTED = {str(CASES["graph_breaks"][0].resolve()): True}


@pytest.fixture
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LiveServer, ServedTrace]]:
    log, patterns = CASES[request.param]
    live = LiveServer([str(log)], tmp_path)
    live.server.traces.user_code = patterns
    (trace,) = live.server.traces.by_id.values()
    yield live, trace
    live.close()


def _place(frame: dict[str, Any]) -> str:
    return f"{frame['file'].rsplit('/', 1)[-1]}:{frame['line']} in {frame['name']}"


@pytest.mark.parametrize("served", list(CASES), indirect=True)
def test_a_break_events_stack_tab_shows_the_users_line_and_the_full_stack(
    browser: Any, served: tuple[LiveServer, ServedTrace]
) -> None:
    live, trace = served
    url = f"{live.url}/viewers/explorer/?trace={quote(trace.url(), safe='')}"
    assert trace.local is None  # parsed when the page asks
    checked = hinted = fixed = 0
    for row in range(4):
        page = open_explorer(browser, url + f"#kind=artifact&q=dynamo_graph_break_reason&tab=stack&row={row}")
        assert trace.local is not None
        compiles = json.loads((trace.local / "compiles.json").read_text())["compiles"]
        breaks = sorted((b for c in compiles for b in c["graph_breaks"]), key=lambda b: b["event"]["log_line"])
        if row >= len(breaks):
            page.close()
            break
        gb = breaks[row]
        box = page.locator(".attributed")
        box.wait_for()
        wait_hook(page, lambda h, line=gb["event"]["log_line"]: h.get("selected", {}).get("log_line") == line)
        assert gb["reason"] in box.locator(".attributed-head").inner_text()
        assert box.locator(".attributed-frame.mine .where").inner_text() == _place(gb["user_frame"])
        stopped = box.locator(".attributed-frame.stopped .where")
        if gb["stopped_at"]:
            assert stopped.inner_text() == _place(gb["stopped_at"])
        else:
            assert stopped.count() == 0
        # torch's own hints and page, beside the break they belong to.
        assert box.locator(".attributed-hint").all_inner_texts() == [f"torch's hint: {h}" for h in gb["hints"]]
        docs = box.locator("a.attributed-docs")
        assert (docs.get_attribute("href") if docs.count() else None) == gb["docs_url"]
        hinted += bool(gb["hints"])
        # tlscope's fix (format 1.50), before torch's hints: graph_breaks' print.
        fix = gb.get("fix")
        assert box.locator(".cp-fix .cp-fix-code").all_inner_texts() == ([fix["code"]] if fix else [])
        fixed += fix is not None
        # The full stack, one click away: every frame, the user's marked.
        assert box.locator("table.attributed-stack").count() == 0
        box.locator("button.full-stack").click()
        rows = box.locator("table.attributed-stack tr")
        assert rows.count() == len(gb["stack"])
        mine = box.locator("table.attributed-stack tr.mine td:first-child").all_inner_texts()
        user = gb["user_frame"]
        assert mine == [f"{user['file']}:{user['line']}"], mine
        assert page.errors == []
        page.close()
        checked += 1
    assert checked
    if CASES_HINTED.get(str(trace.source)):
        assert hinted  # graph_breaks' Tensor.item() break: capture_scalar_outputs
        assert fixed  # graph_breaks' print of a str: reorderable_logging_functions


def test_a_failed_compiles_metrics_show_the_users_line_and_the_compiles_stack(browser: Any, tmp_path: Path) -> None:
    """corpus compile_failure's [0/0]: its first compilation_metrics record failed
    (BackendCompilerFailed); the stack is the compile's, the user's frame compiles.json's."""
    live = LiveServer([str(next((CORPUS / "compile_failure").glob("*.log*")))], tmp_path)
    try:
        (trace,) = live.server.traces.by_id.values()
        url = f"{live.url}/viewers/explorer/?trace={quote(trace.url(), safe='')}"
        page = open_explorer(browser, url + "#kind=compilation_metrics&tab=stack&row=0")
        assert trace.local is not None
        compiles = json.loads((trace.local / "compiles.json").read_text())["compiles"]
        entry = next(c for c in compiles if any(r["status"] == "failed" for r in c["metrics_records"]))
        failed = next(r for r in entry["metrics_records"] if r["status"] == "failed")
        wait_hook(page, lambda h: h.get("selected", {}).get("log_line") == failed["log_line"])
        box = page.locator(".attributed")
        box.wait_for()
        head = box.locator(".attributed-head").inner_text()
        assert head.startswith(f"Compile failure in {entry['id']}: {failed['failure']['type']}"), head
        user = failed["failure"]["user_frame"] or entry["user_frame"]
        assert box.locator(".attributed-frame.mine .where").inner_text() == _place(user)
        box.locator("button.full-stack").click()
        assert box.locator("table.attributed-stack tr").count() == len(entry["stack"])
        assert box.locator("table.attributed-stack tr.mine").count() == 1
        # The good compile's record of the same id is no failure: its Stack tab has no attribution.
        assert page.errors == []
        page.close()
        page = open_explorer(browser, url + "#kind=compilation_metrics&tab=stack&row=1")
        wait_hook(page, lambda h: h.get("selected", {}).get("row") == 1)
        page.locator("#detail-body > div").wait_for()
        assert page.locator(".attributed").count() == 0
        assert page.errors == []
        page.close()
    finally:
        live.close()


def test_a_failures_hints_and_page_are_beside_it(browser: Any, tmp_path: Path) -> None:
    """corpus failures' [0/0]: an Unsupported failure whose payload carries torch's hints and
    graph-break page (compiles.json failure.hints, .docs_url), shown in its Stack tab."""
    live = LiveServer([str(next((CORPUS / "failures").glob("*.log*")))], tmp_path)
    try:
        (trace,) = live.server.traces.by_id.values()
        url = f"{live.url}/viewers/explorer/?trace={quote(trace.url(), safe='')}"
        page = open_explorer(browser, url + "#kind=compilation_metrics&tab=stack&row=0")
        assert trace.local is not None
        compiles = json.loads((trace.local / "compiles.json").read_text())["compiles"]
        records = sorted((r for c in compiles for r in c["metrics_records"]), key=lambda r: r["log_line"])
        failure = records[0]["failure"]
        assert failure is not None and failure["hints"] and failure["docs_url"]
        wait_hook(page, lambda h: h.get("selected", {}).get("log_line") == records[0]["log_line"])
        box = page.locator(".attributed")
        box.wait_for()
        assert box.locator(".attributed-hint").all_inner_texts() == [f"torch's hint: {h}" for h in failure["hints"]]
        assert box.locator("a.attributed-docs").get_attribute("href") == failure["docs_url"]
        assert page.errors == []
        page.close()
    finally:
        live.close()
