"""vLLM's compiles (compiles.json `vllm`, format 1.22): the config, each compile range and each
piecewise compile, read from tlparse's upstream vllm_sample.log (checked against the log itself,
parsed here independently) and from hostile logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import TLPARSE_UPSTREAM, require_shared, write_trace

import tlscope


def _sample() -> Path:
    require_shared()
    return TLPARSE_UPSTREAM / "vllm_sample.log"


def _records(log: Path) -> list[tuple[int, dict[str, Any], str]]:
    """(log line, envelope, payload) of every envelope, read without tlscope."""
    found: list[tuple[int, dict[str, Any], list[str]]] = []
    for n, line in enumerate(log.read_text().split("\n"), 1):
        if line.startswith("\t") and found:
            found[-1][2].append(line[1:])
        elif "] {" in line:
            found.append((n, json.loads(line.split("] ", 1)[1]), []))
    return [(n, env, "\n".join(payload)) for n, env, payload in found]


def _name(env: dict[str, Any]) -> str | None:
    for key in ("artifact", "graph_dump"):
        if isinstance(env.get(key), dict):
            name = env[key].get("name")
            return name if isinstance(name, str) else None
    return None


def test_the_sample_s_config_ranges_and_pieces_are_the_log_s() -> None:
    log = _sample()
    records = _records(log)
    (found,) = tlscope.load(log).vllm
    config_line, config_env, config = next(r for r in records if _name(r[1]) == "vllm_compilation_config")
    assert found.compile_id == "[0/0]" == f"[{config_env['frame_id']}/{config_env['frame_compile_id']}]"
    assert found.config == json.loads(config) and found.config_event is not None
    assert found.config_event.log_line == config_line
    split = next(n for n, env, _ in records if _name(env) == "vllm_piecewise_split_graph")
    assert found.split_graph is not None and found.split_graph.log_line == split
    starts = [(n, json.loads(p)) for n, env, p in records if _name(env) == "vllm_piecewise_compile_start"]
    assert [(p.submod, p.range_start, p.range_end, p.total) for p in found.piecewise] == [
        (s["submod_name"], s["compile_range_start"], s["compile_range_end"], s["total_piecewise_compiles"])
        for _, s in starts
    ]
    # Each piece's references: the records after its start, before the next start.
    bounds = [n for n, _ in starts] + [len(log.read_text().split("\n")) + 1]
    for piece, first, last in zip(found.piecewise, bounds, bounds[1:], strict=False):
        after = [
            (n, _name(env) if "artifact" in env else next(iter(env))) for n, env, p in records if first < n < last and p
        ]
        assert [(r.log_line, r.kind) for r in (*piece.graphs, *piece.code)] == after
    assert [r.sentence for r in found.ranges] == [
        "sizes 1-16384: 2 of 33 piecewise compiles logged",
        "size 8 (a CUDA graph capture size): 2 of 33 piecewise compiles logged",
    ]


def test_the_run_summary_and_report_say_the_vllm_compiles(tmp_path: Path) -> None:
    out = tmp_path / "out"

    def run(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "tlscope", *args], check=True, capture_output=True, text=True
        ).stdout

    line = "1 vLLM compile: 4 piecewise compiles logged in 2 compile ranges"
    assert f"{line}.\n" in run(str(_sample()), "-o", str(out), "--no-browser")
    said = run("summary", str(out), "--width", "200")
    assert line in said and "model meta-llama/Llama-3.1-8B" in said and "2 of 33 piecewise compiles logged" in said
    assert json.loads(run("summary", str(out), "--json"))["vllm"][0]["config"]["backend"] == "inductor"
    page = (out / "index.html").read_text()
    assert '<h2 id="vllm-0">' in page and "<td>submod_2</td>" in page
    pieces = json.loads((out / "compiles.json").read_text())["vllm"][0]["piecewise"]
    for ref in (r for piece in pieces for r in piece["graphs"]):
        assert f'<a href="{ref["payload_filename"]}">{ref.get("name") or ref["kind"]}</a>' in page
        assert (out / ref["payload_filename"]).is_file()
    assert '">vllm_submod_2</a>' in page  # a piece's dump, by its name (1.25), not "graph_dump"


def _start(**fields: Any) -> tuple[dict[str, Any], str]:
    return {"artifact": {"name": "vllm_piecewise_compile_start", "encoding": "json"}}, json.dumps(fields)


def test_hostile_vllm_artifacts(tmp_path: Path) -> None:
    """A start before any config, a start that is not JSON or has fields of the wrong type, a config
    that is not an object or holds nested values and long strings, a piece's records ended by a
    record of a compile id, more references than kept, more pieces than kept."""
    dump = ({"graph_dump": {"name": "vllm_submod_0"}}, "def forward(self, x):\n    return (x,)")
    config = {"model": "m" * 5000, "nested": {"a": 1}, "list": [1], "mode": 3, **{f"k{i}": i for i in range(300)}}
    records: list[tuple[dict[str, Any], str | None]] = [
        _start(piecewise_index=0, submod_name="submod_0", compile_range_start=1, compile_range_end=8),
        dump,
        ({"artifact": {"name": "vllm_piecewise_compile_start", "encoding": "json"}}, "{not json"),
        dump,  # after a start that was not read: no piece's
        _start(piecewise_index="zero"),
        (
            {"artifact": {"name": "vllm_compilation_config", "encoding": "json"}, "frame_id": 0, "frame_compile_id": 0},
            json.dumps(config),
        ),
        _start(
            piecewise_index=1,
            submod_name="submod_2",
            total_piecewise_compiles=3,
            is_single_size=True,
            compile_range_start=4,
        ),
        *[dump] * 25,
        ({"dynamo_output_graph": {}, "frame_id": 1, "frame_compile_id": 0}, "def forward(self):\n    return ()"),
        dump,  # after a record of a compile id: no piece's
        ({"artifact": {"name": "vllm_compilation_config", "encoding": "json"}}, json.dumps(["not", "an", "object"])),
    ]
    first, second, third = tlscope.load(write_trace(tmp_path / "hostile.log", records)).vllm
    assert (first.compile_id, first.config, [len(p.graphs) for p in first.piecewise]) == (None, {}, [1])
    assert second.compile_id == "[0/0]" and len(second.config) == 200 and len(second.config["model"]) == 2000
    assert "nested" not in second.config and "list" not in second.config and second.config["mode"] == 3
    (piece,) = second.piecewise
    assert (piece.submod, piece.single_size, len(piece.graphs)) == ("submod_2", True, 20)
    assert [r.sentence for r in second.ranges] == ["size 4: 1 of 3 piecewise compiles logged"]
    assert third.config == {} and third.piecewise == []
    many = [_start(piecewise_index=i, compile_range_start=1, compile_range_end=2) for i in range(10_003)]
    (found,) = tlscope.load(write_trace(tmp_path / "many.log", many)).vllm
    assert len(found.piecewise) == 10_000 and found.ranges[0].logged == 10_000


def test_the_explorer_shows_the_vllm_compile_with_its_compile_id(browser: Any, tmp_path: Path) -> None:
    """The Compile view of the id that logged vLLM's config: the config, each range's sentence and a
    row per piece whose buttons select the piece's graphs (the submodule's dump opens)."""
    from helpers import open_explorer, served_explorer, wait_hook

    from tlscope.cli import main as tlscope_main

    out = tmp_path / "vllm"
    assert tlscope_main([str(_sample()), "-o", str(out), "--no-browser"]) == 0
    (found,) = json.loads((out / "compiles.json").read_text())["vllm"]
    with served_explorer({"vllm": out}, tmp_path / "serve") as site:
        page = open_explorer(browser, site.explorer("vllm"), height=1000)
        page.click("#cids [data-cid='[0/0]']")
        h = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == "[0/0]")
        assert h["compile"]["vllm"] == [len(found["piecewise"])] == [4]
        box = page.locator(".cp-sec", has_text="vLLM compile 0")
        text = box.text_content()
        assert all(r["sentence"] in text for r in found["ranges"]) and found["config"]["model"] in text
        ref = found["piecewise"][1]["graphs"][0]
        assert (ref["kind"], ref["name"]) == ("graph_dump", "vllm_submod_2")  # the piece's own dump
        assert (
            box.locator(".cp-sub", has_text="submod_2, sizes 1-16384")
            .locator(".cp-ref")
            .first.text_content()
            .startswith("vllm_submod_2 · ")
        )
        box.locator(".cp-sub", has_text="submod_2, sizes 1-16384").locator(".cp-ref").first.click()
        h = wait_hook(page, lambda h: h.get("selected", {}).get("log_line") == ref["log_line"])
        wait_hook(page, lambda h: bool(h.get("payload")))
        first = (out / ref["payload_filename"]).read_text().split("\n")[0]
        assert page.locator(".code-line .src").first.text_content() == first
        assert page.errors == []
        page.close()
