"""Browser test of this viewer: `tlscope serve` a real corpus trace with it, open it in headless chromium.

Needs tlscope (with its `serve` command), pytest, Playwright for Python and a chromium
(`apt-get install chromium`; set CHROMIUM to another path). Playwright's own browser
download is not used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parents[1]
NAME = HERE.name
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`tlscope serve <corpus trace> --viewer .` on a free port; yields its base URL."""
    corpus = [sys.executable, "-m", "tlscope", "corpus", "path", "simple"]
    trace = subprocess.run(corpus, capture_output=True, text=True)
    if trace.returncode != 0:
        pytest.skip(f"no tlscope corpus: {trace.stderr.strip()}")
    command = [sys.executable, "-m", "tlscope", "serve", trace.stdout.strip(), "--viewer", str(HERE)]
    proc = subprocess.Popen([*command, "--port", "0", "--no-browser"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:  # serve prints the address it listens on
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                url = found.group(0)
                break
        assert url, "tlscope serve did not print its address"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def wait_hook(page: Any, test: Any, timeout: float = 30.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    value: dict[str, Any] = {}
    while time.monotonic() < end:
        value = page.evaluate("JSON.parse(JSON.stringify(window.__tlscope || {}))")
        assert not value.get("error"), value["error"]
        if test(value):
            return value
        time.sleep(0.05)
    raise AssertionError(f"window.__tlscope never got there: {value}")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def test_viewer_shows_the_trace(server: str) -> None:
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if not chromium:
        pytest.skip("no chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    trace = get_json(f"{server}/api/traces")[0]
    viewer_url = trace["viewer_url"]  # serve's link opens the viewer given with --viewer: this one
    assert viewer_url.startswith(f"/viewers/{NAME}/?trace=")
    manifest = get_json(server + trace["url"] + "manifest.json")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page()
        page.goto(server + viewer_url)
        hook = wait_hook(page, lambda h: h.get("loaded") is True)
        assert hook["total"] == manifest["raw_jsonl_events"]
        assert hook["compileIds"] == [c["id"] for c in manifest["compile_ids"]]
        # Clicking a compile id filters the list and keeps the filter in the URL.
        page.locator("#compile-ids li", has_text="[0/0]").first.click()
        hook = wait_hook(page, lambda h: h.get("filter") == "[0/0]")
        expected = next(c["events"] for c in manifest["compile_ids"] if c["id"] == "[0/0]")
        assert 0 < hook["total"] <= expected
        assert "cid=%5B0%2F0%5D" in page.url
        browser.close()
