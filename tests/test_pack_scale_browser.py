"""`tlscope pack` opened from file://, the table at a million events, and the viewer CSP blocking other origins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import StaticSite, hook, load_script, manifest_ids, raw_events, wait_hook, write_leaky_viewer

from tlscope.cli import main as tlscope_main
from tlscope.viewers import EXPLORER, LIB


@pytest.mark.parametrize("which", ["single", "multi"])
def test_packed_file_opens_from_file_url(
    browser: Any, viewer_traces: dict[str, Path], tmp_path: Path, which: str
) -> None:
    folder = viewer_traces[which]
    html = tmp_path / "trace.html"
    assert tlscope_main(["pack", str(folder), "-o", str(html)]) == 0
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(html.as_uri() + "#kind=inductor_output_code&row=0")
    h = wait_hook(page, lambda h: h.get("loaded") is True and bool(h.get("payload")))
    assert h["total"] == sum(1 for e in raw_events(folder) if "inductor_output_code" in e)
    page.click("#f-clear")
    h = wait_hook(page, lambda h: h["filter"]["kind"] is None)
    assert h["total"] == len(raw_events(folder))
    assert set(h["compileIds"]) == manifest_ids(folder)
    assert h["packed"] == {"omitted": []}
    assert page.locator("#perfetto").is_hidden()  # Perfetto cannot be reached from file://
    assert errors == []
    page.close()


def test_packed_job_holds_its_multi_rank_view(browser: Any, viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    """A packed multi-rank job holds its landing page and ranks.json; the Report link
    opens the landing page, every rank and how they diverge, from file:// (issue 20, finding 1)."""
    folder = viewer_traces["multi"]
    html = tmp_path / "job.html"
    assert tlscope_main(["pack", str(folder), "-o", str(html)]) == 0
    data = html.read_text()
    start = data.index('id="tlscope-pack">') + len('id="tlscope-pack">')
    files = json.loads(data[start : data.index("</script>", start)])["files"]
    assert {"index.html", "ranks.json", "multi_rank_summary.json"} <= set(files)
    page = browser.new_page()
    page.goto(html.as_uri())
    h = wait_hook(page, lambda h: h.get("loaded") is True and "divergent" in h)
    # The explorer itself says it from the packed ranks.json: the banner and the marked ids.
    ranks = json.loads((folder / "ranks.json").read_text())
    assert h["divergence"] == [g["sentence"] for g in ranks["divergence"]["groups"]]
    assert h["divergent"] == sorted(item["id"] for item in ranks["divergence"]["not_on_every_rank"])
    assert page.locator("#divergence").is_visible() == bool(h["divergence"])
    link = page.locator("#report-link")
    link.wait_for(state="visible")
    # "Ranks" is the packed Ranks view's link (the pack holds timeline.bin; test_ranks_view_browser).
    assert link.text_content() == "Report" and page.locator("#ranks-link").text_content() == "Ranks"
    with page.expect_popup() as popup:
        link.click()
    landing = popup.value
    landing.wait_for_load_state()
    text = landing.locator("body").text_content()
    assert "Ranks at a glance" in text and "How the ranks' compiles diverge" in text
    ranks = json.loads((folder / "ranks.json").read_text())
    for group in ranks["divergence"]["groups"]:
        assert group["sentence"] in text
    landing.close()
    page.close()


def test_pack_budget_lists_what_is_left_out(browser: Any, viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    html = tmp_path / "small.html"
    assert tlscope_main(["pack", str(viewer_traces["single"]), "-o", str(html), "--payload-budget", "20K"]) == 0
    data = html.read_text()
    start = data.index('id="tlscope-pack">') + len('id="tlscope-pack">')
    packed = json.loads(data[start : data.index("</script>", start)])
    payloads = {p for p in packed["files"] if p.startswith("payloads/")}
    omitted = {o["path"] for o in packed["omitted"]}
    assert payloads and omitted and not payloads & omitted
    assert sum(o["size"] for o in packed["omitted"]) > 0
    page = browser.new_page()
    page.goto(html.as_uri() + "#kind=inductor_output_code&row=0")
    wait_hook(page, lambda h: h.get("loaded") is True)
    assert "left out of the packed file" in page.locator("#detail-body").text_content()
    assert len(hook(page)["packed"]["omitted"]) == len(omitted)
    page.close()
    assert tlscope_main(["pack", str(viewer_traces["single"]), "-o", str(html)]) == 1  # exists, no --overwrite


def test_scrolling_to_the_last_of_a_million_events(browser: Any, tmp_path: Path) -> None:
    synth = load_script("bench", "synth")
    synth.compact(tmp_path / "m", 1_000_000)
    site = StaticSite({"/lib": LIB, "/viewers/explorer": EXPLORER, "/traces/m": tmp_path / "m"})
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        page.goto(f"{site.url}/viewers/explorer/?trace=/traces/m/")
        h = wait_hook(page, lambda h: h.get("loaded") is True, timeout=120)
        assert h["total"] == 1_000_000
        assert h["bytesDropped"] is True  # 150 MB indexed, then read again by range as rows are shown
        # 10,000 compile ids: the sidebar holds a screenful of rows, and its last id can be picked.
        ids = h["compileIds"]
        assert len(ids) == 10_000
        assert page.locator("#cids [data-cid]").count() < 100
        page.locator("#cids").evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.locator(f"#cids [data-cid='{ids[-1]}']").click()
        h = wait_hook(page, lambda h: h["filter"]["cid"] == ids[-1])
        assert h["total"] == 100  # synth.compact: a million events over 10,000 compile ids
        page.click("#f-clear")
        h = wait_hook(page, lambda h: h["filter"]["cid"] is None)
        table = page.locator("#table")
        # Past Chrome's element-height cap the scroll range is scaled; its end is the last row.
        assert table.evaluate("el => el.scrollHeight") < 33_000_000
        table.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        h = wait_hook(page, lambda h: h["visibleRows"]["last"] == 999_999)
        last = page.locator("#table .row[data-row='999999']")
        assert last.is_visible()
        assert last.locator(".c-n").text_content() == "1000000"
        last.click()
        h = wait_hook(page, lambda h: h.get("selected", {}).get("row") == 999_999)
        assert h["selected"]["log_line"] == 1_000_000
        # Keyboard: Home goes back to the first row, End to the last.
        table.press("Home")
        wait_hook(page, lambda h: h["visibleRows"]["first"] == 0)
        table.press("End")
        wait_hook(page, lambda h: h["visibleRows"]["last"] == 999_999 and h["selected"]["row"] == 999_999)
        # Text search reads the dropped bytes back in runs: one event matches.
        page.fill("#f-q", '"n":999998}')
        h = wait_hook(page, lambda h: h["filter"]["q"] == '"n":999998}', timeout=60)
        assert h["total"] == 1
        page.locator("#table .row[data-row='0'] .c-s", has_text="n=999998").wait_for()
        page.close()
    finally:
        site.close()


def test_viewer_csp_blocks_other_origins(browser: Any, tmp_path: Path) -> None:
    write_leaky_viewer(tmp_path / "v")
    (tmp_path / "loot").mkdir()
    (tmp_path / "loot" / "ok.txt").write_text("reachable")
    other = StaticSite({"/loot": tmp_path / "loot"})
    site = StaticSite({"/viewers/bad": tmp_path / "v", "/loot": tmp_path / "loot"})
    try:
        page = browser.new_page()
        page.goto(f"{site.url}/viewers/bad/?target={other.url}/loot/ok.txt")
        h = wait_hook(page, lambda h: h.get("ready") is True)
        assert h["fetched"] is False and "connect-src" in h["violations"]
        # The same page may fetch its own origin: the CSP is what blocked the other one.
        page.goto(f"{site.url}/viewers/bad/?target={site.url}/loot/ok.txt")
        h = wait_hook(page, lambda h: h.get("ready") is True)
        assert h["fetched"] is True and h["violations"] == []
        page.close()
    finally:
        other.close()
        site.close()
