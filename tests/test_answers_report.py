"""The answers in the HTML report: index.html's sections and badges, compile_time.html's flame graph.

They show compiles.json's and log_size.json's data (checked against the log in test_answers.py):
here every compile id's row links to sections that exist and say the same thing, and the flame
graph's widths are compile time.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.cli import main as cli

SCENARIOS = ("recompiles_dynamic", "graph_breaks_repeated", "failures")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("answers-report")
    for scenario in SCENARIOS:
        assert cli([str(CORPUS / scenario), "-o", str(root / scenario), "--no-browser"]) == 0
    return {s: root / s for s in SCENARIOS}


def load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def ids_in(page: str) -> set[str]:
    return {html.unescape(m) for m in re.findall(r'\bid="([^"]+)"', page)}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_compile_row_links_to_sections_that_exist(scenario: str, reports: dict[str, Path]) -> None:
    folder = reports[scenario]
    page = (folder / "index.html").read_text(encoding="utf-8")
    targets = ids_in(page)
    assert {"compiles", "graph-breaks", "recompiles", "log-size"} <= targets
    compiles = load(folder, "compiles.json")
    for entry in compiles["compiles"]:
        if entry["status"] == "outside":
            continue
        row = re.search(rf'<li><a id="{re.escape(html.escape(entry["id"]))}">[^<]*</a>(.*)', page)
        assert row, entry["id"]
        badges = re.findall(r'class="answer-badge [^"]*" href="#([^"]+)">([^<]*)<', row.group(1))
        assert badges[0][1] == entry["status"].replace("_", " ")
        for href, _ in badges:
            assert html.unescape(href) in targets, (entry["id"], href)
        has_recompile = any(text == "why recompiled" for _, text in badges)
        assert has_recompile == (entry["recompile"] is not None)
        has_break = any(text == "where it broke" for _, text in badges)
        assert has_break == bool(entry["graph_breaks"])


def test_sections_say_what_compiles_json_says(reports: dict[str, Path]) -> None:
    folder = reports["graph_breaks_repeated"]
    page = html.unescape((folder / "index.html").read_text(encoding="utf-8"))
    for group in load(folder, "compiles.json")["graph_breaks"]:
        # The reason cell holds the reason, then torch's own hints for it (if it logged any).
        cell = f"<td>{group['count']}</td><td>{group['reason']}"
        assert f"{cell}</td>" in page or f"{cell}<br>" in page, group["reason"]
        for hint in group["hints"]:
            assert f"torch's hint: {hint}" in page
    folder = reports["recompiles_dynamic"]
    page = html.unescape((folder / "index.html").read_text(encoding="utf-8"))
    for entry in load(folder, "compiles.json")["compiles"]:
        for failure in (entry["recompile"] or {}).get("guard_failures", []):
            assert f"<strong>{failure['explanation']}</strong>" in page
    size = load(folder, "log_size.json")
    assert f"{size['total_bytes']} bytes, {size['total_lines']} lines" in page


def flame_data(folder: Path) -> dict[str, Any]:
    page = (folder / "compile_time.html").read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="flame-data">(.*?)</script>', page, re.S)
    assert found
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_flame_graph_widths_are_compile_time(reports: dict[str, Path]) -> None:
    folder = reports["recompiles_dynamic"]
    root = flame_data(folder)
    timed = [c for c in load(folder, "compiles.json")["compiles"] if c["time"]]
    assert root["seconds"] == pytest.approx(sum(c["time"]["duration_s"] for c in timed), abs=1e-5)
    assert sorted(root["compiles"]) == sorted(c["id"] for c in timed)
    stack = [root]
    while stack:
        node = stack.pop()
        if node["children"]:
            assert sum(c["seconds"] for c in node["children"]) <= node["seconds"] + 1e-5
        stack.extend(node["children"])
    shaped = [n for n in root["children"][0]["children"] if n["name"] == "shaped"]
    assert shaped and len(shaped[0]["compiles"]) == 7


def test_flame_graph_lists_compiles_on_click(reports: dict[str, Path], browser: Any) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto((reports["recompiles_dynamic"] / "compile_time.html").as_uri())
    page.click("#flame div.frame:has-text('shaped')")
    items = page.locator("#details li a").all_text_contents()
    assert items == [f"[0/{n}]" for n in range(7)]
    widths = page.eval_on_selector_all(
        "#flame div.frame", "els => els.map(e => [e.textContent, e.getBoundingClientRect().width])"
    )
    root_width = widths[0][1]
    shaped = next(w for text, w in widths if text.startswith("shaped"))
    data = flame_data(reports["recompiles_dynamic"])
    shaped_s = next(n for n in data["children"][0]["children"] if n["name"] == "shaped")["seconds"]
    assert shaped / root_width == pytest.approx(shaped_s / data["seconds"], abs=0.01)
    assert errors == []
    page.close()


def test_an_aot_inductor_compile_in_the_flame_graph_links_its_row(tmp_path: Path, browser: Any) -> None:
    """aoti: the AOT Inductor compile (no compile id) is listed on click and its link opens its
    row of the index's AOT Inductor section."""
    out = tmp_path / "aoti"
    assert cli([str(CORPUS / "aoti"), "-o", str(out), "--no-browser"]) == 0
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto((out / "compile_time.html").as_uri())
    page.click("#flame div.frame:has-text('aoti_compile_and_package (AOT Inductor)')")
    link = page.locator("#details li a")
    assert link.all_text_contents() == ["AOT Inductor compile 0"]
    link.click()
    page.wait_for_url("**/index.html#aot-inductor-0")
    assert page.locator("#aot-inductor-0").count() == 1
    assert errors == []
    page.close()


@pytest.mark.parametrize("name", SCENARIOS)
def test_flame_graph_draws_every_timed_frame_in_colours(reports: dict[str, Path], browser: Any, name: str) -> None:
    """Issue 20: no frame with compile time is left out for being narrow; frames of different
    functions have different colours (the graph was one colour)."""
    data = flame_data(reports[name])
    nodes, stack = [], [data]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node["children"])
    timed = [n for n in nodes if n["seconds"] > 0]
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto((reports[name] / "compile_time.html").as_uri())
    frames = page.eval_on_selector_all(
        "#flame div.frame",
        "els => els.map(e => [getComputedStyle(e).backgroundColor, e.getBoundingClientRect().width])",
    )
    page.close()
    assert len(frames) == len(timed)
    assert all(width >= 1 for _, width in frames)
    functions = {(n["name"], n.get("file")) for n in timed}
    assert len({colour for colour, _ in frames}) >= min(3, len(functions))


def test_flame_graph_data_cannot_close_its_script(tmp_path: Path) -> None:
    """A function name from the log holding `</script>` stays data (tojson escapes `<`)."""
    source = next((CORPUS / "simple").glob("*.log.gz"))
    import gzip

    text = gzip.decompress(source.read_bytes()).decode()
    hostile = text.replace('"co_name": "inner"', '"co_name": "</script><script>alert(1)</script>"')
    assert hostile != text
    log = tmp_path / "hostile.log"
    log.write_text(hostile, encoding="utf-8")
    assert cli([str(log), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    page = (tmp_path / "out" / "compile_time.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in page
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in index


def test_a_failed_compile_of_a_reused_id_stays_visible(tmp_path: Path) -> None:
    """compile_failure's [0/0] failed, then (after torch._dynamo.reset()) compiled: its status is
    the last compile's, `ok`, and the index still says a compile of it failed (issue 20, finding 3)."""
    out = tmp_path / "out"
    assert cli([str(CORPUS / "compile_failure"), "-o", str(out), "--no-browser"]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "1 compile id ([0/0]) also held a failed compile" in page
    row = page.split('<a id="[0/0]">[0/0]</a>', 1)[1].split("<ul>", 1)[0]
    assert 'answer-ok" href="#compiles">ok</a>' in row and "an earlier compile failed" in row
