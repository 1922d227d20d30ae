"""CORS as a browser sees it: a page on another loopback origin (another port) fetches a trace from
`tlscope serve` in Debian's chromium. It gets the bytes when its origin is on the allowlist, and
nothing when it is not, for a simple GET and for a request that needs a preflight."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import LiveServer, StaticSite, wait_hook

PAGE = '<!doctype html><title>elsewhere</title><script src="fetch.js"></script>'
#: Fetches ?target= (with a header that needs a preflight when ?preflight=1); the outcome in window.__tlscope.
FETCH_JS = """
window.__tlscope = { ready: false };
const params = new URL(location.href).searchParams;
const headers = params.get('preflight') ? { 'If-None-Match': '"nothing"' } : {};
fetch(params.get('target'), { headers }).then(
  async (r) => {
    const bytes = (await r.arrayBuffer()).byteLength;
    window.__tlscope = { ready: true, ok: true, status: r.status, bytes };
  },
  (err) => { window.__tlscope = { ready: true, ok: false, failure: String(err) }; },
);
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StaticSite, StaticSite]]:
    folder = tmp_path_factory.mktemp("elsewhere")
    (folder / "index.html").write_text(PAGE)
    (folder / "fetch.js").write_text(FETCH_JS)
    allowed, other = StaticSite({"/page": folder}), StaticSite({"/page": folder})
    yield allowed, other
    allowed.close()
    other.close()


@pytest.fixture(scope="module")
def server(
    pages: tuple[StaticSite, StaticSite], viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    live = LiveServer([str(viewer_traces["single"])], tmp_path_factory.mktemp("cors"), allow_origins=[pages[0].url])
    yield live
    live.close()


def outcome(browser: Any, page_site: StaticSite, target: str, preflight: bool) -> dict[str, Any]:
    page = browser.new_page()
    page.goto(f"{page_site.url}/page/index.html?target={target}" + ("&preflight=1" if preflight else ""))
    result = wait_hook(page, lambda h: h.get("ready") is True)
    page.close()
    return result


@pytest.mark.parametrize("preflight", [False, True])
def test_allowed_origin_reads_and_others_do_not(
    browser: Any,
    pages: tuple[StaticSite, StaticSite],
    server: LiveServer,
    viewer_traces: dict[str, Path],
    preflight: bool,
) -> None:
    allowed, other = pages
    target = f"{server.url}{server.trace_url(viewer_traces['single'])}raw.jsonl"
    size = (viewer_traces["single"] / "raw.jsonl").stat().st_size
    got = outcome(browser, allowed, target, preflight)
    assert got["ok"] is True and got["status"] == 200 and got["bytes"] == size, got
    refused = outcome(browser, other, target, preflight)
    assert refused["ok"] is False and "Failed to fetch" in refused["failure"], refused
    listing = outcome(browser, other, f"{server.url}/api/traces", preflight)
    assert listing["ok"] is False
