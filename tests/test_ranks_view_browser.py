"""The explorer's Ranks view (`?view=ranks`, issue 22) in headless Chromium, through tlscope serve.

On a real multi-rank corpus job (ranks_diverge_4: rank 3 compiles a function the others do not)
and on a generated 64-rank job (corpus/scale.py --ranks 64: one straggler, one diverging rank).
Every figure asserted is read here from the logs or the job's files (ranks.json, each rank's
compiles.json, timeline.bin through the Python reference decoder), never written into the test:
the ranks shown are the rank logs, the events decoded are the Python decoder's, the stragglers and
groups ranks.json's, "why is rank K slow" compiles.json's phases; hovering a slice names an event
of that rank at that time, and clicking it opens the Compile tab of its compile id on its rank.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pytest
from helpers import REPO, TLPARSE_TRACES, LiveServer, hook, require_shared, wait_hook

CORPUS = REPO / "corpus" / "traces"
RANK_LOG = re.compile(r"rank_(\d+)")


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """name -> (folder of rank logs, job output): the real corpus job and a generated 64-rank one."""
    from tlscope.cli import main as tlscope_main

    root = tmp_path_factory.mktemp("ranks-view")
    logs64 = root / "logs64"
    scale = [str(REPO / "corpus" / "scale.py"), str(CORPUS / "ranks_same_4"), "--ranks", "64", "--frames", "4"]
    subprocess.run(
        [sys.executable, *scale, "--seed", "3", "-o", str(logs64)],
        check=True,
        capture_output=True,
    )
    out = {
        "real": (CORPUS / "ranks_diverge_4", root / "real"),
        "scaled": (logs64, root / "scaled"),
        "desync": (CORPUS / "ranks_desync_2", root / "desync"),
        "shifted": (CORPUS / "ranks_shifted_4", root / "shifted"),
        "same": (CORPUS / "ranks_same_4", root / "same"),
        "patched": (CORPUS / "ranks_patched_2", root / "patched"),
    }
    if TLPARSE_TRACES.is_dir():  # tlparse's own 4-rank trace, where the shared traces are
        out["tlparse"] = (TLPARSE_TRACES / "inputs" / "multi_rank_logs", root / "tlparse")
    for logs, folder in out.values():
        assert tlscope_main([str(logs), "-o", str(folder), "--no-browser"]) == 0
    return out


@pytest.fixture(scope="module")
def site(jobs: dict[str, tuple[Path, Path]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """name -> the Ranks view's URL of that job on a live tlscope serve."""
    server = LiveServer([str(out) for _, out in jobs.values()], tmp_path_factory.mktemp("serve"))
    try:
        yield {
            name: f"{server.url}/viewers/explorer/?view=ranks&trace={quote(server.trace_url(out), safe='')}"
            for name, (_, out) in jobs.items()
        }
    finally:
        server.close()


def open_ranks(browser: Any, url: str, height: int = 900) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(url)
    wait_hook(page, lambda h: h.get("ready") is True and h.get("matrix") is not None and h.get("why") is not None)
    return page


def assert_opened(page: Any, rank: int, cid: str) -> None:
    """The page went to rank `rank`'s folder and its Compile tab shows `cid`; then it is closed."""
    page.wait_for_url(lambda url: f"rank_{rank}/" in unquote(url), timeout=30_000)
    page.wait_for_load_state()
    opened = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == cid, timeout=60)
    assert "tab=compile" in page.url and opened["compile"]["id"] == cid
    assert page.errors == []
    page.close()


def rank_logs(logs: Path) -> list[int]:
    return sorted(int(RANK_LOG.search(p.name).group(1)) for p in logs.iterdir() if RANK_LOG.search(p.name))  # type: ignore[union-attr]


def ranks_json(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "ranks.json").read_text())
    return data


@pytest.mark.parametrize("name", ["real", "scaled", "same", "tlparse"])
def test_the_hooks_say_the_logs_ranks_and_the_timelines_events(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]], name: str
) -> None:
    from tlscope import timeline

    if name not in jobs:
        require_shared()
    logs, out = jobs[name]
    page = open_ranks(browser, site[name])
    h = hook(page)
    events = timeline.read(out)
    assert h["ranks"] == len(rank_logs(logs)) == len(ranks_json(out)["ranks"]) > 1
    assert h["timelineEvents"] == len(events) > 100
    assert sorted({e.rank for e in events}) == rank_logs(logs)
    data = ranks_json(out)
    assert h["stragglers"] == [s["rank"] for s in data["stragglers"]["ranks"]]
    groups = data["divergence"]["groups"] or [{"ranks": rank_logs(logs)}]
    assert h["groups"] == [len(g["ranks"]) for g in groups]
    # The matrix: a row per group with its count, the ids not on every rank first.
    partial = [p["id"] for p in data["divergence"]["not_on_every_rank"]]
    assert [r["ranks"] for r in h["matrix"]["rows"]] == h["groups"]
    assert h["matrix"]["columns"][: len(partial)] == partial and h["matrix"]["divergent"] == len(partial)
    # Then the ids whose graphs differ (ranks.json's, format 1.30; ranks_diverge_4: [4/0], [6/0]).
    differ = [g["id"] for g in data["divergence"]["graphs"] if g["id"] not in partial]
    assert h["matrix"]["graphs"] == len(differ) and h["graphs"] == [g["sentence"] for g in data["divergence"]["graphs"]]
    assert h["matrix"]["columns"][len(partial) : len(partial) + len(differ)] == differ
    # The compiles whose caches answered differently (format 1.36), listed in the header as written
    # (ranks_same_4: rank 1's FX graph cache hit twice in [4/0], where the others missed).
    caches = [c["sentence"] for c in data["divergence"]["caches"]]
    assert h["caches"] == caches == page.locator(".rk-caches li").all_text_contents()
    assert bool(caches) == (name == "same")
    for row, group in zip(h["matrix"]["rows"], groups, strict=True):
        first = json.loads((out / f"rank_{group['ranks'][0]}" / "compiles.json").read_text())["compiles"]
        assert row["ids"] == sum(e["status"] != "outside" for e in first)
    # The table: slowest first, as ranks.json's figures say; a heading sorts by its column.
    lines = data["ranks"]
    assert (
        int(page.locator(".rk-table .rk-row").first.get_attribute("data-rank"))
        == max(lines, key=lambda line: (line["compile_time_s"], -line["rank"]))["rank"]
    )
    page.click(".rk-thead button[data-sort='compiles']")
    h = wait_hook(page, lambda h: (h.get("ranksSort") or {}).get("key") == "compiles")
    assert h["ranksOrder"] == [r["rank"] for r in sorted(lines, key=lambda r: (-r["compiles"], r["rank"]))][:20]
    assert page.errors == []
    page.close()


def test_a_desync_the_compile_ids_do_not_show_has_a_row_of_its_own(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """ranks_desync_2 (format 1.18): both ranks compile the same ids, one group; [0/0]'s
    all_reduce differs between them, so the matrix has ranks.json's two rows, the one whose
    collectives differ first, [0/0] the first column, and the header says ranks.json's sentence."""
    _, out = jobs["desync"]
    data = ranks_json(out)["divergence"]
    assert data["diverges"] is False and [m["id"] for m in data["collectives"]] == ["[0/0]"]
    rows = data["rows"]
    assert [r["ranks"] for r in rows] == [[1], [0]] and rows[0]["collectives"] == ["[0/0]"]
    page = open_ranks(browser, site["desync"])
    h = hook(page)
    assert h["groups"] == [2] and h["rows"] == [1, 1]
    assert [r["ranks"] for r in h["matrix"]["rows"]] == [1, 1] and h["matrix"]["columns"][0] == "[0/0]"
    assert h["matrix"]["divergent"] == 0 and h["matrix"]["collectives"] == 1  # marked above its column
    assert h["matrix"]["graphs"] == 0  # [0/0]'s graphs differ too: its column is the collectives' one
    sentences = [m["sentence"] for m in data["collectives"]]
    assert h["collectives"] == sentences
    assert page.locator(".rk-collectives li").all_text_contents() == sentences
    assert "collectives differ at 1 compile id" in (page.locator(".rk-head").text_content() or "")
    # The same id's graphs differ (its input's batch; format 1.30): said under the collectives.
    graphs = [g["sentence"] for g in data["graphs"]]
    assert len(graphs) == 1 and h["graphs"] == graphs
    assert page.locator(".rk-graphs li .rk-graph-sentence").all_text_contents() == graphs
    assert "graphs differ at 1 compile id" in (page.locator(".rk-head").text_content() or "")
    assert page.errors == []
    page.close()


def test_a_compile_some_ranks_ran_under_other_settings_is_marked(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """ranks_patched_2 (format 1.38): rank 1 compiled [1/0] inside inductor's config.patch. The
    header lists ranks.json's settings sentence; the matrix draws that compile first, marked as run
    under other settings (the cause), not again as a graph that differs (its output code, the effect)."""
    _, out = jobs["patched"]
    data = ranks_json(out)["divergence"]
    assert [m.get("id") for m in data["settings"]] == ["[1/0]"] and [g["id"] for g in data["graphs"]] == ["[1/0]"]
    page = open_ranks(browser, site["patched"])
    h = hook(page)
    sentences = [m["sentence"] for m in data["settings"]]
    assert h["settings"] == sentences == page.locator(".rk-settings li").all_text_contents()
    assert h["matrix"]["columns"][0] == "[1/0]"
    assert (h["matrix"]["divergent"], h["matrix"]["collectives"], h["matrix"]["settings"], h["matrix"]["graphs"]) == (
        0,
        0,
        1,
        0,
    )
    assert "settings differ" in (page.locator(".rk-head").text_content() or "")
    assert page.errors == []
    page.close()


def test_why_is_the_straggler_slow(browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]) -> None:
    """The generated straggler (3x slower) against the median rank: each phase of each of its compile
    ids from the two ranks' compiles.json, the largest excess first."""
    _, out = jobs["scaled"]
    data = ranks_json(out)
    slow = data["stragglers"]["ranks"][0]["rank"]
    ordered = sorted(data["ranks"], key=lambda r: (r["compile_time_s"], r["rank"]))
    median = ordered[(len(ordered) - 1) // 2]["rank"]
    page = open_ranks(browser, site["scaled"])
    assert data["stragglers"]["median_rank"] == median, "the page shows the rank ranks.json names"
    why = hook(page)["why"]
    assert (why["rank"], why["median"]) == (slow, median)

    def phases(rank: int) -> dict[tuple[str, str], float]:
        entries = json.loads((out / f"rank_{rank}" / "compiles.json").read_text())["compiles"]
        return {(e["id"], p["name"]): p["seconds"] for e in entries for p in e.get("phases", [])}

    mine, theirs = phases(slow), phases(median)
    expected = sorted(((k, v - theirs.get(k, 0.0)) for k, v in mine.items()), key=lambda kv: (-kv[1], kv[0][0]))
    got = [((r["id"], r["phase"]), r["delta"]) for r in why["rows"]]
    assert [k for k, _ in got] == [k for k, _ in expected][: len(got)]
    assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(got, expected, strict=False))
    assert got[0][1] > 1.0, "the straggler's first phase is seconds slower"
    assert page.locator(".rk-why-t tr").count() == len(got) + 1
    # ranks.json's sentence (format 1.35), decided in Python, shown above the table: the compile
    # with the largest excess over the median rank's, recomputed here from the two compiles.json.
    said = data["stragglers"]["ranks"][0]["why"]
    assert why["said"] == said and page.locator(".rk-why-s").text_content() == f"Rank {slow} straggles: {said}."

    def seconds(rank: int) -> dict[str, float]:
        entries = json.loads((out / f"rank_{rank}" / "compiles.json").read_text())["compiles"]
        records = {e["id"]: [r for r in e["metrics_records"] if r["kind"] == "compilation_metrics"] for e in entries}
        return {cid: sum(r["time_s"] or 0.0 for r in found) for cid, found in records.items() if found}

    ours, others = seconds(slow), seconds(median)
    cid = max(ours, key=lambda c: (ours[c] - others.get(c, 0.0), c))
    assert (
        said.startswith(f"most in {cid} ")
        and f": {ours[cid]:.2f} s against rank {median}'s {others[cid]:.2f} s" in said
    )
    assert page.errors == []
    page.close()


def slice_point(page: Any, h: dict[str, Any], rank_pos: int, start: float, dur: float) -> tuple[float, float]:
    """The page point of the middle of a slice, from the view the hook gives (one rank per lane)."""
    t = h["timeline"]
    box = page.locator(".rk-canvas").bounding_box()
    w, hgt = t["width"] - t["gutter"], t["height"] - t["axis"]
    x = t["gutter"] + ((start + dur / 2 - t["origin"]) - t["t0"]) / (t["t1"] - t["t0"]) * w
    y = t["axis"] + ((rank_pos + 0.5) - t["y0"]) / t["span"] * hgt
    return box["x"] + x, box["y"] + y


def zoom_and_click_a_slice(page: Any, out: Path, scaled: bool) -> tuple[Any, dict[str, Any]]:
    """Zoom in to a rank per lane, hover the longest slice with a compile id wholly in the window
    (checked against timeline.bin), click it; the slice's event and the hover's details."""
    from tlscope import timeline

    h = hook(page)
    ranks = [line["rank"] for line in ranks_json(out)["ranks"]]
    if scaled:
        assert h["timeline"]["ranksPerLane"] > 1, "64 ranks in a short canvas share lanes"
    box = page.locator(".rk-canvas").bounding_box()
    # Zooming in (wheel over the plot) narrows the time window and expands the lanes to a rank each.
    for _ in range(12):
        if hook(page)["timeline"]["ranksPerLane"] == 1:
            break
        page.mouse.move(box["x"] + 72 + (box["width"] - 72) * 0.05, box["y"] + 30)  # near the first compiles
        page.mouse.wheel(0, -300)
        page.wait_for_timeout(50)
    h = wait_hook(page, lambda h: h["timeline"]["ranksPerLane"] == 1)
    # The longest slice with a compile id among the lanes shown, hovered then clicked.
    t = h["timeline"]
    shown = ranks[math.ceil(t["y0"]) : math.floor(t["y0"] + t["span"])]  # lanes wholly on the canvas
    every = timeline.read(out)
    # Ranks whose clocks are hours apart (tlparse's multi_rank_logs: days) each start at their first event.
    first = {r: min(e.start_us for e in every if e.rank == r) for r in ranks}
    shift = {r: first[r] - t["origin"] if t["aligned"] else 0 for r in ranks}
    assert t["aligned"] == (max(first.values()) - min(first.values()) > 3600e6)
    events = [e for e in every if e.rank in shown and e.compile_id]
    window = [
        e
        for e in events
        if e.start_us - shift[e.rank] - t["origin"] >= t["t0"]
        and e.start_us + e.dur_us - shift[e.rank] - t["origin"] <= t["t1"]
    ]
    assert window, "slices wholly in the zoomed window"
    pick = max(window, key=lambda e: e.dur_us)
    x, y = slice_point(page, h, ranks.index(pick.rank), pick.start_us - shift[pick.rank], pick.dur_us)
    page.mouse.move(x, y)
    hovered: dict[str, Any] = wait_hook(page, lambda h: h.get("hover") is not None)["hover"]
    assert hovered["rank"] == pick.rank and hovered["compile_id"] is not None
    at = pick.start_us + pick.dur_us / 2
    assert any(
        e.rank == pick.rank
        and e.compile_id == hovered["compile_id"]
        and e.start_us <= at + 1e6
        and e.name == hovered["name"]
        for e in every
    )
    page.mouse.click(x, y)
    return pick, hovered


@pytest.mark.parametrize("name", ["real", "scaled", "tlparse"])
def test_zoom_expands_lanes_and_a_click_opens_the_slices_compile(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]], name: str
) -> None:
    if name not in jobs:
        require_shared()
    _, out = jobs[name]
    page = open_ranks(browser, site[name], height=400 if name == "scaled" else 900)
    pick, hovered = zoom_and_click_a_slice(page, out, scaled=name == "scaled")
    assert_opened(page, pick.rank, hovered["compile_id"])


def test_each_graph_mismatch_opens_its_ranks_compiles(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """ranks_diverge_4 (format 1.30): each compile id whose graphs differ links the lowest rank of
    each group to its Compile tab; a click opens that rank's compile (the graph one looks at)."""
    _, out = jobs["real"]
    graphs = ranks_json(out)["divergence"]["graphs"]
    page = open_ranks(browser, site["real"])
    hook(page)
    items = page.locator(".rk-graphs li")
    assert items.count() == len(graphs)
    for n, mismatch in enumerate(graphs):
        links = items.nth(n).locator("a.rk-graph-open")
        firsts = [g["ranks"][0] for g in mismatch["groups"]][:5]
        assert links.all_text_contents() == [f"{mismatch['id']} on rank {r}" for r in firsts]
    branch = next(n for n, g in enumerate(graphs) if g["id"] == "[6/0]")
    items.nth(branch).locator("a.rk-graph-open").nth(1).click()  # ranks 1, 3's group: rank 1
    assert_opened(page, 1, "[6/0]")


def test_the_ranks_first_answers_head_the_view_and_open_their_compile(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """ranks_diverge_4 (format 1.42): ranks.json's first answers under the header, each line after
    the ranks that say it, linked to its compile on the lowest of them; a click opens it there."""
    _, out = jobs["real"]
    answers = ranks_json(out)["first_answers"]["lines"]
    assert answers
    page = open_ranks(browser, site["real"])
    said = [f"{a['who']}: {a['text']}" for a in answers]
    assert hook(page)["rankAnswers"] == said
    items = page.locator(".rk-answers li")
    assert [t.split(" · ")[0] for t in items.all_text_contents()] == said
    first = answers[0]
    link = items.first.locator("a.rk-answer-open")
    assert link.text_content() == f"{first['compile_id']} on rank {first['ranks'][0]}"
    link.click()
    assert_opened(page, first["ranks"][0], first["compile_id"])


def test_a_rank_that_numbers_a_function_differently_opens_its_own_compile(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """ranks_shifted_4 (format 1.31): the header lists the frames sentence as written, each list
    where ranks.json's `said` puts it (format 1.40); head's
    graphs differ on rank 3, and rank 0 numbers head [3/0] where ranks 1-3 say [2/0]: its group's
    link opens rank 0's [3/0], its own compile of head."""
    _, out = jobs["shifted"]
    divergence = ranks_json(out)["divergence"]
    page = open_ranks(browser, site["shifted"])
    h = hook(page)
    assert h["frames"] == [f["sentence"] for f in divergence["frames"]] != []
    assert page.locator(".rk-frames li").all_text_contents() == h["frames"]
    # The header's lists in the order ranks.json's `said` gives them (format 1.40).
    classes = page.locator(".rk-head > ul").evaluate_all("(lists) => lists.map((l) => l.className)")
    assert classes == [f"rk-{said['list']}" for said in divergence["said"]] == ["rk-groups", "rk-frames", "rk-graphs"]
    # And the header's words for them, in the same order.
    words = page.locator(".rk-head > span.muted").text_content() or ""
    assert words.index("diverge in 2 groups") < words.index("functions differ") < words.index("graphs differ at 1")
    # The matrix's columns are functions (format 1.33): log_stats, which rank 0 alone compiled,
    # first, in a column of its own (by id, [3/0] was "rank 0 only"); head, whose graphs differ,
    # in the others' [2/0]; block in their [1/0], which rank 0 draws from its [2/0] (marked blue).
    log = "[1/0] log_stats (ranks_shifted_4.py:24)"
    assert divergence["not_on_every_rank"] == [{"id": log, "ranks": [0]}]
    assert (h["matrix"]["columns"], h["matrix"]["moved"]) == ([log, "[2/0]", "[1/0]", "[0/0]"], 1)
    assert h["matrix"]["rows"] == [{"ranks": 1, "ids": 4}, {"ranks": 3, "ids": 3}]
    # Rank 0's cell under [2/0] is its head, [3/0]: said on hover, opened on click.
    cells = page.locator(".rk-mrow .rk-mcells").first
    cells.hover(position={"x": 24, "y": 9})
    assert (
        page.locator(".rk-mrow")
        .first.get_attribute("title", timeout=5_000)
        .startswith("[2/0] on 1 rank(s): 0 (its [3/0]): ok")
    )
    # "Why is rank 0 slow": its compiles against the median rank's of the same functions (by id,
    # its log_stats [1/0] against their block [1/0], and its head [3/0] against nothing).
    why = h["why"]
    assert why["rank"] == 0 and why["median"] != 0
    pairs = {(r["id"], r["theirs"]) for r in why["rows"]}
    assert pairs == {("[0/0]", "[0/0]"), ("[1/0]", None), ("[2/0]", "[1/0]"), ("[3/0]", "[2/0]")}
    assert all((r["median"] is None) == (r["theirs"] is None) for r in why["rows"])
    assert page.locator(".rk-why-t td", has_text=f"[3/0] (rank {why['median']}'s [2/0])").count() > 0
    links = page.locator(".rk-graphs li").first.locator("a.rk-graph-open")
    assert links.all_text_contents() == ["[3/0] on rank 0", "[2/0] on rank 3"]
    links.first.click()
    _opens_rank_0s_head(page)
    # The same from the matrix: rank 0's row, the [2/0] column (the second, 16 px a column).
    page = open_ranks(browser, site["shifted"])
    page.locator(".rk-mrow .rk-mcells").first.click(position={"x": 24, "y": 9})
    _opens_rank_0s_head(page)


def _opens_rank_0s_head(page: Any) -> None:
    page.wait_for_url(lambda url: "rank_0/" in unquote(url), timeout=30_000)
    page.wait_for_load_state()
    opened = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == "[3/0]", timeout=60)
    assert opened["compile"]["id"] == "[3/0]"
    assert page.errors == []
    page.close()


def test_a_picked_ranks_ids_are_marked_by_function(browser: Any, site: dict[str, str]) -> None:
    """ranks_shifted_4 (format 1.33): the sidebar marks a picked rank's ids not on every rank by
    their function's column: rank 0's [1/0] (log_stats, which it alone compiled) `only r0`, its
    [3/0] (head, the others' [2/0]) nothing; rank 1's [1/0] (block) nothing."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(site["shifted"].replace("view=ranks&", ""))
    wait_hook(page, lambda h: h.get("loaded") is True and "divergent" in h)
    only = "#cids [data-cid='{}'] .cid-only"
    page.select_option("#f-rank", "0")
    wait_hook(page, lambda h: h.get("sidebarRank") == 0)
    assert page.locator(only.format("[1/0]")).text_content() == "only r0"
    assert page.locator(only.format("[3/0]")).is_hidden() and page.locator(only.format("[2/0]")).is_hidden()
    page.select_option("#f-rank", "1")
    wait_hook(page, lambda h: h.get("sidebarRank") == 1)
    assert page.locator(only.format("[1/0]")).is_hidden()
    page.close()


def test_a_jobs_explorer_links_its_ranks_view_and_back(browser: Any, site: dict[str, str]) -> None:
    events_url = site["real"].replace("view=ranks&", "")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(events_url)
    wait_hook(page, lambda h: h.get("loaded") is True)
    page.click("#ranks-link")
    page.wait_for_url(lambda url: "view=ranks" in url)
    h = wait_hook(page, lambda h: h.get("view") == "ranks" and h.get("ready") is True)
    assert h["ranks"] == 4
    page.click("#events-link")
    page.wait_for_url(lambda url: "view=ranks" not in url)
    assert wait_hook(page, lambda h: h.get("loaded") is True)["total"] > 0
    page.close()


def test_keys_and_drag_move_the_timeline(browser: Any, site: dict[str, str]) -> None:
    """W zooms in (time and lanes), D pans right, arrow down pans the lanes, 0 resets; a drag pans
    both ways and opens nothing."""
    page = open_ranks(browser, site["scaled"])
    whole = hook(page)["timeline"]
    page.locator(".rk-canvas").focus()

    def after(key: str) -> dict[str, Any]:
        page.keyboard.press(key)
        page.wait_for_timeout(100)
        return dict(hook(page)["timeline"])

    zoomed = after("w")
    assert zoomed["t1"] - zoomed["t0"] < 0.85 * (whole["t1"] - whole["t0"]) and zoomed["span"] < whole["span"]
    right = after("d")
    assert right["t0"] > zoomed["t0"] and abs((right["t1"] - right["t0"]) - (zoomed["t1"] - zoomed["t0"])) < 1
    down = after("ArrowDown")
    assert down["y0"] > right["y0"]
    reset = after("0")
    assert (reset["t0"], reset["t1"], reset["y0"], reset["span"]) == (
        whole["t0"],
        whole["t1"],
        whole["y0"],
        whole["span"],
    )
    after("w")
    after("w")
    before = dict(hook(page)["timeline"])
    box = page.locator(".rk-canvas").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 200, y - 60, steps=8)
    page.mouse.up()
    page.wait_for_timeout(200)
    dragged = hook(page)
    assert dragged["timeline"]["t0"] > before["t0"] and dragged["timeline"]["y0"] > before["y0"]
    assert "opened" not in dragged and "view=ranks" in page.url
    assert page.errors == []
    page.close()


def test_the_view_reads_the_jobs_summaries_not_its_events(browser: Any, site: dict[str, str]) -> None:
    """On the 64-rank job: ranks.json, timeline.bin and the compiles.json of the groups' first ranks
    and of the two ranks compared, every answer a success; no raw.jsonl, no manifest of each rank."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    answers: list[tuple[str, int]] = []
    page.on("response", lambda r: answers.append((r.url, r.status)))
    page.goto(site["scaled"])
    h = wait_hook(page, lambda h: h.get("ready") is True and h.get("matrix") is not None and h.get("why") is not None)
    page.wait_for_timeout(300)
    paths = [urlsplit(u).path for u, _ in answers]
    files = [unquote(p.split("/", 3)[3]) for p in paths if p.startswith("/traces/")]
    assert all(status < 400 for _, status in answers), [a for a in answers if a[1] >= 400]
    assert {"ranks.json", "timeline.bin"} <= set(files)
    wanted = {
        f"rank_{g['ranks'][0]}/compiles.json" for g in [{"ranks": [r]} for r in (h["why"]["rank"], h["why"]["median"])]
    }
    assert wanted <= set(files) and all(
        f.endswith("compiles.json") for f in set(files) - {"ranks.json", "timeline.bin"}
    )
    assert len([f for f in files if f.endswith("compiles.json")]) <= len(h["groups"]) + 2
    page.close()


@pytest.mark.parametrize("name", ["real", "scaled"])
def test_a_packed_job_opens_its_ranks_view_offline(
    browser: Any, jobs: dict[str, tuple[Path, Path]], tmp_path: Path, name: str
) -> None:
    """`tlscope pack JOB` holds ranks.json and timeline.bin: `FILE?view=ranks` from file:// shows
    the logs' ranks and timeline.bin's events with no request off the file; the packed event
    table's Ranks link opens it, and a slice's click opens the packed events at its compile id,
    filtered to its rank."""
    from tlscope import timeline
    from tlscope.cli import main as tlscope_main

    logs, out = jobs[name]
    html = tmp_path / "job.html"
    assert tlscope_main(["pack", str(out), "-o", str(html)]) == 0
    page = browser.new_page(viewport={"width": 1400, "height": 400 if name == "scaled" else 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(html.as_uri())
    wait_hook(page, lambda h: h.get("loaded") is True)
    page.click("#ranks-link")
    page.wait_for_url(lambda url: "view=ranks" in url)
    h = wait_hook(page, lambda h: h.get("ready") is True and h.get("matrix") is not None and h.get("why") is not None)
    events = timeline.read(out)
    data = ranks_json(out)
    assert h["view"] == "ranks" and h["ranks"] == len(rank_logs(logs)) == len(data["ranks"])
    assert h["timelineEvents"] == len(events) > 100
    assert h["stragglers"] == [s["rank"] for s in (data["stragglers"] or {"ranks": []})["ranks"]]
    assert h["groups"] == [len(g["ranks"]) for g in data["divergence"]["groups"] or [{"ranks": data["ranks"]}]]
    assert h["why"]["rows"], "each rank's compiles.json is in the pack"
    if name == "real":
        pick, hovered = zoom_and_click_a_slice(page, out, scaled=False)
        page.wait_for_url(lambda url: "view=ranks" not in url and f"rank={pick.rank}" in url)
        opened = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == hovered["compile_id"], timeout=60)
        assert opened["filter"]["rank"] == pick.rank and "tab=compile" in page.url
    assert all(urlsplit(u).scheme in ("file", "blob", "data") for u in requests), requests
    assert errors == []
    page.close()


def test_a_group_row_expands_into_its_ranks_and_back(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """The matrix's group rows (ranks.json's groups) expand into a row per rank, each drawn from
    that rank's own compiles.json, in a virtualised list; by keyboard (Enter, End, ←) and by mouse."""
    _, out = jobs["scaled"]
    groups = ranks_json(out)["divergence"]["groups"]
    assert len(groups) > 1, "the generated job diverges"
    big = max(range(len(groups)), key=lambda i: len(groups[i]["ranks"]))
    expected: list[int | None] = []  # the rank of each row shown once `big` is open (None: a group's row)
    for i, group in enumerate(groups):
        expected += [None] + (group["ranks"] if i == big else [])

    def ids(rank: int) -> int:
        entries = json.loads((out / f"rank_{rank}" / "compiles.json").read_text())["compiles"]
        return sum(e["status"] != "outside" for e in entries)

    def cursor_rank() -> int | None:
        text = page.locator("#rk-mcursor").get_attribute("data-rank")
        return int(text) if text else None

    page = open_ranks(browser, site["scaled"])
    page.locator(".rk-mlist").focus()
    for _ in range(big):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    view = wait_hook(page, lambda h: h["matrixView"]["expanded"] == [big])["matrixView"]
    assert view["shown"] == len(expected) and view["elements"] <= 14, "a row drawn per row on screen, not per rank"
    assert page.locator(f".rk-mrow[data-group='{big}'][aria-level='1']").get_attribute("aria-expanded") == "true"
    view = wait_hook(page, lambda h: bool(h["matrixView"]["ranks"]) and None not in h["matrixView"]["ranks"].values())
    drawn = view["matrixView"]["ranks"]
    assert {int(r) for r in drawn} <= set(groups[big]["ranks"])
    assert all(n == ids(int(r)) for r, n in drawn.items()), "each rank's row from its own compiles.json"
    page.keyboard.press("End")
    view = wait_hook(page, lambda h: h["matrixView"]["cursor"] == len(expected) - 1)["matrixView"]
    assert cursor_rank() == expected[-1]
    assert view["elements"] <= 14
    if expected[-1] is not None:  # the last row is a rank of the open group: ← collapses it
        page.keyboard.press("ArrowLeft")
        view = wait_hook(page, lambda h: h["matrixView"]["expanded"] == [])["matrixView"]
        assert view["shown"] == len(groups) and view["cursor"] == big and cursor_rank() is None
    else:
        page.keyboard.press("Home")
        for _ in range(big):
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        wait_hook(page, lambda h: h["matrixView"]["expanded"] == [])
    assert page.locator(f".rk-mrow[data-group='{big}'][aria-level='1']").get_attribute("aria-expanded") == "false"
    # The mouse: a click on the group's label opens it, a click on a rank's label picks that rank
    # ("why is rank K slow"), a click on the group's label again closes it.
    page.locator(f".rk-mrow[data-group='{big}'][aria-level='1'] .rk-mlabel").click()
    wait_hook(page, lambda h: h["matrixView"]["expanded"] == [big])
    second = groups[big]["ranks"][1]
    page.locator(f".rk-mrow[data-rank='{second}'] .rk-mlabel").click()
    wait_hook(page, lambda h: h["why"]["rank"] == second)
    page.locator(f".rk-mrow[data-group='{big}'][aria-level='1'] .rk-mlabel").click()
    assert wait_hook(page, lambda h: h["matrixView"]["expanded"] == [])["matrixView"]["shown"] == len(groups)
    assert page.errors == []
    page.close()


def lod_runs(items: list[tuple[float, float, str, float]], bin_us: float) -> list[list[Any]]:
    """The levels' rule (ranks-lod.js's Runs.add) over (start, end, colour, longest) in start order:
    one open run per colour, joined across gaps up to the bin; a piece under the bin, or a run still
    under it, joins the run before whatever its colour, the longer piece's colour winning."""
    runs: list[list[Any]] = []
    open_run: dict[str, int] = {}
    last = -1
    for s, e, c, w in items:
        k = open_run.get(c, -1)
        if k >= 0 and s > runs[k][1] + bin_us:
            k = -1
        tiny = e - s < bin_us or (last >= 0 and runs[last][1] - runs[last][0] < bin_us)
        if k < 0 and last >= 0 and s <= runs[last][1] + bin_us and tiny:
            k = last
        if k < 0:
            runs.append([s, e, c, w])
            k = open_run[c] = len(runs) - 1
        else:
            run = runs[k]
            run[1] = max(run[1], e)
            if w > run[3] and run[2] != c:
                if open_run.get(run[2]) == k:
                    del open_run[run[2]]
                run[2] = c
                open_run[c] = k
            run[3] = max(run[3], w)
        last = k
    return runs


def lane_runs(per_rank: list[list[list[Any]]], bin_us: float) -> list[list[Any]]:
    """A lane's runs at one depth from its ranks' (a power of two of them), paired as pairLevel
    pairs them: neighbours merged in start order (the first's on a tie), joined again (a run's
    length standing for its longest slice)."""
    while len(per_rank) > 1:
        pairs = [per_rank[i : i + 2] for i in range(0, len(per_rank), 2)]
        merged = [heapq.merge(*pair, key=lambda r: r[0]) for pair in pairs]
        per_rank = [lod_runs([(r[0], r[1], r[2], r[1] - r[0]) for r in runs], bin_us) for runs in merged]
    return per_rank[0]


def test_a_lane_of_ranks_paints_their_slices_merged_once(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """Zoomed out on the 64-rank job (several ranks a lane), each lane is painted from its ranks'
    runs merged (ranks-lod.js's pairLevel), not rank by rank: the runs painted are those the levels'
    rule gives, computed here from timeline.bin, fewer than the ranks' own; and each lane's pixels
    (read off the canvas) are exactly the pixels its ranks' slices cover, in their phases' colours."""
    from tlscope import timeline

    _, out = jobs["scaled"]
    page = open_ranks(browser, site["scaled"], height=400)
    h = wait_hook(page, lambda h: h["timeline"]["prepared"] is True)  # the first paint is rank by rank
    t = h["timeline"]
    k, colours = t["ranksPerLane"], h["timelineColours"]
    assert k > 1 and not t["aligned"] and t["t0"] == 0
    ranks = [line["rank"] for line in ranks_json(out)["ranks"]]
    ranks.sort()
    events = timeline.read(out)
    depths = max(e.depth for e in events) + 1
    w, hgt = t["width"] - t["gutter"], t["height"] - t["axis"]
    from_us, to_us = t["origin"] + t["t0"], t["origin"] + t["t1"]
    scale = w / (to_us - from_us)
    bin_us = float(t["bin"])
    # Each (rank, depth)'s slices in start order (stable: file order on a tie), as the page sorts them.
    slices: dict[tuple[int, int], list[Any]] = {}
    for e in events:
        slices.setdefault((e.rank, e.depth), []).append(e)
    own = expected = 0
    for lane in range(math.ceil(len(ranks) / k)):
        group = ranks[lane * k : (lane + 1) * k]
        for d in range(depths):
            per_rank = []
            for r in group:
                items = sorted(slices.get((r, d), []), key=lambda e: e.start_us)
                pieces = [(e.start_us, e.start_us + e.dur_us, colours[e.name], e.dur_us) for e in items]
                runs = lod_runs(pieces, bin_us)
                own += len(runs)
                per_rank.append(runs)
            per_rank += [[]] * (k - len(per_rank))
            expected += len(lane_runs(per_rank, bin_us))
    assert t["runs"] == expected < own, (t["runs"], expected, own)
    # The pixels: each lane's middle row of the plot, against its ranks' slices.
    lanes = []
    for lane in range(math.ceil(len(ranks) / k)):
        top = max(0, round(((lane * k - t["y0"]) / t["span"]) * hgt))
        bottom = min(hgt, round((((lane + 1) * k - t["y0"]) / t["span"]) * hgt))
        if bottom > top:
            lanes.append((lane, (top + bottom - 1) // 2))
    rows = page.evaluate(
        """([gutter, axis, w, h, mids]) => {
          const data = document.querySelector('.rk-canvas').getContext('2d').getImageData(gutter, axis, w, h).data;
          const hex = (i) => '#' + [0, 1, 2].map((c) => data[i + c].toString(16).padStart(2, '0')).join('');
          return mids.map((y) => Array.from({ length: w }, (_, x) => hex((y * w + x) * 4)));
        }""",
        [t["gutter"], t["axis"], w, hgt, [mid for _, mid in lanes]],
    )
    assert len(lanes) == math.ceil(len(ranks) / k)
    for (lane, _), row in zip(lanes, rows, strict=True):
        covered: set[int] = set()
        lane_colours = set()
        for r in ranks[lane * k : (lane + 1) * k]:
            for d in range(depths):
                for e in slices.get((r, d), []):
                    s, end = (e.start_us - from_us) * scale, (e.start_us + e.dur_us - from_us) * scale
                    x0 = math.floor(s) if s > 0 else 0
                    covered.update(range(x0, min(w, max(x0 + 1, math.ceil(end)))))
                    lane_colours.add(colours[e.name])
        painted = {x for x, c in enumerate(row) if c != "#fafafa"}
        if h["why"]["rank"] in ranks[lane * k : (lane + 1) * k]:  # the picked rank's lane is outlined
            painted -= {0, w - 1}
            covered -= {0, w - 1}
        assert covered <= painted, f"lane {lane}: pixels of slices left unpainted"
        near = covered | {x + 1 for x in covered} | {x - 1 for x in covered}
        assert painted <= near, f"lane {lane}: paint off the slices"
        assert {row[x] for x in painted} <= lane_colours, f"lane {lane}: a colour none of its slices has"
    assert page.errors == []
    page.close()


def test_many_wheel_events_a_frame_draw_once_a_frame(browser: Any, site: dict[str, str]) -> None:
    """Ten wheel events in each of 30 frames (Alt: time only): the timeline draws once a frame,
    never per event (the hook's draws), and every event counts (the window is the product of all
    300 zooms)."""
    page = open_ranks(browser, site["scaled"])
    whole = wait_hook(page, lambda h: h["timeline"]["prepared"] is True)["timeline"]
    counts = page.evaluate(
        """() => new Promise((resolve) => {
          const c = document.querySelector('.rk-canvas');
          const box = c.getBoundingClientRect();
          const counts = [];
          const tick = () => {
            counts.push(window.__tlscope.timeline.draws);
            if (counts.length <= 30) {
              for (let i = 0; i < 10; i += 1) {
                c.dispatchEvent(new WheelEvent('wheel', { deltaY: -4, altKey: true, clientX: box.left + box.width / 2,
                  clientY: box.top + box.height / 2, bubbles: true, cancelable: true }));
              }
            }
            if (counts.length < 34) requestAnimationFrame(tick); else resolve(counts);
          };
          requestAnimationFrame(tick);
        })"""
    )
    per_frame = [b - a for a, b in itertools.pairwise(counts)]
    assert max(per_frame) == 1 and sum(per_frame) >= 30, per_frame
    t = hook(page)["timeline"]
    assert t["draws"] == counts[-1]
    assert math.isclose(t["t1"] - t["t0"], (whole["t1"] - whole["t0"]) * math.exp(-4 * 0.002 * 300), rel_tol=1e-9)
    assert t["span"] == whole["span"], "Alt: time only"
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("height", [400, 900])
def test_rank_labels_and_headings_are_not_clipped(browser: Any, site: dict[str, str], height: int) -> None:
    """The gutter writes no rank label half under the time axis or past the canvas (the first lanes
    of a zoomed-out view are 4 px: their labels were drawn over by the axis), zoomed out and in; the
    table's headings fit their columns ('recompiles' was cut to 'recompile')."""
    page = open_ranks(browser, site["scaled"], height=height)
    box = page.locator(".rk-canvas").bounding_box()

    def check() -> None:
        t = hook(page)["timeline"]
        assert t["labels"], "some lanes labelled"
        assert all(t["axis"] + 6 <= y <= t["height"] - 6 for _, y in t["labels"]), t["labels"]

    check()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 3)
    for _ in range(6):
        page.mouse.wheel(0, -200)
    page.wait_for_timeout(200)
    check()
    clipped = page.evaluate(
        """() => [...document.querySelectorAll('.rk-thead > *')]
          .filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent)"""
    )
    assert clipped == []
    assert page.errors == []
    page.close()


def test_the_hover_box_follows_a_wheel_zoom(
    browser: Any, site: dict[str, str], jobs: dict[str, tuple[Path, Path]]
) -> None:
    """Hover a slice, then zoom with the wheel without moving the mouse: the hover names the slice
    under the pointer in the zoomed view, on the rank of the lane there (it kept naming the slice
    of before the zoom, in a lane of 8 ranks, over another rank's lane)."""
    from tlscope import timeline

    _, out = jobs["scaled"]
    ranks = sorted(line["rank"] for line in ranks_json(out)["ranks"])
    page = open_ranks(browser, site["scaled"], height=400)
    box = page.locator(".rk-canvas").bounding_box()
    assert hook(page)["timeline"]["ranksPerLane"] > 1
    y = box["y"] + box["height"] * 0.6
    for f in range(1, 40):  # a point over a slice, near the first compiles
        x = box["x"] + 72 + (box["width"] - 72) * f / 200
        page.mouse.move(x, y)
        page.wait_for_timeout(30)
        if hook(page).get("hover") is not None:
            break
    before = wait_hook(page, lambda h: h.get("hover") is not None)["hover"]
    for _ in range(12):
        if hook(page)["timeline"]["ranksPerLane"] == 1:
            break
        page.mouse.wheel(0, -300)
        page.wait_for_timeout(50)
    page.wait_for_timeout(200)
    h = wait_hook(page, lambda h: h["timeline"]["ranksPerLane"] == 1)
    t, hovered = h["timeline"], h.get("hover")
    plot_h, plot_w = t["height"] - t["axis"], t["width"] - t["gutter"]
    rank = ranks[math.floor(t["y0"] + (y - box["y"] - t["axis"]) / plot_h * t["span"])]
    at = t["origin"] + t["t0"] + (x - box["x"] - t["gutter"]) / plot_w * (t["t1"] - t["t0"])
    slack = (t["t1"] - t["t0"]) / plot_w
    under = [
        e for e in timeline.read(out) if e.rank == rank and e.start_us - slack <= at <= e.start_us + e.dur_us + slack
    ]
    if not under:
        assert hovered is None, (hovered, before)
    else:
        deepest = max(e.depth for e in under)
        assert hovered is not None and hovered["rank"] == rank, (hovered, before)
        assert (hovered["name"], hovered["start_us"], hovered["depth"]) in {
            (e.name, e.start_us, e.depth) for e in under if e.depth == deepest
        }
    assert page.errors == []
    page.close()
