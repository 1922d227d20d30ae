"""The explorer is findable from where people look (issue 20, finding 7): `tlscope LOG` says how
to open it (`tlscope serve`, `tlscope pack`), and the report's index.html (a log's, a job's
landing page and each rank's) says so too and, served by `tlscope serve`, links to the explorer on
that trace. Corpus traces made with torch; the browser part opens the link and the explorer it leads to.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, LiveServer, wait_hook

CORPUS = REPO / "corpus" / "traces"


@pytest.fixture(scope="module")
def outs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tlscope.cli import main as tlscope_main

    root = tmp_path_factory.mktemp("findable")
    for name in ("recompiles", "ranks_diverge_2"):
        assert tlscope_main([str(CORPUS / name), "-o", str(root / name), "--no-browser"]) == 0
    return {"single": root / "recompiles", "job": root / "ranks_diverge_2"}


@pytest.mark.parametrize("corpus", ["recompiles", "ranks_diverge_2"])
def test_parse_says_how_to_open_the_explorer(corpus: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tlscope.cli import main as tlscope_main

    out = tmp_path / "out dir"  # a space: the commands printed are quoted for the shell
    assert tlscope_main([str(CORPUS / corpus), "-o", str(out), "--no-browser"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (
        f"Explore it: tlscope serve '{out}' (prints the explorer's link), "
        f"or tlscope pack '{out}' -o trace.html (one file to open or share)."
    )


def test_every_index_names_the_explorer(outs: dict[str, Path]) -> None:
    pages = [outs["single"] / "index.html", outs["job"] / "index.html", outs["job"] / "rank_0" / "index.html"]
    for page in pages:
        html = page.read_text()
        assert html.count('class="explorer-note"') == 1, page
        assert "<code>tlscope serve FOLDER</code>" in html and "<code>tlscope pack FOLDER -o trace.html</code>" in html


def test_served_index_links_to_the_explorer(browser: Any, outs: dict[str, Path], tmp_path: Path) -> None:
    """Under tlscope serve the link appears and opens the explorer on that trace (job or log);
    opened from disk, no link (no explorer beside it), the commands only."""
    server = LiveServer([str(outs["single"]), str(outs["job"])], tmp_path)
    try:
        with urllib.request.urlopen(f"{server.url}/api/traces", timeout=60) as response:
            traces = {t["id"].split("-")[0]: t["url"] for t in json.load(response)}
        for name, start in (("recompiles", "index.html"), ("ranks_diverge_2", "rank_1/index.html")):
            base = next(u for i, u in traces.items() if name.startswith(i))
            page = browser.new_page()
            page.goto(f"{server.url}{base}{start}")
            link = page.locator("#open-explorer")
            assert link.is_visible()
            assert link.get_attribute("href") == f"/viewers/explorer/?trace={base.replace('/', '%2F')}"
            link.click()
            h = wait_hook(page, lambda h: h.get("loaded") is True)
            assert h["total"] > 0 and h["compileIds"]
            page.close()
    finally:
        server.close()
    page = browser.new_page()
    page.goto((outs["single"] / "index.html").as_uri())
    assert page.locator(".explorer-note").is_visible() and page.locator("#open-explorer").is_hidden()
    page.close()
