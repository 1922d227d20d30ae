"""The explorer's Provenance view (`?view=provenance`, issue 23 point 6) in headless Chromium: every
compilation that logged Inductor provenance is in the picker, picking the second shows its texts,
and clicking a line of its generated code highlights exactly the lines provenance.json links it to.

The trace: tlparse's two real JIT provenance logs one after the other, the second's compile id
renumbered to [1/0] (a real trace with two compile ids logging provenance needs a CUDA-less torch
run of a model compiled twice, which the shared traces lack), so each compile id's mapping is a real
one. What the page shows is checked against provenance.json and the payloads read here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import open_explorer, served_explorer, wait_hook


@pytest.fixture(scope="module")
def folder(tlparse_traces: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tlscope.cli import main as tlscope_main

    inputs = tlparse_traces / "inputs"
    first = (inputs / "inductor_provenance_jit_log.txt").read_text()
    second = (inputs / "inductor_provenance_jit_cuda_log.txt").read_text()
    second = second.replace('"frame_id": 0, "frame_compile_id": 0', '"frame_id": 1, "frame_compile_id": 0')
    root = tmp_path_factory.mktemp("provenance")
    log = root / "two_compile_ids.log"
    log.write_text(first.rstrip("\n") + "\n" + second)
    out = root / "out"
    assert tlscope_main([str(log), "-o", str(out), "--no-browser"]) == 0
    return out


@pytest.fixture(scope="module")
def site(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_explorer({"trace": folder}, tmp_path_factory.mktemp("serve")) as served:
        yield served.explorer("trace")


def entries(folder: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((folder / "provenance.json").read_text())["compilations"]
    return data


def highlighted(page: Any, pane: str) -> set[int]:
    lines = page.locator(f'.pv-text[data-pane="{pane}"] .pv-hl').evaluate_all("rows => rows.map((r) => r.dataset.line)")
    return {int(n) for n in lines}


def test_picking_the_second_compile_id_and_clicking_a_code_line(browser: Any, site: str, folder: Path) -> None:
    first, second = entries(folder)
    assert (first["id"], second["id"]) == ("[0/0]", "[1/0]")
    page = open_explorer(browser, f"{site}&view=provenance", height=900)
    state = wait_hook(page, lambda h: (h.get("provenance") or {}).get("ready") is True)["provenance"]
    assert state["compileIds"] == ["[0/0]", "[1/0]"] and state["shown"] == "[0/0]"
    page.select_option("#provenance-cid", "1")
    wait_hook(page, lambda h: h["provenance"]["shown"] == "[1/0]" and h["provenance"]["ready"] is True)
    code = (folder / second["code"]).read_text().split("\n")
    shown = page.locator('.pv-text[data-pane="code"] .pv-src').all_text_contents()
    assert shown == code
    # A code line linked to post-grad nodes: the post-grad lines it names, and their pre-grad lines.
    line, post = next(iter(second["code_to_post"].items()))
    pre = {n for p in post for n in second["post_to_pre"].get(str(p), [])}
    page.locator(f'.pv-text[data-pane="code"] .pv-line[data-line="{line}"]').click()
    state = wait_hook(page, lambda h: h["provenance"]["linked"] > 0)["provenance"]
    assert highlighted(page, "post") == set(post) and post
    assert highlighted(page, "pre") == pre and pre
    assert state["linked"] == len(set(post)) + len(pre)
    # The second compile id's links, not the first's: its code is another payload.
    assert second["code"] != first["code"]
    assert page.errors == []


def test_the_url_names_the_compile_id_and_a_pre_grad_line_links_forward(browser: Any, site: str, folder: Path) -> None:
    second = entries(folder)[1]
    page = open_explorer(browser, f"{site}&view=provenance&cid={quote('[1/0]')}", height=900)
    wait_hook(page, lambda h: (h.get("provenance") or {}).get("shown") == "[1/0]")
    line, post = next(iter(second["pre_to_post"].items()))
    code = {n for p in post for n in second["post_to_code"].get(str(p), [])}
    page.locator(f'.pv-text[data-pane="pre"] .pv-line[data-line="{line}"]').click()
    wait_hook(page, lambda h: h["provenance"]["linked"] > 0)
    assert highlighted(page, "post") == set(post) and post
    assert highlighted(page, "code") == code and code
    assert page.errors == []
