"""Collectives compared across ranks (format 1.17): a compile id every rank has can still desync the
job when its graph calls a collective with another shape on another rank. compiles.json carries
each Dynamo graph's collectives; ranks.json's `divergence.collectives` says each compile id whose
collectives differ, in a sentence that `tlscope JOB`, `summary`, `diff --ranks` and the landing
page print. Checked against the rank logs themselves, read here with a small parser of its own."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from helpers import CORPUS

import tlscope
from tlscope.analyse.fold.graphs import graph_collectives
from tlscope.analyse.ranks.divergence import collective_text
from tlscope.cli import main as cli

DESYNC = CORPUS / "ranks_desync_2"
_COLLECTIVE_LINE = re.compile(r'"(?P<type>[^"]*)" = torch\.ops\._c10d_functional\.(?P<op>\w+)')


def _dynamo_collectives(log: Path) -> list[tuple[str, str]]:
    """(op, annotation) of every collective call in the log's dynamo_output_graph payloads."""
    found: list[tuple[str, str]] = []
    inside = False
    for line in gzip.decompress(log.read_bytes()).decode("utf-8").split("\n"):
        if not line.startswith("\t"):
            inside = '{"dynamo_output_graph"' in line
            continue
        match = _COLLECTIVE_LINE.search(line) if inside else None
        if match is not None and match["op"] != "wait_tensor":
            found.append((match["op"], match["type"]))
    return found


def test_the_python_api_says_it_too() -> None:
    job = tlscope.load(DESYNC)
    assert job.divergence is not None and [m.id for m in job.divergence.collectives] == ["[0/0]"]
    assert tlscope.load(CORPUS / "simple").divergence is None  # a single log


def test_the_logs_disagree_on_one_collectives_shape() -> None:
    """The scenario's premise, read from the logs: rank 0 reduces f32[8, 16], rank 1 f32[9, 16]."""
    logs = sorted(DESYNC.glob("*_rank_*.log.gz"))
    calls = [_dynamo_collectives(log) for log in logs]
    assert [c[0] for c in calls] == [("all_reduce", "f32[8, 16][16, 1]cpu"), ("all_reduce", "f32[9, 16][16, 1]cpu")]
    assert calls[0][1:] == calls[1][1:] == [("all_reduce", "f32[16][1]cpu")]


def test_ranks_json_says_the_compile_id_whose_collectives_differ(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli([str(DESYNC), "-o", str(out), "--no-browser"]) == 0
    ranks = json.loads((out / "ranks.json").read_text())
    assert ranks["format_minor"] >= 17
    divergence = ranks["divergence"]
    assert divergence["diverges"] is False  # the same compile ids on both ranks...
    (mismatch,) = divergence["collectives"]  # ...and still a desync
    assert mismatch["id"] == "[0/0]" and mismatch["at"] == 0
    assert mismatch["groups"] == [
        {"ranks": [0], "collectives": ["all_reduce f32[8, 16] 'sum' '0'"]},
        {"ranks": [1], "collectives": ["all_reduce f32[9, 16] 'sum' '0'"]},
    ]
    assert mismatch["sentence"] == (
        "[0/0]: ranks call different collectives: collective 1 is all_reduce f32[8, 16] 'sum' '0' on rank 0, "
        "all_reduce f32[9, 16] 'sum' '0' on rank 1; a collective that differs between ranks fails or hangs when it runs"
    )
    graphs = json.loads((out / "rank_1" / "compiles.json").read_text())["compiles"]
    dynamo = [g for c in graphs for g in c["graphs"] if g["kind"] == "dynamo_output_graph"]
    assert [g["collectives"] for g in dynamo] == [
        [{"op": "all_reduce", "tensor": "f32[9, 16][16, 1]cpu", "args": ["'sum'", "'0'"]}],
        [{"op": "all_reduce", "tensor": "f32[16][1]cpu", "args": ["'sum'", "'0'"]}],
    ]
    page = (out / "index.html").read_text()
    assert "[0/0]: ranks call different collectives" in page
    # The compile-id matrix highlights [0/0]'s row (its statuses alone agree) and says why.
    matrix = page.split('<table id="compile-id-matrix">', 1)[1].split("</table>", 1)[0]
    rows = {re.search(r"<td>(\[[^\]]+\])", row).group(1): row for row in matrix.split("<tr")[2:]}  # type: ignore[union-attr]
    assert rows["[0/0]"].startswith(' class="odd"><td>[0/0] <span class="collectives-differ">collectives differ</span>')
    assert "odd" not in rows["[1/0]"] and "collectives differ" not in rows["[1/0]"]
    # The Ranks view's matrix rows (format 1.18): the one group split at [0/0], the odd one first.
    assert divergence["rows"] == [
        {
            "ranks": [1],
            "collectives": ["[0/0]"],
            "sentence": "rank 1: the same compile ids; calls other collectives at [0/0] than rank 0",
        },
        {"ranks": [0], "collectives": [], "sentence": "rank 0: the same compile ids"},
    ]


def test_every_face_says_it_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sentence = "[0/0]: ranks call different collectives: collective 1 is all_reduce f32[8, 16] 'sum' '0' on rank 0"
    assert cli([str(DESYNC), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    assert f"Collectives differ between ranks:\n  {sentence}" in capsys.readouterr().out
    assert cli(["summary", str(DESYNC), "--width", "400"]) == 0
    assert f"Collectives differ between ranks:\n  {sentence}" in capsys.readouterr().out
    assert cli(["summary", str(DESYNC), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["divergence"]["collectives"][0]["id"] == "[0/0]"
    cli(["diff", str(DESYNC), "--ranks", "0", "1"])
    head = capsys.readouterr().out.split("\n")
    # The first list (format 1.40: after the line saying the compile ids agree, as every text view).
    assert head[0] == "All 2 ranks compiled the same compile ids (one group)."
    assert head[2] == "Collectives differ between ranks:"
    assert head[3].startswith(f"  {sentence}") and head[3].endswith("<- rank 0 and rank 1 differ here")


@pytest.mark.parametrize("job", ["ranks_same_4", "ranks_diverge_4", "ranks_diverge_2"])
def test_ranks_reducing_the_same_tensor_do_not_differ(job: str) -> None:
    """Every rank of these jobs all_reduces an f32[16] in reduce_fn (corpus/scenarios/_ranks.py),
    diverging or not in what else they compile: no collective mismatch, and the call is seen."""
    trace = tlscope.load(CORPUS / job)
    assert trace.divergence is not None and trace.divergence.collectives == []
    for rank in trace.rank_numbers:
        calls = [
            collective_text(c)
            for entry in trace.rank(rank).compiles
            for g in entry.graphs
            if g.kind == "dynamo_output_graph"
            for c in g.collectives
        ]
        assert calls == ["all_reduce f32[16] 'sum' '0'"]
    # Nothing splits the matrix's rows: they are the groups (one of every rank when none diverges).
    rows = trace.divergence.rows
    groups = trace.divergence.groups or [None]
    assert len(rows) == len(groups) and all(r.collectives == [] for r in rows)
    for row, group in zip(rows, groups, strict=True):
        assert row.ranks == (group.ranks if group else trace.rank_numbers)
        assert row.sentence == (group.sentence if group else "ranks 0-3: the same compile ids and collectives")


def test_the_printed_forms_of_a_collective_call() -> None:
    """Dynamo prints the op without its overload, AOT graphs with it, older torch without the
    underscore; the wait is not a collective; an all_to_all_single is compared by name and group
    (its split sizes and shapes are each rank's own), an all_reduce by dtype and sizes, not device."""
    text = "\n".join(
        [
            "class GraphModule(torch.nn.Module):",
            '    def forward(self, L_x_: "f32[4][1]cuda:0"):',
            "        tensor: \"f32[4][1]cuda:0\" = torch.ops._c10d_functional.all_reduce(y, 'avg', '0')",
            '        wait_tensor: "f32[4][1]cuda:0" = torch.ops._c10d_functional.wait_tensor.default(tensor)',
            '        ag: "bf16[8, 2][2, 1]cuda:0" = '
            "torch.ops._c10d_functional.all_gather_into_tensor.default(x, 2, '0');  x = None",
            '        a2a: "f32[5][1]cuda:0" = '
            "torch.ops.c10d_functional.all_to_all_single.default(x, [2, 3], [1, 4], '1')",
        ]
    )
    calls = graph_collectives(text)
    assert [(c.op, c.tensor, c.args) for c in calls] == [
        ("all_reduce", "f32[4][1]cuda:0", ["'avg'", "'0'"]),
        ("all_gather_into_tensor", "bf16[8, 2][2, 1]cuda:0", ["2", "'0'"]),
        ("all_to_all_single", "f32[5][1]cuda:0", ["[2, 3]", "[1, 4]", "'1'"]),
    ]
    assert [collective_text(c) for c in calls] == [
        "all_reduce f32[4] 'avg' '0'",
        "all_gather_into_tensor bf16[8, 2] 2 '0'",
        "all_to_all_single '1'",
    ]
    assert graph_collectives(text.replace("c10d_functional", "aten")) == []


def test_ranks_on_their_own_gpus_calling_the_same_collectives_agree(tlparse_traces: Path) -> None:
    """tlparse's multi_rank_runtime (7 ranks, real CUDA traces): each rank's tensors are on its own
    device (cuda:0, cuda:1...), its graphs call an all_reduce, an all_gather_into_tensor and a
    reduce_scatter_tensor; the device is not compared, so the ranks agree on every compile id."""
    job = tlscope.load(tlparse_traces / "inputs" / "multi_rank_runtime")
    assert job.job_view().divergence.collectives == []
    devices = set()
    for rank in job.rank_numbers:
        calls = [
            c
            for e in job.rank(rank).compiles
            for g in e.graphs
            if g.kind == "dynamo_output_graph"
            for c in g.collectives
        ]
        assert {c.op for c in calls} == {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor"}
        devices |= {(c.tensor or "").rsplit("]", 1)[-1] for c in calls}
    assert len(devices) > 1  # the ranks' devices do differ


def test_the_landing_page_claims_no_tensor_meta_match_of_nothing(tmp_path: Path) -> None:
    """tlparse's Tensor Metadata Analysis said "All ranks have matching tensor meta signatures" of a
    job none of whose ranks logged the artifact it compares (DEVIATIONS.md), beside our collectives
    sentence saying the ranks desync. The logs have no such artifact; the page says so."""
    logs = sorted(DESYNC.glob("*.log.gz"))
    assert not any(b"inductor_runtime_and_tensor_meta" in gzip.decompress(log.read_bytes()) for log in logs)
    out = tmp_path / "out"
    assert cli([str(DESYNC), "-o", str(out), "--no-browser"]) == 0
    page = (out / "index.html").read_text()
    assert "matching tensor meta signatures" not in page
    assert 'id="tensor-meta-unlogged"' in page and "No rank logged inductor tensor metadata" in page


def _schedules_in_log(log: Path) -> list[tuple[int, list[str]]]:
    """(frame id, ops) of every inductor_collective_schedule artifact of the log, read here."""
    found: list[tuple[int, list[str]]] = []
    lines = log.read_text("utf-8").split("\n")
    for n, line in enumerate(lines):
        at = line.find("{")
        envelope = json.loads(line[at:]) if at >= 0 and not line.startswith("\t") else {}
        if str((envelope.get("artifact") or {}).get("name", "")).startswith("inductor_collective_schedule"):
            payload = []
            for tail in lines[n + 1 :]:
                if not tail.startswith("\t"):
                    break
                payload.append(tail[1:])
            found.append((envelope["frame_id"], json.loads("\n".join(payload))))
    return found


def test_an_inductor_schedule_that_differs_between_ranks_is_said(tlparse_traces: Path, tmp_path: Path) -> None:
    """tlparse's multi_rank_schedule (format 1.34): every rank compiled the same ids, but Inductor
    scheduled no reduce_scatter_tensor on rank 1 for [0/0]: ranks 0 and 2 would wait for it for
    ever. tlparse's landing page said which ranks' whole sequences differ; tlscope says the
    compile id and the collective, on every face, from each compile's schedules in compiles.json."""
    job = tlparse_traces / "inputs" / "multi_rank_schedule"
    out = tmp_path / "out"
    assert cli([str(job), "-o", str(out), "--no-browser"]) == 0
    for log in sorted(job.glob("*rank_*.log")):
        rank = int(re.search(r"rank_(\d+)", log.name)[1])  # type: ignore[index]
        compiles = json.loads((out / f"rank_{rank}" / "compiles.json").read_text())["compiles"]
        written = [(int(c["id"][1:].split("/")[0]), s) for c in compiles for s in c.get("collective_schedules", [])]
        assert written == _schedules_in_log(log) != []
    divergence = json.loads((out / "ranks.json").read_text())["divergence"]
    assert divergence["diverges"] is False
    (mismatch,) = divergence["collectives"]
    assert (mismatch["id"], mismatch["kind"], mismatch["at"]) == ("[0/0]", "schedule", 2)
    assert mismatch["groups"] == [
        {"ranks": [0, 2], "collectives": ["all_reduce_", "all_gather_into_tensor", "reduce_scatter_tensor"]},
        {"ranks": [1], "collectives": ["all_reduce_", "all_gather_into_tensor"]},
    ]
    sentence = (
        "[0/0]: Inductor scheduled different collectives on different ranks: collective 3 is "
        "reduce_scatter_tensor on ranks 0, 2, none on rank 1; a collective that differs between ranks "
        "fails or hangs when it runs"
    )
    assert mismatch["sentence"] == sentence
    assert [(r["ranks"], r["collectives"]) for r in divergence["rows"]] == [([1], ["[0/0]"]), ([0, 2], [])]
    # The same from the logs folder, folded from each rank's compiles.json (no ranks.json there).
    assert [m.sentence for m in tlscope.load(job).job_view().divergence.collectives] == [sentence]


def test_diff_of_two_ranks_says_their_scheduled_collectives(
    tlparse_traces: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """multi_rank_schedule: `diff --ranks 0 1` says the mismatch first, then [0/0]'s own difference,
    the collectives each rank's Inductor scheduled (their guards differ only by addresses)."""
    job = tlparse_traces / "inputs" / "multi_rank_schedule"
    assert cli(["diff", str(job), "--ranks", "0", "1"]) == 1  # they differ
    out = capsys.readouterr().out
    differs = out.split("What differs:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert differs[0] == (
        "  graph_one (test2.py:28) compile 1: collectives_scheduled all_reduce_, all_gather_into_tensor, "
        "reduce_scatter_tensor -> all_reduce_, all_gather_into_tensor"
    )
    assert "guards differ" not in out


def test_a_schedule_is_compared_where_the_dynamo_graphs_agree() -> None:
    """A compile id whose Dynamo graphs' collectives differ is said once, by them; a rank that
    logged no schedule for an id (an FX graph cache hit logs none) is not compared."""
    from tlscope.analyse.ranks.divergence import RankLine, RankOverview, divergence

    def rank(n: int, calls: str, scheduled: str | None) -> RankOverview:
        return RankOverview(
            line=RankLine(rank=n),
            compile_ids=["[0/0]"],
            collectives={"[0/0]": calls},
            schedules={} if scheduled is None else {"[0/0]": scheduled},
        )

    agree = [rank(0, "all_reduce", "all_reduce\nall_gather"), rank(1, "all_reduce", None)]
    assert divergence(agree).collectives == []
    apart = [rank(0, "all_reduce", "all_reduce\nall_gather"), rank(1, "all_reduce", "all_gather\nall_reduce")]
    (found,) = divergence(apart).collectives
    assert (found.kind, found.at, [g.ranks for g in found.groups]) == ("schedule", 0, [[0], [1]])
    dynamo = [rank(0, "all_reduce f32[4]", "all_reduce"), rank(1, "all_reduce f32[5]", "all_gather")]
    (found,) = divergence(dynamo).collectives
    assert found.kind == "graph" and found.sentence.startswith("[0/0]: ranks call different collectives")
