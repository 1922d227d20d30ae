"""The other faces of issue 12's analyses: `tlscope summary`, `tlscope diff`, `tlscope.load`.

Each returns the figures compiles.json and log_size.json hold (checked against the log in
test_answers.py); here the faces are checked against those files and against each other.
"""

from __future__ import annotations

import doctest
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import CORPUS, require_shared

import tlscope
import tlscope.api
from tlscope.cli import main as cli

SCENARIOS = ("recompiles_dynamic", "graph_breaks_repeated", "failures", "recompiles", "caches/run2")


def corpus_log(scenario: str) -> Path:
    return next((CORPUS / scenario).glob("*.log.gz"))


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each scenario parsed once by the parse command (report included), as a user would."""
    root = tmp_path_factory.mktemp("faces")
    found = {}
    for scenario in SCENARIOS:
        out = root / scenario.replace("/", "_")
        assert cli([str(corpus_log(scenario)), "-o", str(out), "--no-browser"]) == 0
        found[scenario] = out
    return found


def files(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    compiles = json.loads((folder / "compiles.json").read_text(encoding="utf-8"))
    size = json.loads((folder / "log_size.json").read_text(encoding="utf-8"))
    return compiles, size


def summary_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert cli(["summary", str(path), "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_summary_json_holds_the_files_figures(
    scenario: str, folders: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    compiles, size = files(folders[scenario])
    data = summary_json(folders[scenario], capsys)
    real = [c for c in compiles["compiles"] if c["status"] != "outside"]
    assert [(c["id"], c["status"]) for c in data["compiles"]] == [(c["id"], c["status"]) for c in real]
    assert [(g["reason"], g["count"]) for g in data["graph_breaks"]] == [
        (g["reason"], g["count"]) for g in compiles["graph_breaks"]
    ]
    recompiled = {c["id"]: c["recompile"]["reason"] for c in real if c["recompile"]}
    assert {r["id"]: r["reason"] for r in data["recompiles"]} == recompiled
    assert all(r["reasons"] for r in data["recompiles"] if r["reason"])
    assert data["log_size"]["total_bytes"] == size["total_bytes"]
    assert data["log_size"]["by_event_key"] == size["by_event_key"]
    timed = [c for c in real if c["time"]]
    assert sum(f["compiles"] for f in data["slowest_functions"]) <= len(timed)
    if len(data["slowest_functions"]) < 10:
        total = sum(c["time"]["duration_s"] for c in timed)
        assert sum(f["seconds"] for f in data["slowest_functions"]) == pytest.approx(total, abs=1e-5)


def test_summary_reads_a_raw_log_too(folders: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from_log = summary_json(corpus_log("failures"), capsys)
    from_folder = summary_json(folders["failures"], capsys)
    assert from_log == from_folder
    assert [f["failure"]["type"] for f in from_log["failures"]] == ["Unsupported", "TorchRuntimeError"]


def test_summary_terminal_fits_80_columns(folders: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", str(folders["recompiles_dynamic"]), "--width", "80"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    text = proc.stdout
    assert "size of x on dim 0 changed: 4 -> 5" in text
    assert "Dynamo recompile limit exceeded" in text
    assert re.search(r"Log size: [\d,]+ bytes", text)


def test_summary_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["summary", str(tmp_path / "absent.log")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "absent.log" in err


def test_diff_of_a_trace_with_itself_is_empty(folders: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for scenario in SCENARIOS:
        assert cli(["diff", str(folders[scenario]), str(folders[scenario])]) == 0
        assert capsys.readouterr().out.strip().endswith("equal")
    # A log against its own output folder: the same compiles.
    assert cli(["diff", str(corpus_log("failures")), str(folders["failures"])]) == 0


def test_diff_of_two_traces_differs(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run1 = corpus_log("caches/run1")
    page = tmp_path / "d.html"
    assert cli(["diff", str(run1), str(folders["caches/run2"]), "-o", str(page)]) == 1
    out = capsys.readouterr().out
    # Matched by function, the status and cache outcomes differ (miss then hit).
    assert "-ok\n+cache_hit" in out
    assert "+['aotautograd hit', 'fx_graph hit', 'fx_graph hit']" in out
    html = page.read_text(encoding="utf-8")
    assert "cache_hit" in html and "<script" not in html
    assert cli(["diff", str(folders["recompiles"]), str(folders["failures"])]) == 1
    out = capsys.readouterr().out
    # The log-size question between traces: event keys whose bytes moved by over a tenth.
    a, b = tlscope.load(folders["recompiles"]), tlscope.load(folders["failures"])
    sizes = {c.key: (c.a_bytes, c.b_bytes) for c in a.diff(b).sizes}
    assert sizes["aot_backward_graph"] == (a.log_size.by_event_key["aot_backward_graph"].bytes, 0)
    assert "log size by event key" in out and "aot_backward_graph" in out
    assert a.diff(a).sizes == []


def test_diff_two_compile_ids_and_two_ranks(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["diff", str(folders["recompiles"]), "--ids", "0/0", "[0/2]", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    whats = {d["what"] for d in result["compiles"][0]["differences"]}
    assert "graph dynamo_output_graph #1" in whats and "guards" in whats
    assert cli(["diff", str(folders["recompiles"]), "--ids", "0/1", "0/1"]) == 0
    capsys.readouterr()
    job = tmp_path / "job"
    assert cli([str(CORPUS / "ranks_same_2"), "-o", str(job), "--all-ranks-html", "--no-browser"]) == 0
    assert cli(["diff", str(job), "--ranks", "0", "1"]) in (0, 1)
    out = capsys.readouterr().out
    assert "compiles matched, 0 only in A, 0 only in B" in out
    assert cli(["diff", str(CORPUS / "ranks_diverge_2"), "--ranks", "0", "1"]) == 1


def test_diff_usage_and_errors_exit_2(folders: dict[str, Path], tmp_path: Path) -> None:
    assert cli(["diff", str(folders["failures"])]) == 2
    assert cli(["diff", str(tmp_path / "nope"), str(folders["failures"])]) == 2
    assert cli(["diff", str(folders["failures"]), "--ids", "0/0", "9/9"]) == 2


def test_load_returns_the_same_figures(folders: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for scenario in SCENARIOS:
        trace = tlscope.load(folders[scenario])
        compiles, size = files(folders[scenario])
        assert [(c.id, c.status) for c in trace.compiles] == [(c["id"], c["status"]) for c in compiles["compiles"]]
        assert [(g.reason, g.count) for g in trace.graph_breaks] == [
            (g["reason"], g["count"]) for g in compiles["graph_breaks"]
        ]
        assert [c.id for c in trace.recompiles] == [c["id"] for c in compiles["compiles"] if c["recompile"]]
        assert trace.log_size.total_bytes == size["total_bytes"]
        assert json.loads(json.dumps(summary_json(folders[scenario], capsys))) == json.loads(
            msgspec.json.encode(trace.summary())
        )


def test_load_events_and_payloads(folders: dict[str, Path]) -> None:
    trace = tlscope.load(folders["graph_breaks_repeated"])
    raw = (folders["graph_breaks_repeated"] / "raw.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum(1 for _ in trace.events()) == len(raw) - 1
    breaks = list(trace.events(kind="dynamo_graph_break_reason"))
    assert len(breaks) == sum(g.count for g in trace.graph_breaks)
    text = trace.payload(breaks[0])
    assert text is not None and text.startswith("Graph break in user code at")
    entry = trace.compile("[4/1_1]")
    lines = [n for first, last in entry.raw_lines for n in range(first, last + 1)]
    assert [e["log_line"] for e in trace.events(compile_id="[4/1_1]")] == [
        json.loads(raw[n - 1])["log_line"] for n in lines
    ]
    with pytest.raises(tlscope.api.TraceError):
        trace.payload("../manifest.json")


def test_load_a_log_parses_into_a_temporary_folder() -> None:
    trace = tlscope.load(corpus_log("failures"))
    folder = trace.folder
    assert folder.is_dir() and [c.status for c in trace.compiles][1:] == ["failed", "failed", "ok"]
    # The format and the answers only (issue 19): no HTML report, no raw.log copy, no pages.
    written = {p.name for p in folder.iterdir()}
    assert {"manifest.json", "raw.jsonl", "compiles.json", "log_size.json", "payloads"} <= written
    assert not written & {"index.html", "raw.log", "compile_directory.json"}
    assert not any(p.suffix == ".html" for p in folder.rglob("*"))
    trace.close()
    assert not folder.exists()


def test_load_multi_rank(tmp_path: Path) -> None:
    job = tmp_path / "job"
    assert cli([str(CORPUS / "ranks_diverge_2"), "-o", str(job), "--all-ranks-html", "--no-browser"]) == 0
    trace = tlscope.load(job)
    assert trace.rank_numbers == [0, 1] and trace.current_rank == 0
    assert [line.rank for line in trace.ranks] == [0, 1] and trace.stragglers is not None
    other = trace.rank(1)
    # A rank's folder holds its own events (and rank-less ones logged before the process group).
    assert {e.get("rank") for e in other.events()} == {1, None}
    assert list(trace.events(rank=1)) == list(other.events())
    assert list(trace.events(rank=0)) != list(other.events())
    assert trace.diff(other).equal is False
    assert cli(["summary", str(job), "--rank", "1", "--json"]) == 0


def test_load_of_a_job_writes_its_ranks_format_and_answers_only(tmp_path: Path) -> None:
    """`tlscope.load(JOB)` (and `summary JOB`) parses the ranks into the format and the answers:
    no rank report, no landing page (issue 19); what it shows is the parsed job folder's."""
    job = tmp_path / "job"
    assert cli([str(CORPUS / "ranks_diverge_2"), "-o", str(job), "--all-ranks-html", "--no-browser"]) == 0
    loaded, parsed = tlscope.load(CORPUS / "ranks_diverge_2"), tlscope.load(job)
    root = loaded.root
    assert {p.name for p in root.iterdir()} == {"rank_0", "rank_1", "payloads", "graphs"}
    assert not any(p.suffix == ".html" for p in root.rglob("*"))
    assert msgspec.json.encode(loaded.ranks) == msgspec.json.encode(parsed.ranks)
    assert msgspec.json.encode(loaded.job_view()) == msgspec.json.encode(parsed.job_view())
    for rank in (0, 1):
        a, b = loaded.rank(rank), parsed.rank(rank)
        assert msgspec.json.encode(a.compiles) == msgspec.json.encode(b.compiles)
        assert list(a.events()) == list(b.events())
        assert msgspec.json.encode(a.summary()) == msgspec.json.encode(b.summary())


def test_summary_of_a_multi_rank_trace_names_its_rank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "job"
    assert cli([str(CORPUS / "ranks_diverge_2"), "-o", str(job), "--all-ranks-html", "--no-browser"]) == 0
    capsys.readouterr()
    first = summary_json(job, capsys)
    second = summary_json_rank(job, 1, capsys)
    assert (first["rank"], [r["rank"] for r in first["ranks"]], second["rank"]) == (0, [0, 1], 1)
    assert cli(["summary", str(job), "--width", "80"]) == 0
    assert "Details of rank 0 (--rank N for another)" in capsys.readouterr().out


def summary_json_rank(path: Path, rank: int, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert cli(["summary", str(path), "--rank", str(rank), "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_to_pandas(folders: dict[str, Path]) -> None:
    pandas = pytest.importorskip("pandas", reason="the optional pandas extra is not installed")
    frame = tlscope.load(folders["failures"]).to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["status"]) == ["outside", "failed", "failed", "ok"]


def test_api_doctests() -> None:
    """The examples in tlscope.api's docstring run against the corpus."""
    globs = {"CORPUS": CORPUS}
    result = doctest.testmod(tlscope.api, extraglobs=globs, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 6 and result.failed == 0


def test_load_is_lazy() -> None:
    """`import tlscope` stays cheap: the API's modules load on first use."""
    code = "import sys, tlscope; print('tlscope.api' in sys.modules, 'msgspec' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["False", "False"]


def test_shared_trace_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """tlparse's comp_failure.log: the failure shows in the summary with its type."""
    log = require_shared() / "inputs" / "comp_failure.log"
    data = summary_json(log, capsys)
    assert data["failures"] and all(f["status"] == "failed" for f in data["failures"])


ALL_LOGS = sorted(p for p in CORPUS.rglob("*.log.gz") if p.parent.name != "muxed")


@pytest.mark.parametrize("log", ALL_LOGS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_summary_explains_each_recompile_with_the_recommended_failure(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`summary --json` names the guard failure compiles.json recommends, on every corpus trace."""
    out = tmp_path / "out"
    cli([str(log), "-o", str(out), "--no-browser"])  # exit 1 when the log has problems; the folder is written
    capsys.readouterr()
    compiles, _ = files(out)
    rows = {r["id"]: r for r in summary_json(out, capsys)["recompiles"]}
    recompiles = [c for c in compiles["compiles"] if c["recompile"] is not None]
    assert rows.keys() == {c["id"] for c in recompiles}
    for entry in recompiles:
        recompile, row = entry["recompile"], rows[entry["id"]]
        failures = recompile["guard_failures"]
        assert row["recommended"] == recompile["recommended"]
        if not failures:
            assert recompile["recommended"] is None and row["explanation"] == recompile["reason"]
            continue
        chosen = failures[recompile["recommended"]["index"]]
        assert row["explanation"] == chosen["explanation"]
        assert row["reasons"][recompile["recommended"]["index"]] == chosen


@pytest.mark.parametrize("scenario", [*SCENARIOS, "specialized", "compile_failure"])
def test_summary_of_a_log_in_memory_is_the_loaded_trace_summary(scenario: str, tmp_path: Path) -> None:
    """`tlscope summary LOG` computes a log's answers in memory and writes nothing (issue 19): its
    summary is, field for field, that of the trace `tlscope.load` parses into the format."""
    log = corpus_log(scenario)
    in_memory = tlscope.api.summarise(log)
    assert msgspec.json.encode(in_memory) == msgspec.json.encode(tlscope.load(log).summary())
    assert in_memory.symbols or scenario != "specialized"  # the in-memory pass folds every answer


def test_summary_counts_the_log_problems_not_those_of_files_it_does_not_write(folders: dict[str, Path]) -> None:
    """summary's problems are those of reading the log and computing its answers: an output
    folder's `report` and `bad_graph` problems (of the HTML report, of graphs/) are not among them,
    as a log summarised in memory (which writes neither) has none."""
    from tlscope.api import Trace

    trace = Trace(folders["failures"])
    manifest = trace.manifest
    manifest.problems.counts = {"bad_graph": 2, "payload_md5": 1, "report": 3}
    assert trace.summary().problems == {"payload_md5": 1}


def test_summary_shows_the_most_severe_compiles_when_they_do_not_fit() -> None:
    """More compiles than the table holds: the most severe not-ok ones are shown (a failure late in
    a long log is never cut), in compile order, and the caption counts the rest by status (it said
    "(all ok)" of 85 compiles of which 70 were restarted or broke, in a 136 MB trace)."""
    import io

    import msgspec
    from rich.console import Console

    from tlscope.write.summary_view import render

    summary = tlscope.load(CORPUS / "graph_breaks_repeated").summary()
    real = [r for r in summary.compiles if r.status != "outside"]
    assert {r.status for r in real} >= {"restarted", "graph_break", "ok"}
    rows = [msgspec.structs.replace(r, id=f"{r.id}#{n}") for n in range(3) for r in real]
    failed = msgspec.structs.replace(real[-1], id="[99/0]", status="failed")
    summary.compiles = [*rows, failed]
    out = io.StringIO()
    render(summary, "t", console=Console(file=out, width=400, color_system=None))
    table = out.getvalue().split("Compiles", 1)[1].split("Distinct graph breaks", 1)[0]
    assert "[99/0]" in table and "failed" in table
    shown = [r for r in summary.compiles if f"│{r.id} " in table]
    assert len(shown) == 20 and shown[-1].id == "[99/0]"  # in compile order, the failure last
    hidden = [r for r in summary.compiles if r not in shown]
    counts = {s: sum(r.status == s for r in hidden) for s in ("restarted", "graph_break", "empty", "ok")}
    assert counts["ok"] and (counts["restarted"] or counts["graph_break"])
    from tlscope.format.status import severity, status_words

    said = ", ".join(f"{n} {status_words(s)}" for s, n in sorted(counts.items(), key=lambda i: severity(i[0])) if n)
    assert f"{len(hidden)} more compiles not shown: {said}" in " ".join(table.split())
