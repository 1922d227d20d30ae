"""The explorer in headless Chromium on real corpus traces: load, filters, payloads, stacks, URL state, Perfetto.

Pages are served by tlscope serve in-process on port 0 (helpers.LiveServer) once it is on main,
until then by StaticSite (helpers.py) with the viewer CSP of docs/SERVER.md: either way the
explorer is shown to work under that CSP. The hook window.__tlscope (docs/VIEWERS.md) is read with
page.evaluate (the CSP forbids the eval that wait_for_function needs).
"""

from __future__ import annotations

import gzip
import json
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from helpers import StaticSite, compile_id_of, hook, key_of, manifest_ids, open_explorer, raw_events, wait_hook

from tlscope.commands import COMMANDS
from tlscope.viewers import EXPLORER, LIB


@dataclass
class Site:
    """Where the explorer and the viewer traces are served: `url`, and each trace's URL path."""

    url: str
    traces: dict[str, str]

    def explorer(self, name: str, more: str = "") -> str:
        """The explorer's page for trace `name`; `more` is appended (`&param=...`, `#state`)."""
        return f"{self.url}/viewers/explorer/?trace={quote(self.traces[name], safe='')}{more}"


@pytest.fixture(scope="module")
def site(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """tlscope serve in-process on port 0 once it is on main (issue 11); until then StaticSite,
    a plain file server with the same paths and the viewer CSP."""
    if "serve" in COMMANDS:
        from helpers import LiveServer

        server = LiveServer([str(f) for f in viewer_traces.values()], tmp_path_factory.mktemp("serve"))
        try:
            with urllib.request.urlopen(f"{server.url}/api/traces", timeout=60) as response:
                listing = json.load(response)
            ids = {t["id"]: t["url"] for t in listing}
            traces = {
                n: next(u for i, u in ids.items() if i.startswith(f"{f.name}-")) for n, f in viewer_traces.items()
            }
            yield Site(server.url, traces)
        finally:
            server.close()
        return
    mounts = {"/lib": LIB, "/viewers/explorer": EXPLORER}
    mounts.update({f"/traces/{name}": folder for name, folder in viewer_traces.items()})
    static = StaticSite(mounts)
    yield Site(static.url, {name: f"/traces/{name}/" for name in viewer_traces})
    static.close()


def compiles_statuses(folder: Path) -> dict[str, str]:
    """compile id -> status, from an output folder's compiles.json."""
    data = json.loads((folder / "compiles.json").read_text())
    return {entry["id"]: entry["status"] for entry in data["compiles"]}


def test_single_rank_filters_payload_stack(browser: Any, site: Site, viewer_traces: dict[str, Path]) -> None:
    folder = viewer_traces["single"]
    events = raw_events(folder)
    page = open_explorer(browser, site.explorer("single"))
    h = hook(page)
    assert h["total"] == len(events) and h["ready"] is True
    assert set(h["compileIds"]) == manifest_ids(folder)
    assert h["statuses"]["[0/0]"], "every compile id shows a status"
    # Statuses are compiles.json's (issue 12's), one for one.
    assert h["statuses"] == compiles_statuses(folder)
    # Filter by event key through the select: the table holds exactly those events.
    counts = Counter(key_of(e) for e in events)
    page.select_option("#f-kind", "compilation_metrics")
    h = wait_hook(page, lambda h: h["filter"]["kind"] == "compilation_metrics")
    assert h["total"] == counts["compilation_metrics"]
    assert page.locator("#table .row:visible").count() == counts["compilation_metrics"]
    # A compile id from the sidebar narrows it further.
    cid = "[1/0_1]"
    page.click(f"#cids [data-cid='{cid}']")
    h = wait_hook(page, lambda h: h["filter"]["cid"] == cid)
    assert h["total"] == 1
    # Text search (case-insensitive) over the raw lines, combined with nothing else.
    page.click("#f-clear")
    page.fill("#f-q", "GRAPH_BREAK")
    h = wait_hook(page, lambda h: h["filter"]["q"] == "GRAPH_BREAK")
    assert h["total"] == sum("graph_break" in json.dumps(e, separators=(",", ":")).lower() for e in events)
    assert h["total"] > 0
    page.close()


def test_trace_files_are_asked_for_once(browser: Any, site: Site) -> None:
    """prefetch.js asks for the index files and raw.jsonl while the modules load; the client
    takes those answers (no second request of any of them)."""
    page = browser.new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(f"{r.method} {r.url.rsplit('/', 1)[-1]}"))
    page.goto(site.explorer("single"))
    wait_hook(page, lambda h: h.get("loaded") is True)
    assert asked.count("GET prefetch.js") == 1
    # tlscope serve sends the explorer's modules bundled: two scripts, not one request per module
    # (viewers/build.py); prefetch.js is a classic script whose names stay in its block.
    if "serve" in COMMANDS:
        assert [a for a in asked if a.endswith(".js")] == ["GET prefetch.js", "GET app.js"], asked
    assert page.evaluate("() => [typeof prefetch, typeof INDEXES, typeof window.__tlscopePrefetch]") == [
        "undefined",
        "undefined",
        "object",
    ]
    for name in ("manifest.json", "compiles.json", "raw.jsonl"):
        assert [a for a in asked if a.endswith(f" {name}")] == [f"GET {name}"], asked
    # raw.jsonl is asked once the manifest is in, not before.
    assert asked.index("GET raw.jsonl") > asked.index("GET manifest.json")
    page.close()


def test_rows_change_their_text_in_place(browser: Any, site: Site) -> None:
    """Scrolling recycles rows and changes their cells' Text nodes in place: a new node (and
    layout object) per cell per frame was what Blink's heap held by the hundred MB at 1M events."""
    page = open_explorer(browser, site.explorer("single"))
    kept = "() => { window.__cell = document.querySelector(\"#table .row[data-row='0'] .c-k\").firstChild; }"
    page.evaluate(kept)
    table = page.locator("#table")
    for top, first in ((24, 1), (0, 0)):
        table.evaluate(f"el => {{ el.scrollTop = {top}; }}")
        wait_hook(page, lambda h, first=first: h["visibleRows"]["first"] == first)
    # The same row element shows row 0 again, through the very Text node it had.
    same = "() => document.querySelector(\"#table .row[data-row='0'] .c-k\").firstChild === window.__cell"
    assert page.evaluate(same) is True
    page.close()


def test_payload_is_fetched_and_highlighted(browser: Any, site: Site, viewer_traces: dict[str, Path]) -> None:
    folder = viewer_traces["single"]
    events = raw_events(folder)
    page = open_explorer(browser, site.explorer("single", "#kind=inductor_output_code"))
    page.locator("#table .row[data-row='0'] .c-k", has_text="inductor_output_code").click()
    h = wait_hook(page, lambda h: bool(h.get("payload")))
    first = next(e for e in events if key_of(e) == "inductor_output_code")
    text = (folder / first["payload_filename"]).read_text(encoding="utf-8")
    assert h["payload"]["language"] == "python"
    assert h["payload"]["lines"] == len(text.split("\n"))
    # Only the lines on screen are in the DOM, with highlighted tokens.
    shown = page.locator(".code-line:visible").count()
    assert 5 < shown < 100 < h["payload"]["lines"]
    assert page.locator(".code-line .kw").count() > 0
    assert page.locator(".code-line .src").first.text_content() == text.split("\n")[0]
    # The find box reaches lines that are not in the DOM.
    lines = text.split("\n")
    last_def = max(i for i, line in enumerate(lines) if "def " in line)
    page.fill(".find input", "def ")
    page.press(".find input", "Shift+Enter")  # from the first hit back to the last
    current = page.locator(".code-line.current")
    current.wait_for()
    assert current.locator(".ln").text_content() == str(last_def + 1)
    # The stack tab resolves file names through the string table (no bare indexes).
    page.select_option("#f-kind", "dynamo_start")
    wait_hook(page, lambda h: h["filter"]["kind"] == "dynamo_start")
    first_row = page.locator("#table .row[data-row='0']")
    first_row.locator(".c-k", has_text="dynamo_start").wait_for()  # redrawn with the new filter
    first_row.click()
    wait_hook(page, lambda h: h.get("selected", {}).get("key") == "dynamo_start")
    page.click(".tabs button[data-tab='stack']")
    cells = page.locator("table.frames td:first-child").all_text_contents()
    table = json.loads((folder / "raw.jsonl").read_text().splitlines()[0])["string_table"]
    start = next(e for e in events if key_of(e) == "dynamo_start")
    assert cells == [f"{table[f['filename']]}:{f['line']}" for f in start["dynamo_start"]["stack"]]
    # Report pages link into the trace folder.
    page.click(".tabs button[data-tab='links']")
    # (drawn once compile_directory.json, fetched when the tab opens, is in)
    page.locator(f"ul.links a[href$='{site.traces['single']}index.html']").wait_for(timeout=10_000)
    hrefs = page.locator("ul.links a").evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert all(h.startswith(f"{site.url}{site.traces['single']}") for h in hrefs)
    assert page.errors == []
    page.close()


def test_graph_breaks_view(browser: Any, site: Site, viewer_traces: dict[str, Path]) -> None:
    """compiles.json's distinct graph breaks: listed with reason, location, count and compile ids,
    each compile id leading to its dynamo_graph_break_reason event in the table, payload open."""
    folder = viewer_traces["breaks"]
    expected = json.loads((folder / "compiles.json").read_text())["graph_breaks"]
    assert len(expected) >= 2 and any(b["count"] > 1 for b in expected), "the corpus trace repeats its breaks"
    page = open_explorer(browser, site.explorer("breaks"))
    shown = hook(page)["graphBreaks"]
    assert [(b["reason"], b["file"], b["line"], b["count"], b["compileIds"]) for b in shown] == [
        (b["reason"], b["user_frame"]["file"], b["user_frame"]["line"], b["count"], b["compile_ids"]) for b in expected
    ]
    assert page.locator("#breaks").count() == 0  # the event table's view: no breaks drawn
    page.click("#view-breaks")  # the Graph breaks view, in the main area
    assert "view=breaks" in page.url and page.locator("#table").is_hidden()
    items = page.locator("#pane #breaks li.gb")
    assert items.count() == len(expected)
    first = items.nth(0)
    assert first.locator(".gb-reason").text_content() == expected[0]["reason"]
    assert first.locator(".gb-count").text_content() == f"\N{MULTIPLICATION SIGN}{expected[0]['count']}"
    frame = expected[0]["user_frame"]
    assert first.locator(".gb-loc").text_content() == f"{Path(frame['file']).name}:{frame['line']} in {frame['name']}"
    assert first.locator(".gb-code").text_content() == frame["code"]
    chips = first.locator(".gb-cid")
    assert chips.all_text_contents() == expected[0]["compile_ids"]
    # The last compile id of the most frequent break: the table shows that id's break events.
    cid = expected[0]["compile_ids"][-1]
    chips.nth(len(expected[0]["compile_ids"]) - 1).click()
    h = wait_hook(page, lambda h: h["filter"]["cid"] == cid and h.get("selected", {}).get("cid") == cid)
    want = [
        e for e in raw_events(folder)
        if key_of(e) == "artifact" and e["artifact"]["name"] == "dynamo_graph_break_reason"
        and compile_id_of(e) == cid
    ]  # fmt: skip
    assert h["filter"] == {"kind": "artifact", "cid": cid, "rank": None, "q": "dynamo_graph_break_reason"}
    assert h["total"] == len(want) >= 1
    assert h["selected"]["log_line"] == want[0]["log_line"]
    # Its payload (the reason and the user's traceback) is open in the detail pane.
    payload = (folder / want[0]["payload_filename"]).read_text(encoding="utf-8")
    wait_hook(page, lambda h: bool(h.get("payload")))
    assert page.locator(".code-line .src").first.text_content() == payload.split("\n")[0]
    assert page.locator("#f-kind").input_value() == "artifact"
    assert page.locator("#f-q").input_value() == "dynamo_graph_break_reason"
    assert page.errors == []
    page.close()


def test_url_state_round_trip(browser: Any, site: Site) -> None:
    page = open_explorer(browser, site.explorer("multi"))
    page.select_option("#f-rank", "1")
    wait_hook(page, lambda h: h["filter"]["rank"] == 1)
    page.select_option("#f-kind", "artifact")
    wait_hook(page, lambda h: h["filter"]["kind"] == "artifact")
    page.locator("#table .row").nth(2).click()
    page.click(".tabs button[data-tab='event']")
    before = wait_hook(page, lambda h: h.get("selected", {}).get("row") == 2)
    url = page.url
    assert "rank=1" in url and "kind=artifact" in url and "row=2" in url and "tab=event" in url
    again = open_explorer(browser, url)
    after = wait_hook(again, lambda h: h.get("selected", {}).get("row") == 2)
    assert after["filter"] == before["filter"] and after["total"] == before["total"]
    assert after["selected"] == before["selected"]
    assert again.locator(".tabs button.on").get_attribute("data-tab") == "event"
    assert again.locator("#f-kind").input_value() == "artifact"
    page.close()
    again.close()


def test_multi_rank(browser: Any, site: Site, viewer_traces: dict[str, Path]) -> None:
    folder = viewer_traces["multi"]
    events = raw_events(folder)
    page = open_explorer(browser, site.explorer("multi"))
    h = hook(page)
    assert h["total"] == len(events)
    assert set(h["compileIds"]) == manifest_ids(folder)
    assert page.locator("#f-rank option").all_text_contents() == ["all ranks", "rank 0", "rank 1"]
    # Across ranks a compile id shows the status it has on one of them (the most severe).
    per_rank = [compiles_statuses(folder / f"rank_{r}") for r in (0, 1)]
    for cid, status in h["statuses"].items():
        assert status in {ranks.get(cid) for ranks in per_rank}, cid
    page.select_option("#f-rank", "1")
    h = wait_hook(page, lambda h: h["filter"]["rank"] == 1)
    # Rank-less lines belong to their log's rank (FORMAT.md section 13): count rank_1's raw.jsonl.
    assert h["total"] == len(raw_events(folder / "rank_1")) < len(events)
    assert {c.strip() for c in page.locator("#table .row:visible .c-r").all_text_contents()} == {"1"}
    page.close()
    # A rank's payloads are in the job's payloads/ (one store per job): rank 1's output code opens.
    assert not (folder / "rank_1" / "payloads").exists()
    page = open_explorer(browser, site.explorer("multi", "#kind=inductor_output_code&rank=1"))
    page.locator("#table .row[data-row='0'] .c-k", has_text="inductor_output_code").click()
    h = wait_hook(page, lambda h: bool(h.get("payload")))
    first = next(e for e in raw_events(folder / "rank_1") if key_of(e) == "inductor_output_code")
    text = (folder / first["payload_filename"]).read_text(encoding="utf-8")
    assert h["payload"]["lines"] == len(text.split("\n"))
    assert page.locator(".code-line .src").first.text_content() == text.split("\n")[0]
    page.close()


PERFETTO_STAND_IN = """<!doctype html><title>perfetto stand-in</title><script src="stand-in.js"></script>"""
PERFETTO_JS = """
window.received = null;
window.addEventListener('message', (e) => {
  if (e.data === 'PING') { e.source.postMessage('PONG', e.origin); return; }
  if (e.data && e.data.perfetto) {
    const p = e.data.perfetto;
    window.received = { origin: e.origin, title: p.title, fileName: p.fileName, bytes: p.buffer.byteLength,
                        text: new TextDecoder().decode(p.buffer) };
  }
});
"""


def test_open_in_perfetto_handshake(browser: Any, site: Site, viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(PERFETTO_STAND_IN)
    (tmp_path / "stand-in.js").write_text(PERFETTO_JS)
    perfetto = StaticSite({"/ui": tmp_path})  # another loopback port: another origin
    try:
        target = f"{perfetto.url}/ui/index.html"
        page = open_explorer(browser, site.explorer("single", f"&perfetto={target}"))
        with page.context.expect_page() as popup_info:
            page.click("#perfetto")
        popup = popup_info.value
        wait_hook(page, lambda h: h.get("perfetto", {}).get("state") == "sent")
        received = popup.evaluate("window.received")
        expected = (viewer_traces["single"] / "chromium_events.json").read_bytes()
        assert received["origin"] == site.url
        assert received["bytes"] == len(expected)
        assert json.loads(received["text"]) == json.loads(expected)
        assert received["fileName"] == "chromium_events.json"
        page.close()
        # A crafted link naming a non-loopback Perfetto is refused: the button is not offered.
        page = open_explorer(browser, site.explorer("single", "&perfetto=https://evil.example/"))
        assert page.locator("#perfetto").is_hidden()
        page.close()
    finally:
        perfetto.close()


def test_files_picked_by_the_user(browser: Any, site: Site, viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    folder = viewer_traces["single"]
    page = browser.new_page()
    page.goto(f"{site.url}/viewers/explorer/")
    wait_hook(page, lambda h: h.get("landing") is True)
    # A gzipped raw.jsonl (decompressed in the page) and the manifest, picked from disk.
    (tmp_path / "raw.jsonl.gz").write_bytes(gzip.compress((folder / "raw.jsonl").read_bytes()))
    page.set_input_files("#pick-files", [str(folder / "manifest.json"), str(tmp_path / "raw.jsonl.gz")])
    hook = wait_hook(page, lambda h: h.get("loaded") is True)
    assert hook["total"] == len(raw_events(folder))
    assert set(hook["compileIds"]) == manifest_ids(folder)
    page.close()


def test_first_rows_do_not_wait_for_compiles_json(browser: Any, site: Site, viewer_traces: dict[str, Path]) -> None:
    """compiles.json (megabytes in a big trace) is read after the first rows are drawn: with its
    answer held back, the table is ready and the sidebar lists the ids without statuses from it;
    once it comes, statuses and graph breaks are drawn. An unreadable one leaves statuses derived
    from the metrics, and the page says so."""
    folder = viewer_traces["breaks"]
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    held: list[Any] = []
    page.route("**/compiles.json", lambda route: held.append(route))
    cid = sorted(compiles_statuses(folder))[-1]
    # A link to a compile id's Compile tab: it waits for compiles.json too, saying so.
    page.goto(site.explorer("breaks", "#" + urlencode({"cid": cid, "tab": "compile"})))
    h = wait_hook(page, lambda h: h.get("ready") is True and h.get("total", 0) > 0)
    assert held, "compiles.json was asked for"
    h = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == cid)
    assert h["compile"]["source"] == "pending"
    assert "Reading compiles.json" in (page.locator("#detail-body").text_content() or "")
    assert set(h["compileIds"]) == manifest_ids(folder)
    assert h["graphBreaks"] == []  # graph breaks come only from compiles.json
    assert page.locator("#status-source").text_content() == ""  # not "(status from metrics)" yet
    page.click("#view-breaks")
    assert page.locator("#breaks li").first.text_content() == "Reading compiles.json\N{HORIZONTAL ELLIPSIS}"
    page.click("#view-events")
    assert h.get("loaded") is not True
    for route in held:
        route.continue_()
    h = wait_hook(page, lambda h: h.get("loaded") is True)
    assert h["statuses"] == compiles_statuses(folder)
    assert h["compile"]["id"] == cid and h["compile"]["source"] == "compiles.json"
    assert h["compile"]["status"] == compiles_statuses(folder)[cid]
    assert len(h["graphBreaks"]) == len(json.loads((folder / "compiles.json").read_text())["graph_breaks"])
    page.close()
    page = browser.new_page()
    broken = '{"compiles": ['
    page.route("**/compiles.json", lambda route: route.fulfill(body=broken, content_type="application/json"))
    page.goto(site.explorer("breaks"))
    h = wait_hook(page, lambda h: h.get("loaded") is True)
    assert h["total"] == len(raw_events(folder)) and "error" not in h
    assert "compiles.json unreadable" in (page.locator("#status").text_content() or "")
    assert page.locator("#status-source").text_content() == "(status from metrics)"
    page.close()
