"""No request of a normal page fails (issue 20, finding 7): every served page asked for a missing
/favicon.ico, and the explorer asked a single-rank trace for multi_rank_summary.json (and a job
for manifest.json) before knowing which it was. Every response of the explorer's usual pages is
recorded in chromium, for a single log's folder, a job's folder, a raw log and a job's logs
parsed by the server, the home page, and packed files; none may be 4xx/5xx or fail."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import CORPUS, LiveServer, StaticSite, loopback_host, wait_hook

from tlscope.cli import main as tlscope_main
from tlscope.viewers import EXPLORER, LIB


@pytest.fixture(scope="module")
def server(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    sources = [
        str(viewer_traces["single"]),
        str(viewer_traces["multi"]),
        str(next((CORPUS / "graph_breaks").glob("*.log.gz"))),
        str(CORPUS / "ranks_diverge_2"),
    ]
    live = LiveServer(sources, tmp_path_factory.mktemp("requests"))
    yield live
    live.close()


def _failures(browser: Any, url: str) -> tuple[list[str], dict[str, Any]]:
    """Open `url` in a fresh page until the explorer has loaded everything; every failed request."""
    page = browser.new_page()
    bad: list[str] = []
    page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("requestfailed", lambda r: bad.append(f"failed {r.url}: {r.failure}"))
    page.goto(url)
    hook = wait_hook(page, lambda h: h.get("loaded") is True, timeout=60)
    page.wait_for_load_state("networkidle")
    page.close()
    return bad, hook


@pytest.mark.parametrize("view", ["events", "recompiles", "breaks"])
@pytest.mark.parametrize("which", range(4))
def test_served_explorer_pages_make_no_failing_request(browser: Any, server: LiveServer, which: int, view: str) -> None:
    bad, hook = _failures(browser, _explorer(server, which, view))
    assert bad == []
    assert hook["total"] > 0


def test_the_home_page_and_the_report_pages_make_no_failing_request(browser: Any, server: LiveServer) -> None:
    """The home page, and each trace's report index (a job's: its landing page)."""
    reports = [f"{server.url}{t.url()}index.html" for t in server.server.traces.by_id.values()]
    for url in (f"{server.url}/", *reports):
        page = browser.new_page()
        bad: list[str] = []
        page.on("response", lambda r, bad=bad: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.close()
        assert bad == [], url


@pytest.mark.parametrize("name", ["single", "multi"])
def test_packed_pages_make_no_failing_request(
    browser: Any, viewer_traces: dict[str, Path], tmp_path: Path, name: str
) -> None:
    html = tmp_path / f"{name}.html"
    assert tlscope_main(["pack", str(viewer_traces[name]), "-o", str(html)]) == 0
    bad, hook = _failures(browser, html.as_uri())
    assert bad == []
    assert hook["total"] > 0


def test_a_single_logs_folder_on_a_static_server_asks_for_nothing_it_lacks(
    browser: Any, viewer_traces: dict[str, Path]
) -> None:
    """Without tlscope serve's status (a plain file server), the explorer asks for manifest.json
    and only without one for multi_rank_summary.json: a single log's folder, the usual one, gets
    no 404 (a job's folder there still answers one for manifest.json: nothing says beforehand)."""
    site = StaticSite({"/lib": LIB, "/viewers/explorer": EXPLORER, "/out/single": viewer_traces["single"]})
    try:
        bad, hook = _failures(browser, f"{site.url}/viewers/explorer/?trace=/out/single/")
    finally:
        site.close()
    assert bad == []
    assert hook["total"] > 0


@pytest.fixture(scope="module")
def remote(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The single log's folder and the job's folder in a file host (tests/filehost.py), one
    answering HEAD, one refusing it (`/nohead/`), given to the server as store URLs."""
    pytest.importorskip("aiohttp", reason="https:// stores need tlscope[remote] (the test extra)")
    from tlscope.serve.config import StoreConfig

    root = tmp_path_factory.mktemp("remote-host")
    for name in ("single", "multi"):
        shutil.copytree(viewer_traces[name], root / name)
    with loopback_host(Path(__file__).parent / "filehost.py", str(root)) as host:
        loopback = ["127.0.0.1/32"]
        stores = {
            "files": StoreConfig(url=f"{host}/", allow_networks=loopback),
            "nohead": StoreConfig(url=f"{host}/nohead/", allow_networks=loopback),
        }
        sources = [f"{host}/single/", f"{host}/nohead/multi/"]
        live = LiveServer(sources, tmp_path_factory.mktemp("remote"), stores=stores)
        yield live
        live.close()


@pytest.mark.parametrize("view", ["events", "breaks"])
@pytest.mark.parametrize("which", range(2))
def test_a_remote_folder_in_the_explorer_makes_no_failing_request(
    browser: Any, remote: LiveServer, server: LiveServer, which: int, view: str
) -> None:
    """The explorer on a folder streamed from a store (each file one GET to the store, a host
    refusing HEAD included: docs/SERVER.md) loads all of it, as the same folder served locally."""
    bad, hook = _failures(browser, _explorer(remote, which, view))
    assert bad == []
    _, local = _failures(browser, _explorer(server, which, view))
    assert hook["total"] == local["total"] > 0


def _explorer(live: LiveServer, which: int, view: str) -> str:
    trace = list(live.server.traces.by_id.values())[which]
    return f"{live.url}/viewers/explorer/?trace={quote(trace.url(), safe='')}&view={view}"
