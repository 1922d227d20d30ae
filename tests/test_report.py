"""The report on real traces: tlparse's own integration tests 1-18 (reference §9) and the fixed bugs.

Ported single-rank assertions run tlscope where tlparse's tests ran `parse_path`; provenance
mappings are compared with tlparse's own output in tests/test_parity_report.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import TLPARSE_TRACES

from tlscope.cli import main as tlscope_main


def run(trace: Path, out: Path, *flags: str) -> set[str]:
    assert tlscope_main([str(trace), "-o", str(out), "--no-browser", *flags]) == 0
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}


def has_prefixes(paths: set[str], prefixes: list[str]) -> None:
    for prefix in prefixes:
        assert any(p.startswith(prefix) for p in paths), prefix


COMMON = ["index.html", "compile_directory.json", "failures_and_restarts.html"]


@pytest.mark.parametrize("name", ["simple.log", "simple_corrupted_json.log"])
def test_parse_simple(name: str, tmp_path: Path, tlparse_traces: Path) -> None:
    """Tests 1-2 (strict only for the uncorrupted log)."""
    flags = ["--strict"] if name == "simple.log" else []
    paths = run(tlparse_traces / "inputs" / name, tmp_path / "out", *flags)
    has_prefixes(
        paths,
        [
            "-_0_0_0/aot_forward_graph",
            "-_0_0_0/dynamo_output_graph",
            "-_0_0_0/inductor_post_grad_graph",
            "-_0_0_0/inductor_output_code",
            *COMMON,
        ],
    )
    lines = (tmp_path / "out" / "raw.jsonl").read_text().splitlines()
    assert len(lines) == 15
    assert lines[0].startswith('{"string_table":')


def test_parse_compilation_metrics(tmp_path: Path, tlparse_traces: Path) -> None:
    """Test 3; tlscope keeps every payload, so tlparse's three are a subset (deviation)."""
    out = tmp_path / "out"
    paths = run(tlparse_traces / "inputs" / "comp_metrics.log", out, "--strict")
    has_prefixes(
        paths,
        [
            "-_0_0_1/dynamo_output_graph",
            "-_0_0_1/compilation_metrics",
            "-_1_0_1/dynamo_output_graph",
            "-_1_0_1/compilation_metrics",
            "-_2_0_0/dynamo_output_graph",
            "-_2_0_0/compilation_metrics",
            *COMMON,
        ],
    )
    hashes = {Path(p).stem for p in paths if p.startswith("payloads/")}
    assert {
        "11726d08889974e57b12edee2812504e",
        "29e35548d59d0e446f0c8a3f3010cc72",
        "e18e1bcb67140c0a67427a6119556f7a",
    } <= hashes
    lines = (out / "raw.jsonl").read_text().splitlines()
    assert len(lines) == 13
    events = [json.loads(line) for line in lines[1:]]
    named = [e["payload_filename"] for e in events if "payload_filename" in e]
    assert len(named) >= 3 and all(n in paths for n in named)


def test_parse_compilation_failures(tmp_path: Path, tlparse_traces: Path) -> None:
    """Test 4."""
    paths = run(tlparse_traces / "inputs" / "comp_failure.log", tmp_path / "out", "--strict")
    has_prefixes(paths, ["-_0_0_0/dynamo_output_graph", "-_0_0_0/compilation_metrics", *COMMON])


def test_parse_artifact(tmp_path: Path, tlparse_traces: Path) -> None:
    """Test 5."""
    paths = run(tlparse_traces / "inputs" / "artifacts.log", tmp_path / "out", "--strict")
    has_prefixes(paths, ["-_0_0_0/fx_graph_cache_hash", "index.html"])


def test_parse_chromium_event(tmp_path: Path, tlparse_traces: Path) -> None:
    """Test 6."""
    paths = run(tlparse_traces / "inputs" / "chromium_events.log", tmp_path / "out", "--strict")
    assert {"chromium_events.json", "index.html"} <= paths
    assert "open them in Perfetto" in (tmp_path / "out" / "index.html").read_text()


def test_cache_hit_miss(tmp_path: Path, tlparse_traces: Path) -> None:
    """Test 7."""
    paths = run(tlparse_traces / "inputs" / "cache_hit_miss.log", tmp_path / "out", "--strict")
    assert {
        "-_1_0_0/fx_graph_cache_miss_33.json",
        "-_1_0_0/fx_graph_cache_miss_9.json",
        "-_1_0_0/fx_graph_cache_hit_20.json",
        "compile_directory.json",
        "index.html",
    } <= paths


@pytest.mark.parametrize("name", ["export.log", "export_guard_added.log"])
def test_export_report(name: str, tmp_path: Path, tlparse_traces: Path) -> None:
    """Tests 8-9."""
    paths = run(tlparse_traces / "inputs" / name, tmp_path / "out", "--strict", "-e")
    has_prefixes(paths, ["-_-_-_-/exported_program", "index.html", "-_-_-_-/symbolic_guard_information"])
    index = (tmp_path / "out" / "index.html").read_text()
    assert "Draft Export Report" in index and "symbolic_guard_information" in index


PROVENANCE = [
    (
        "inductor_provenance_aot_cuda_log.txt",
        "-_-_-_-",
        [
            "before_pre_grad_graph_0.txt",
            "after_post_grad_graph_6.txt",
            "inductor_provenance_tracking_node_mappings_12.json",
        ],
    ),
    (
        "inductor_provenance_aot_debug_handle_log.txt",
        "-_-_-_-",
        [
            "before_pre_grad_graph_0.txt",
            "after_post_grad_graph_6.txt",
            "inductor_provenance_tracking_node_mappings_10.json",
        ],
    ),
    (
        "inductor_provenance_aot_log.txt",
        "-_-_-_-",
        [
            "before_pre_grad_graph_0.txt",
            "after_post_grad_graph_6.txt",
            "inductor_provenance_tracking_node_mappings_11.json",
        ],
    ),
    (
        "inductor_provenance_aot_log_old.txt",
        "-_-_-_-",
        [
            "inductor_pre_grad_graph_0.txt",
            "inductor_post_grad_graph_8.txt",
            "inductor_provenance_tracking_node_mappings_11.json",
        ],
    ),
    (
        "inductor_provenance_jit_cuda_log.txt",
        "-_0_0_0",
        [
            "before_pre_grad_graph_1.txt",
            "after_post_grad_graph_8.txt",
            "inductor_provenance_tracking_node_mappings_14.json",
        ],
    ),
    (
        "inductor_provenance_jit_log.txt",
        "-_0_0_0",
        [
            "before_pre_grad_graph_1.txt",
            "after_post_grad_graph_8.txt",
            "inductor_provenance_tracking_node_mappings_13.json",
        ],
    ),
    (
        "inductor_provenance_jit_debug_handle_log.txt",
        "-_0_0_0",
        [
            "before_pre_grad_graph_1.txt",
            "after_post_grad_graph_11.txt",
            "inductor_provenance_tracking_node_mappings_14.json",
        ],
    ),
]


@pytest.mark.parametrize(("name", "cid_dir", "files"), PROVENANCE)
def test_provenance_tracking(name: str, cid_dir: str, files: list[str], tmp_path: Path, tlparse_traces: Path) -> None:
    """Tests 10-16 (paths here; the mappings equal tlparse's in test_parity_report.py)."""
    paths = run(tlparse_traces / "inputs" / name, tmp_path / "out", "-i")
    assert {f"{cid_dir}/{f}" for f in files} | {f"provenance_tracking_{cid_dir}.html"} <= paths
    page = (tmp_path / "out" / f"provenance_tracking_{cid_dir}.html").read_text()
    assert '<script id="lineMappings" type="application/json">' in page


def test_provenance_multiple_colons_in_kernel_name() -> None:
    """Test 17: its trace (inductor_provenance_long_log.txt) is not in the public snapshot."""
    missing = TLPARSE_TRACES / "inputs" / "inductor_provenance_long_log.txt"
    if not missing.exists():
        pytest.skip("tlparse test 17's fixture inductor_provenance_long_log.txt is missing from the public snapshot")


def test_provenance_stack_trace_readable(tmp_path: Path, tlparse_traces: Path) -> None:
    """Test 18."""
    out = tmp_path / "out"
    paths = run(tlparse_traces / "inputs" / "inductor_provenance_extended_log.txt", out, "-i")
    assert any("inductor_provenance_tracking_kernel_stack_traces" in p and p.endswith(".json") for p in paths)
    readable = [p for p in paths if p.endswith("_readable.html")]
    assert readable
    html = (out / readable[0]).read_text()
    assert "line 1\n  foo()" in html and "\\n" not in html
    assert '_readable.html">readable_html</a>' in (out / "index.html").read_text()


# -- fixed tlparse bugs ------------------------------------------------------------------------


def _with_lines(tmp_path: Path, extra: list[str]) -> Path:
    log = tmp_path / "in.log"
    shutil.copyfile(TLPARSE_TRACES / "inputs" / "comp_metrics.log", log)
    with log.open("a") as f:
        f.write("".join(line + "\n" for line in extra))
    return log


PREFIX = "V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] "


def test_fail_type_without_reason_does_not_abort(tmp_path: Path, tlparse_traces: Path) -> None:
    metrics = {
        "compilation_metrics": {"fail_type": "Boom", "graph_op_count": 1},
        "frame_id": 9,
        "frame_compile_id": 0,
        "attempt": 0,
    }
    log = _with_lines(tmp_path, [PREFIX + json.dumps(metrics)])
    run(log, tmp_path / "out")
    assert "Boom" in (tmp_path / "out" / "failures_and_restarts.html").read_text()


def test_invalid_utf8_does_not_abort(tmp_path: Path, tlparse_traces: Path) -> None:
    log = _with_lines(tmp_path, [])
    with log.open("ab") as f:
        f.write(
            PREFIX.encode() + b'{"artifact": {"name": "bad", "encoding": "string"}, "has_payload": "x"}\n\t\xff\xfe\n'
        )
    run(log, tmp_path / "out")
    assert (tmp_path / "out" / "raw.log").read_bytes() == log.read_bytes()


def test_attempt_one_has_its_own_status(tmp_path: Path, tlparse_traces: Path) -> None:
    start = {
        "dynamo_start": {"stack": [{"line": 1, "name": "f", "filename": 0}]},
        "frame_id": 7,
        "frame_compile_id": 0,
        "attempt": 1,
    }
    metrics = {
        "compilation_metrics": {"graph_op_count": 3, "restart_reasons": []},
        "frame_id": 7,
        "frame_compile_id": 0,
        "attempt": 1,
    }
    log = _with_lines(tmp_path, [PREFIX + json.dumps(start), PREFIX + json.dumps(metrics)])
    run(log, tmp_path / "out")
    assert "<a href='#[7/0_1]' class='status-ok'>" in (tmp_path / "out" / "index.html").read_text()


def test_failures_link_to_the_real_metrics_page(tmp_path: Path, tlparse_traces: Path) -> None:
    out = tmp_path / "out"
    run(tlparse_traces / "inputs" / "comp_metrics.log", out)
    html = (out / "failures_and_restarts.html").read_text()
    import re

    links = re.findall(r"<a href='([^']+)'>", html)
    assert links and all((out / link).is_file() for link in links)


def test_raw_log_copy_failing_fails_the_run_and_leaves_no_output(
    tmp_path: Path, tlparse_traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """raw.log is copied by a thread beside the pass; what it raises is the run's error, at the end."""
    from tlscope.write.report import pages

    def full_disk(source: Path, dest: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pages, "copy_raw_log", full_disk)
    log = _with_lines(tmp_path, [])
    assert tlscope_main([str(log), "-o", str(tmp_path / "out"), "--no-browser"]) == 1
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["in.log"]
