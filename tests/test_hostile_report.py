"""A hostile trace: traversal names, <script> in every string, javascript: links.

Nothing may be written outside OUT, and the report opened in headless Chromium must run no
injected script (each payload would set window.__pwned).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHROMIUM_ARGS, chromium_or_skip

from tlscope.cli import main as tlscope_main

PREFIX = "V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] "
XSS = "<script>window.__pwned=1</script><img src=x onerror='window.__pwned=1'>"
CID = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}


def _line(event: dict[str, object], payload: str | None = None) -> str:
    import hashlib

    if payload is None:
        return PREFIX + json.dumps(event) + "\n"
    event = {**event, "has_payload": hashlib.md5(payload.encode()).hexdigest()}
    return PREFIX + json.dumps(event) + "\n" + "".join("\t" + p + "\n" for p in payload.split("\n"))


def hostile_log(path: Path, outside: Path) -> None:
    stack = [{"line": 1, "name": XSS, "filename": 0, "loc": XSS}]
    lines = [
        _line({"str": [XSS, 0]}),
        _line({"dynamo_start": {"stack": stack}, **CID}),
        _line({"artifact": {"name": "../../escape", "encoding": "string"}, **CID}, "x"),
        _line({"artifact": {"name": str(outside / "abs"), "encoding": "json"}, **CID}, "{}"),
        _line({"graph_dump": {"name": "../../../gd"}, **CID}, "g"),
        _line({"optimize_ddp_split_child": {"name": "../x"}, **CID}, "c"),
        _line({"dump_file": {"name": "../../df"}, **CID}, XSS),
        _line({"link": {"name": XSS, "url": "javascript:window.__pwned=1"}, **CID}),
        _line({"dynamo_guards": {}, **CID}, json.dumps([{"code": XSS}])),
        _line({"inductor_output_code": {"filename": "../../" + XSS}, **CID}, "x = '" + XSS + "'"),
        _line({"symbolic_shape_specialization": {"symbol": XSS, "sources": [XSS], "value": XSS}, **CID}),
        _line({"guard_added_fast": {"expr": XSS, "stack": stack}, **CID}),
        _line({"stack": stack, **CID}),
        _line(
            {
                "compilation_metrics": {
                    "co_name": XSS,
                    "co_filename": XSS,
                    "co_firstlineno": 1,
                    "fail_type": XSS,
                    "fail_reason": XSS,
                    "fail_user_frame_filename": XSS,
                    "restart_reasons": [XSS],
                    "compliant_custom_ops": [XSS],
                    "non_compliant_ops": [XSS],
                },
                **CID,
            }
        ),
        _line({"bwd_compilation_metrics": {"fail_type": XSS, "fail_reason": XSS}, **CID}),
        _line({"guard_added": {"expr": XSS, "prefix": "eval", "frame_locals": {"locals": {XSS: XSS}}}, **CID}),
        _line({"missing_fake_kernel": {"op": XSS}, **CID}),
    ]
    path.write_text("".join(lines))


def _all_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize("flags", [[], ["-p"], ["-e"], ["-i"]])
def test_hostile_trace_stays_in_out_and_escapes(flags: list[str], tmp_path: Path) -> None:
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    log = work / "hostile.log"
    hostile_log(log, outside)
    before = _all_files(tmp_path)
    out = work / "out"
    assert tlscope_main([str(log), "-o", str(out), "--no-browser", *flags]) == 0
    new = _all_files(tmp_path) - before
    assert all(p == out or out in p.parents for p in new), sorted(map(str, new))
    for page in out.rglob("*.html"):
        text = page.read_text()
        assert "<script>window.__pwned" not in text, page
        assert "onerror='window" not in text, page
        assert 'href="javascript:' not in text.lower() and "href='javascript:" not in text.lower(), page


def test_hostile_report_runs_no_script_in_chromium(tmp_path: Path) -> None:
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    log = tmp_path / "hostile.log"
    hostile_log(log, tmp_path)
    out = tmp_path / "out"
    assert tlscope_main([str(log), "-o", str(out), "--no-browser", "-i"]) == 0
    export_out = tmp_path / "export"
    assert tlscope_main([str(log), "-o", str(export_out), "--no-browser", "-e"]) == 0
    pages = sorted(out.rglob("*.html")) + sorted(export_out.rglob("*.html"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page()
        for html in pages:
            page.goto(html.as_uri())
            page.wait_for_load_state("load")
            assert page.evaluate("window.__pwned === undefined"), html
        browser.close()
