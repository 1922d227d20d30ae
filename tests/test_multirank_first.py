"""Ranks first (issue 20, finding 1): `tlscope summary JOB` shows every rank, then how the ranks
diverge, then details; `--json` and the job's ranks.json carry the same `ranks` and `divergence`;
the landing matrix speaks compiles.json's status vocabulary.

Every figure is checked against the rank logs themselves, read here with a small parser of its own.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, TLPARSE_TRACES

from tlscope.cli import main as cli

_ENVELOPE = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]]*\] (?P<json>\{.*)$")
_RANK = re.compile(r"_rank_(\d+)")

JOBS = [CORPUS / "ranks_diverge_4", TLPARSE_TRACES / "inputs" / "multi_rank_logs"]


def _envelopes(log: Path) -> list[dict[str, Any]]:
    data = gzip.decompress(log.read_bytes()) if log.suffix == ".gz" else log.read_bytes()
    found = []
    for line in data.decode("utf-8", "replace").split("\n"):
        match = _ENVELOPE.match(line.rstrip("\r"))
        if match is not None:
            try:
                found.append(json.loads(match["json"]))
            except ValueError:
                continue
    return found


def _display(meta: dict[str, Any]) -> str:
    frame, fcid, attempt, ca = (
        meta.get(k) for k in ("frame_id", "frame_compile_id", "attempt", "compiled_autograd_id")
    )
    head = "" if ca is None else f"!{ca}/"
    text = ("-" if frame is None else str(frame)) + "/" + ("-" if fcid is None else str(fcid))
    return f"[{head}{text}{'' if not attempt else f'_{attempt}'}]"


def _by_log(job: Path) -> dict[int, dict[str, Any]]:
    """Per rank: its compilation_metrics records' count and summed frame time, and its compile ids."""
    found = {}
    for log in sorted(job.glob("*.log*")):
        records = _envelopes(log)
        metrics = [m["compilation_metrics"] for m in records if isinstance(m.get("compilation_metrics"), dict)]
        ids = {_display(m) for m in records} - {"[-/-]"}
        # Each frame's function: its first metrics record's code name (the frame's first compile).
        names: dict[str, str] = {}
        for m in records:
            if isinstance(m.get("compilation_metrics"), dict) and m.get("frame_id") is not None:
                names.setdefault(str(m["frame_id"]), str(m["compilation_metrics"].get("co_name")))
        rank = int(_RANK.search(log.name)[1])  # type: ignore[index]
        found[rank] = {
            "compiles": len(metrics),
            "time": sum(float(m.get("entire_frame_compile_time_s") or 0) for m in metrics),
            "ids": ids,
            "functions": {(names.get(cid[1:].split("/")[0], "?"), cid) for cid in ids},
        }
    return found


def _summary(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert cli(["summary", str(path), "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize("job", JOBS, ids=lambda p: p.name)
def test_summary_json_lists_every_rank_and_the_ids_not_on_every_rank(
    job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not job.is_dir():
        pytest.skip(f"{job} is absent (shared traces not found)")
    logs = _by_log(job)
    assert len(logs) == 4
    out = tmp_path / "out"
    assert cli([str(job), "-o", str(out), "--no-browser"]) == 0
    for path in (job, out):  # a folder of rank logs (parsed on the fly) and the job's output folder
        data = _summary(path, capsys)
        assert [line["rank"] for line in data["ranks"]] == sorted(logs)
        for line in data["ranks"]:
            assert line["compiles"] == logs[line["rank"]]["compiles"]
            assert line["compile_time_s"] == pytest.approx(logs[line["rank"]]["time"], abs=1e-5)
        # By function where ranks compiled other functions under one id (multi_rank_logs: two
        # programs, fn and kernel both [0/0]; format 1.33): a compile is (function, id) there.
        key = "functions" if data["divergence"]["frames"] else "ids"
        everywhere = set.intersection(*(log[key] for log in logs.values()))
        partial = sorted(
            (str(k[1] if key == "functions" else k), sorted(r for r, log in logs.items() if k in log[key]))
            for k in set.union(*(log[key] for log in logs.values())) - everywhere
        )
        found = sorted((p["id"].split(" ")[0], p["ranks"]) for p in data["divergence"]["not_on_every_rank"])
        assert found == partial and partial
        assert data["divergence"]["diverges"] is True
    # ranks.json, written by the parse, says what the summary says.
    ranks_file = json.loads((out / "ranks.json").read_text())
    assert (ranks_file["ranks"], ranks_file["divergence"]) == (data["ranks"], data["divergence"])
    assert ranks_file["format_minor"] >= 5


def test_summary_text_puts_every_rank_and_the_divergence_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ranks_diverge_4: rank 3 compiled [7/0], which no other rank did; said before the details,
    with its function (ranks that compiled other functions are said by function)."""
    capsys.readouterr()
    assert cli(["summary", str(CORPUS / "ranks_diverge_4"), "--width", "100"]) == 0
    text = capsys.readouterr().out
    head = text.split("Details of rank 0", 1)[0]
    assert "Details of rank 0" in text
    for rank in range(4):
        assert re.search(rf"│{rank}\s+│", head), rank
    assert "rank 3: 1 compile no other rank has ([7/0] <lambda> (_ranks.py:85))" in head
    assert "ranks 0, 1, 2: lack 1 compile other ranks have ([7/0] <lambda> (_ranks.py:85) on rank 3)" in head


def test_divergence_sentence_says_why_a_rank_recompiled(capsys: pytest.CaptureFixture[str]) -> None:
    """tlparse's multi_rank_logs: rank 1 recompiled where other ranks did not; its sentence says why."""
    job = TLPARSE_TRACES / "inputs" / "multi_rank_logs"
    if not job.is_dir():
        pytest.skip("shared traces not found")
    groups = _summary(job, capsys)["divergence"]["groups"]
    rank1 = next(g for g in groups if g["ranks"] == [1])
    assert rank1["sentence"].startswith(f"rank 1: {len(rank1['only_here'])} compiles no other rank has (")
    assert "recompiled [0/7] because size of x on dim 0 changed: " in rank1["sentence"]


def test_landing_matrix_calls_restarted_attempts_restarted(tmp_path: Path) -> None:
    """ranks_diverge_2's [0/0] was restarted on both ranks: compiles.json says `restarted`, and so
    do the landing matrix and multi_rank_summary.json (they said `missing`)."""
    out = tmp_path / "out"
    assert cli([str(CORPUS / "ranks_diverge_2"), "-o", str(out), "--no-browser"]) == 0
    statuses = {r: json.loads((out / f"rank_{r}" / "compiles.json").read_text())["compiles"] for r in (0, 1)}
    summary = json.loads((out / "multi_rank_summary.json").read_text())
    for rank in summary:
        want = {c["id"]: c["status"] for c in statuses[rank["rank"]] if c["status"] != "outside"}
        assert {cid: info["status"] for cid, info in rank["compiles"].items()} == want
    assert summary[0]["compiles"]["[0/0]"]["status"] == "restarted"
    page = (out / "index.html").read_text()
    matrix = page.split('id="compile-id-matrix"', 1)[1].split("</table>", 1)[0]
    assert '<td class="status-restarted">restarted' in matrix
    assert "missing" not in matrix


def test_parsing_a_job_says_how_its_ranks_diverge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`tlscope JOB` prints the divergence sentences (where the user looks first) and the diff of
    the first two ranks that differ, and ranks that agree say so (and name no pair)."""
    capsys.readouterr()
    assert cli([str(CORPUS / "ranks_diverge_4"), "-o", str(tmp_path / "a"), "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert "Ranks diverge:\n  rank 3: 1 compile no other rank has ([7/0] <lambda> (_ranks.py:85))\n" in out
    assert f"Every rank at a glance: tlscope summary {tmp_path / 'a'}" in out
    # The pair `tlscope diff JOB` compares: rank 0 of the most ranks' group, and rank 3.
    assert f"Rank 0 and rank 3 side by side (the first that differ): tlscope diff {tmp_path / 'a'}\n" in out
    assert cli([str(CORPUS / "ranks_same_2"), "-o", str(tmp_path / "b"), "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert "Every rank compiled the same compile ids." in out
    assert "side by side" not in out
    # A folder a shell would split is quoted in the commands to paste.
    spaced = tmp_path / "a b"
    assert cli([str(CORPUS / "ranks_diverge_4"), "-o", str(spaced), "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert f"Every rank at a glance: tlscope summary '{spaced}'\n" in out
    assert f"(the first that differ): tlscope diff '{spaced}'\n" in out
