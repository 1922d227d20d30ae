"""Fullgraph captures (format 1.20, FORMAT.md "Fullgraph captures"): `torch.compile(...).aot_compile`
and strict torch.export log their backend and metrics outside any compile id; compiles.json reads
them as the captured compile's. Checked on the corpus's real logs (aot_compile, export_strict) and
on hostile ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
from helpers import CORPUS, write_trace

import tlscope
from tlscope.format.compiles import CompileEntry


def _log_of(scenario: str) -> Path:
    (log,) = sorted((CORPUS / scenario).glob("*.log.gz"))
    return log


def _entries(log: Path) -> dict[str, CompileEntry]:
    return {entry.id: entry for entry in tlscope.load(log).compiles}


def _line_of(text: str) -> int:
    lines = (CORPUS.parent / "scenarios" / "aot_compile.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def _envelopes(log: Path) -> list[dict[str, Any]]:
    import gzip

    text = gzip.decompress(log.read_bytes()).decode()
    return [json.loads(line.split("] ", 1)[1]) for line in text.splitlines() if line and not line.startswith("\t")]


def test_aot_compiles_compile_has_its_backend_metrics_time_and_the_call_that_made_it() -> None:
    log = _log_of("aot_compile")
    entries = _entries(log)
    block, branchy, outside = entries["[0/0]"], entries["[1/0]"], entries["[-/-]"]
    # Before 1.20 both were metrics_missing with no time, graphs or code.
    assert (block.status, block.capture) == ("ok", "aot_compile")
    assert (branchy.status, branchy.capture) == ("failed", "aot_compile")
    assert outside.capture is None and outside.status == "outside"
    # The metrics record after the span is the compile's; its time is the record's own span.
    metrics = [e["compilation_metrics"] for e in _envelopes(log) if "compilation_metrics" in e]
    assert [r.log_line for r in block.metrics_records] and len(metrics) == 2
    assert block.time is not None and block.time.source == "compilation_metrics"
    assert block.time.duration_s == round((metrics[0]["end_time_us"] - metrics[0]["start_time_us"]) / 1e6, 6)
    assert block.time.duration_s is not None and block.time.duration_s > 1  # Inductor's C++ compile is in it
    # What Inductor made, logged outside any compile id, is this compile's.
    kinds = {g.kind for g in block.graphs}
    assert {"dynamo_output_graph", "aot_inference_graph", "inductor_post_grad_graph"} <= kinds
    assert "inductor_output_code" in {c.kind for c in block.code}
    assert block.guards is not None and block.guards.kind == "dynamo_cpp_guards_str"
    assert {p.name for p in block.phases} >= {"inductor_compile", "code_gen", "bytecode_tracing"}
    # ... and no longer `[-/-]`'s, which still counts the records (raw_lines: its own).
    assert not outside.graphs and not outside.code and outside.events > block.events
    # No dynamo_start: the user frame is the line that called aot_compile.
    assert block.user_frame is not None and block.user_frame.line == _line_of("aot_compile(((block, x), {}))")
    assert branchy.user_frame is not None and branchy.user_frame.line == _line_of("torch.compile(branchy")
    # The failure, from the metrics' reason (no dynamo_error artifact): the user's `if`.
    failure = branchy.failure
    assert failure is not None and failure.type == "Unsupported" and failure.reason == "Data-dependent branching"
    assert failure.user_frame is not None and failure.user_frame.line == _line_of("if x.sum() > 0")
    assert any("torch.cond" in hint for hint in failure.hints)


def test_an_aot_compile_failure_is_not_an_export_call() -> None:
    trace = tlscope.load(_log_of("aot_compile"))
    assert trace.exports == [] and trace.exports_note is None


def test_strict_exports_calls_are_one_compile_holding_each_calls_metrics() -> None:
    entry = _entries(_log_of("export_strict"))["[0/0]"]
    assert entry.capture == "export"
    assert [r.status for r in entry.metrics_records] == ["failed", "failed", "ok"]
    # The failures first, the last call's outcome as the status (as after torch._dynamo.reset()).
    assert entry.status == "ok" and entry.failure is not None and entry.failure.type == "UserError"
    assert entry.user_frame is not None and entry.user_frame.file is not None
    assert entry.user_frame.file.endswith("export_strict.py")
    assert {g.kind for g in entry.graphs} == {"dynamo_output_graph"}
    # Strict export logs no function: the failure's first answer says what the compile was (1.48).
    (failure,) = [a for a in tlscope.load(_log_of("export_strict")).first_answers if a.kind == "failure"]
    assert failure.text.startswith("first failure: [0/0] (export) failed at export_failures.py:")


def test_summary_names_the_capture_and_lists_no_export(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", str(_log_of("aot_compile")), "--width", "200"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "2 compiles: 1 ok, 1 failed" in out and "(aot_compile)" in out
    # A capture with no function is named once a line: its failure by the capture, its slowest
    # compile by the capture and the line that asked for it (1.48).
    assert "first failure: [1/0] (aot_compile) failed at" in out and "[0/0] (aot_compile at aot_compile.py:" in out
    assert "(aot_compile) (aot_compile" not in out
    assert "export" not in out.replace("(aot_compile)", "")
    rows = json.loads(
        subprocess.run(
            [sys.executable, "-m", "tlscope", "summary", str(_log_of("aot_compile")), "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )["compiles"]
    assert [(r["id"], r["status"], r["capture"]) for r in rows] == [
        ("[0/0]", "ok", "aot_compile"),
        ("[1/0]", "failed", "aot_compile"),
    ]


def _chromium(name: str, ph: str, **ids: int) -> tuple[dict[str, Any], str]:
    event = {"name": name, "ph": ph, "ts": 1.0e15, "pid": 1, "tid": 1, "cat": "dynamo_timed", "args": {}}
    return {"chromium_event": {}, **ids}, json.dumps(event)


ID = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
GRAPH = "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        return (x,)\n"
CODE = "def call(args):\n    return args\n"


def test_hostile_captures_attribute_only_what_the_rule_says(tmp_path: Path) -> None:
    """A span never closed, an end with no begin, a begin with no compile traced, records after
    the span that are not metrics, metrics after another compile started, a junk span payload,
    times that are not numbers or run backwards."""
    metrics = {"compilation_metrics": {"fail_type": None, "start_time_us": 5, "end_time_us": 3}}
    open_span = write_trace(
        tmp_path / "open.log",
        [
            _chromium("fullgraph_capture", "B"),
            ({"dynamo_output_graph": {}, **ID}, GRAPH),
            ({"inductor_output_code": {}}, CODE),
            (metrics, None),  # the span never ends (a cut log): still the compile's
        ],
    )
    entry = _entries(open_span)["[0/0]"]
    assert entry.capture == "fullgraph" and [c.kind for c in entry.code] == ["inductor_output_code"]
    assert entry.status == "ok" and entry.time is None  # end before start: no time invented
    no_begin = write_trace(
        tmp_path / "nobegin.log",
        [
            ({"dynamo_output_graph": {}, **ID}, GRAPH),
            _chromium("fullgraph_capture", "E"),
            ({"inductor_output_code": {}}, CODE),
            (metrics, None),
        ],
    )
    entries = _entries(no_begin)
    assert entries["[0/0]"].capture is None and entries["[0/0]"].status == "metrics_missing"
    assert [c.kind for c in entries["[-/-]"].code] == ["inductor_output_code"]
    nothing_traced = write_trace(
        tmp_path / "untraced.log",
        [
            _chromium("fullgraph_capture", "B"),
            ({"inductor_output_code": {}}, CODE),
            _chromium("fullgraph_capture", "E"),
            (metrics, None),
        ],
    )
    assert [e.capture for e in _entries(nothing_traced).values()] == [None]
    after = write_trace(
        tmp_path / "after.log",
        [
            _chromium("fullgraph_capture", "B"),
            ({"dynamo_output_graph": {}, **ID}, GRAPH),
            _chromium("fullgraph_capture", "E"),
            ({"inductor_output_code": {}}, CODE),  # after the span: not a metrics record
            ({"dynamo_output_graph": {}, "frame_id": 1, "frame_compile_id": 0, "attempt": 0}, GRAPH),
            (metrics, None),  # after a compile of its own started: not the capture's
        ],
    )
    entries = _entries(after)
    assert entries["[0/0]"].status == "metrics_missing" and entries["[0/0]"].capture is None
    assert entries["[1/0]"].status == "metrics_missing" and entries["[-/-]"].metrics_records
    junk = write_trace(
        tmp_path / "junk.log",
        [
            ({"chromium_event": {}}, "{not json"),
            ({"chromium_event": {}}, json.dumps(["fullgraph_capture"])),
            ({"chromium_event": {}}, json.dumps({"name": "fullgraph_capture", "ph": 7})),
            ({"dynamo_output_graph": {}, **ID}, GRAPH),
            ({"compilation_metrics": {"start_time_us": "soon", "end_time_us": None}}, None),
        ],
    )
    assert _entries(junk)["[0/0]"].capture is None


def test_the_api_is_read_from_the_records_stacks(tmp_path: Path) -> None:
    """`export` when a frame is under torch/export/, `aot_compile` for torch/_dynamo/aot_compile.py
    (interned or not), `fullgraph` otherwise; a failed aot_compile capture is no export call, a
    failed export one is."""

    def log(name: str, files: list[str]) -> Path:
        strings = [({"str": [file, n]}, None) for n, file in enumerate(files)]
        stack = [{"line": 1, "name": "f", "filename": n} for n in range(len(files))]
        failed = {"compilation_metrics": {"fail_type": "Unsupported", "fail_reason": "no"}, "stack": stack}
        return write_trace(
            tmp_path / f"{name}.log",
            [
                *strings,
                _chromium("fullgraph_capture", "B"),
                ({"dynamo_output_graph": {}, **ID}, GRAPH),
                _chromium("fullgraph_capture", "E"),
                (failed, None),
            ],
        )

    export = log("export", ["/x/main.py", "/v/site-packages/torch/export/_trace.py", "/v/torch/_dynamo/aot_compile.py"])
    # AOT Inductor's failed metrics (a stack through torch/_inductor, no capture span): no export call.
    aoti = log("aoti", ["/x/main.py", "/v/site-packages/torch/_inductor/__init__.py"])
    assert tlscope.load(aoti).exports == []
    aot = log("aot", ["/x/main.py", "/v/site-packages/torch/_dynamo/aot_compile.py"])
    other = log("other", ["/x/main.py", "/v/site-packages/torch/_dynamo/eval_frame.py"])
    assert _entries(export)["[0/0]"].capture == "export" and len(tlscope.load(export).exports) == 1
    assert _entries(aot)["[0/0]"].capture == "aot_compile" and tlscope.load(aot).exports == []
    assert _entries(other)["[0/0]"].capture == "fullgraph"
    for entry in (_entries(export)["[0/0]"], _entries(aot)["[0/0]"]):
        assert entry.status == "failed" and entry.user_frame is not None and entry.user_frame.file == "/x/main.py"


def test_an_aot_inductor_compile_is_read_from_its_span() -> None:
    """corpus aoti: torch.export, then aoti_compile_and_package. Before 1.21 the log had no compile:
    its graphs, C++ code and metrics were `[-/-]`'s."""
    log = _log_of("aoti")
    trace = tlscope.load(log)
    (aoti,) = trace.aot_inductor
    assert aoti.status == "ok" and aoti.failure is None
    (metrics,) = [e["compilation_metrics"] for e in _envelopes(log) if "compilation_metrics" in e]
    assert aoti.time is not None and aoti.time.source == "compilation_metrics"
    assert aoti.time.duration_s == round((metrics["end_time_us"] - metrics["start_time_us"]) / 1e6, 6)
    assert [r.kind for r in aoti.metrics_records] == ["compilation_metrics"]
    assert {"before_pre_grad_graph", "aot_inference_graph", "inductor_post_grad_graph"} <= {g.kind for g in aoti.graphs}
    assert sorted(c.kind for c in aoti.code) == ["fx_graph_runnable", "graph_dump", "graph_dump"]
    # Each graph_dump's name, as its envelope logs it (1.25): what the report and explorer label it.
    dumps = {e["graph_dump"]["name"] for e in _envelopes(log) if "graph_dump" in e}
    assert dumps == {"inductor_aot_wrapper_code", "inductor_aot_kernel_code"}
    assert {c.name for c in aoti.code if c.kind == "graph_dump"} == dumps
    assert all(c.name is msgspec.UNSET for c in aoti.code if c.kind != "graph_dump")
    assert {p.name for p in aoti.phases} >= {"inductor_compile", "GraphLowering.run", "compile_file"}
    lines = (CORPUS.parent / "scenarios" / "aoti.py").read_text().splitlines()
    called = next(n for n, line in enumerate(lines, 1) if "aoti_compile_and_package(program" in line)
    assert aoti.user_frame is not None and aoti.user_frame.line == called
    assert aoti.log_lines and aoti.log_lines[0] < aoti.log_lines[1]
    (outside,) = trace.compiles
    assert outside.id == "[-/-]" and not outside.graphs and not outside.code and not outside.metrics_records
    summary = trace.summary()
    assert summary.aot_inductor == [aoti] and summary.compile_time_s == aoti.time.duration_s


def test_tlparses_aot_inductor_logs_hold_one_compile_each() -> None:
    from helpers import TLPARSE_TRACES, require_shared

    require_shared()
    logs = [
        p
        for p in sorted((TLPARSE_TRACES / "inputs").glob("*"))
        if p.is_file() and b'"compile_fx_aot"' in p.read_bytes()
    ]
    assert len(logs) == 5  # inductor_provenance_aot*.txt and inductor_provenance_extended_log.txt
    for log in logs:
        (aoti,) = tlscope.load(log).aot_inductor
        assert aoti.status == "ok" and aoti.time is not None and aoti.code, log.name
        assert aoti.user_frame is not None and aoti.user_frame.code is not None, log.name
        assert "aoti_compile_and_package" in aoti.user_frame.code or "aot_compile" in aoti.user_frame.code


def test_the_run_summary_and_report_say_the_aot_inductor_compiles(tmp_path: Path) -> None:
    out = tmp_path / "out"

    def run(*args: str) -> str:
        command = [sys.executable, "-m", "tlscope", *args]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout

    told = run(str(_log_of("aoti")), "-o", str(out), "--no-browser")
    assert "AOT Inductor: 1 compile, 1 ok, 12.92 s." in told
    said = run("summary", str(out), "--width", "200")
    assert "1 AOT Inductor compile: 1 ok" in said and "aoti.py:27" in said and "0 compiles" not in said
    assert json.loads(run("summary", str(out), "--json"))["aot_inductor"][0]["status"] == "ok"
    page = (out / "index.html").read_text()
    assert '<tr id="aot-inductor-0">' in page and "<code>aoti.py:27</code>" in page
    code = json.loads((out / "compiles.json").read_text())["aot_inductor"][0]["code"]
    assert all(f'<a href="{c["payload_filename"]}">' in page and (out / c["payload_filename"]).is_file() for c in code)


def test_hostile_aot_inductor_spans(tmp_path: Path) -> None:
    """A span never closed, an end without a begin, metrics after the span (its own) and after a
    compile of its own started (not), records after the span that are not metrics, and more spans
    than are kept."""
    code = ({"graph_dump": {"name": "inductor_aot_wrapper_code"}}, CODE)
    metrics = ({"compilation_metrics": {"fail_type": "CppCompileError", "fail_reason": "boom"}}, None)
    records = [
        _chromium("compile_fx_aot", "E"),  # no begin: nothing
        code,
        _chromium("compile_fx_aot", "B"),
        code,
        _chromium("compile_fx_aot", "E"),
        metrics,  # after its span: its own
        code,  # after its span, not metrics: `[-/-]`'s
        _chromium("compile_fx_aot", "B"),
        ({"dynamo_output_graph": {}, **ID}, GRAPH),
        _chromium("compile_fx_aot", "E"),
        ({"dynamo_output_graph": {}, **ID}, GRAPH),
        metrics,  # a compile of its own started: `[-/-]`'s
        _chromium("compile_fx_aot", "B"),
        code,  # never closed: a cut log
    ]
    trace = tlscope.load(write_trace(tmp_path / "spans.log", records))
    first, second, third = trace.aot_inductor
    assert (first.status, first.failure and first.failure.type, len(first.code)) == ("failed", "CppCompileError", 1)
    assert (second.status, second.code, third.status, len(third.code)) == ("metrics_missing", [], "metrics_missing", 1)
    outside = next(c for c in trace.compiles if c.id == "[-/-]")
    assert len(outside.code) == 2 and len(outside.metrics_records) == 1
    many = write_trace(tmp_path / "many.log", [_chromium("compile_fx_aot", ph) for _ in range(10_003) for ph in "BE"])
    assert len(tlscope.load(many).aot_inductor) == 10_000


def test_the_index_links_the_flame_graph_only_when_it_was_written(tmp_path: Path) -> None:
    """compile_time.html is written when some compile has a time (an AOT Inductor compile's
    included), and index.html links it only then (it linked it unwritten, a dead link)."""
    for scenario, written in (("aoti", True), ("aot_compile", True), ("export_plain", False)):
        out = tmp_path / scenario
        command = [sys.executable, "-m", "tlscope", str(_log_of(scenario)), "-o", str(out), "--no-browser"]
        subprocess.run(command, check=True, capture_output=True)
        linked = '<a href="compile_time.html">' in (out / "index.html").read_text()
        assert linked == (out / "compile_time.html").is_file() == written, scenario


def test_an_aot_inductor_compile_is_where_compile_time_is_drawn_and_counted(tmp_path: Path) -> None:
    """aoti: its 12.9 s compile has no compile id. The flame graph draws it under the user's call
    (`main` at aoti.py, then `aoti_compile_and_package (AOT Inductor)`), linking its row in the
    index; summary's slowest phases and functions count it (they were empty)."""
    log = _log_of("aoti")
    trace = tlscope.load(log)
    (aoti,) = trace.aot_inductor
    assert aoti.time is not None and aoti.time.duration_s and aoti.user_frame is not None
    root = trace.flame_graph()
    assert root.seconds == aoti.time.duration_s and root.compiles == ["AOT Inductor compile 0"]
    path, node = [], root
    while node.children:
        (node,) = node.children
        path.append((node.name, Path(node.file).name if node.file else None, node.line))
    assert path == [
        ("<module>", "aoti.py", aoti.stack[0].line),
        ("main", "aoti.py", aoti.user_frame.line),
        ("aoti_compile_and_package (AOT Inductor)", None, None),
    ]
    assert node.seconds == aoti.time.duration_s
    summary = json.loads(
        subprocess.run(
            [sys.executable, "-m", "tlscope", "summary", str(log), "--json"], check=True, capture_output=True, text=True
        ).stdout
    )
    (fn,) = summary["slowest_functions"]
    assert (fn["function"], fn["line"], fn["seconds"], fn["compiles"]) == (
        "aoti_compile_and_package (AOT Inductor)",
        aoti.user_frame.line,
        aoti.time.duration_s,
        1,
    )
    phases = {p.name: p.seconds for p in aoti.phases if p.name != "dynamo"}
    assert {row["name"]: row["seconds"] for row in summary["slowest_phases"]} == dict(
        sorted(phases.items(), key=lambda kv: -kv[1])[: len(summary["slowest_phases"])]
    )
    assert summary["slowest_phases"][0]["name"] == "inductor_compile"
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "tlscope", str(log), "-o", str(out), "--no-browser"], check=True)
    page = (out / "compile_time.html").read_text(encoding="utf-8")
    assert "AOT Inductor compile 0" in page and "'aot-inductor-' + aoti[1]" in page
    assert 'id="aot-inductor-0"' in (out / "index.html").read_text(encoding="utf-8")
