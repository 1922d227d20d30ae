"""The real report in headless Chromium: expand a trie node, follow a compile id to its pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CHROMIUM_ARGS, chromium_or_skip

from tlscope.cli import main as tlscope_main


def test_report_in_chromium(tmp_path: Path, tlparse_traces: Path) -> None:
    chromium = chromium_or_skip()
    sync_api = pytest.importorskip("playwright.sync_api")
    out = tmp_path / "out"
    assert tlscope_main([str(tlparse_traces / "inputs" / "simple.log"), "-o", str(out), "--no-browser"]) == 0
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((out / "index.html").as_uri())
        page.click("details > summary")  # expand the stack trie
        assert page.locator(".stack-trie").first.is_visible()
        page.click("a[href='#[0/0]']")
        metrics = page.locator("a[href$='.html'][href*='compilation_metrics']").first
        metrics.click()
        page.wait_for_load_state("load")
        assert "Compilation Info for [0/0]" in page.content()
        page.go_back()
        page.locator("a[href*='inductor_output_code']").first.click()
        page.wait_for_load_state("load")
        assert page.locator("pre.highlight").count() == 1
        browser.close()
    assert errors == []
