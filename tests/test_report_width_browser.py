"""No report page runs off the right edge of a 1280 px window (issue 20, finding 9: payload lines
did). Every HTML page of the report of two corpus traces with generated code (a break per stage;
recompiles with dynamic shapes, whose kernels' signatures are the longest lines) is opened in
chromium and its scrollWidth measured against the viewport."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.cli import main as tlscope_main

WIDTH = 1280


@pytest.mark.parametrize("name", ["graph_breaks", "recompiles_dynamic"])
def test_every_report_page_fits_the_window(browser: Any, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    assert tlscope_main([str(CORPUS / name), "-o", str(out), "--no-browser"]) == 0
    pages = sorted(out.rglob("*.html"))
    code_pages = [p for p in pages if p.name.startswith("inductor_output_code")]
    assert code_pages, "the trace has generated code pages"
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    wide = []
    longest = 0
    for html in pages:
        page.goto(html.as_uri())
        scroll, inner = page.evaluate("[document.scrollingElement.scrollWidth, innerWidth]")
        if scroll > inner:
            wide.append(f"{html.relative_to(out)}: {scroll} px")
        if html in code_pages:
            longest = max(longest, max(len(line) for line in html.read_text().splitlines()))
    page.close()
    assert wide == []
    # The lines that ran off before are still there, whole, and still one line of the file each.
    assert longest > 400
