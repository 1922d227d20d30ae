"""A run none of whose compiles made a graph says so (compiles.json `first_answers` kind
`no_graph`, format 1.45): corpus ddp_sequential, a DDP-wrapped `nn.Sequential` whose forward
DDP runs after a graph break, in torch.nn's own code, where Dynamo starts no frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.analyse.headline import FirstAnswers
from tlscope.cli import main
from tlscope.format.compiles import CompileEntry, Failure, Graph, Metrics

SAID = (
    "nothing compiled: no compile made a graph (each restarted, broke before its first op or was empty), "
    "so every compiled function ran in eager"
)


def test_ddp_sequential_says_nothing_compiled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main([str(CORPUS / "ddp_sequential"), "-o", str(out), "--no-browser"]) == 0
    compiles = json.loads((out / "compiles.json").read_text("utf-8"))
    assert {c["status"] for c in compiles["compiles"]} == {"outside", "restarted", "graph_break", "empty"}
    kinds = [(a["kind"], a["compile_id"]) for a in compiles["first_answers"]]
    assert kinds == [("no_graph", "[0/0]"), ("graph_break", "[1/0]")]
    assert compiles["first_answers"][0]["text"] == SAID
    assert SAID in " ".join(capsys.readouterr().out.split())


def _entry(cid: str, status: str, **fields: object) -> CompileEntry:
    return CompileEntry(id=cid, dir=cid, status=status, frame_compile=cid, **fields)  # type: ignore[arg-type]


def _kinds(*entries: CompileEntry) -> list[str]:
    return [a.kind for a in FirstAnswers(entries).answers(())]


def test_only_when_no_compile_made_anything() -> None:
    nothing = (_entry("[-/-]", "outside"), _entry("[0/0]", "restarted"), _entry("[0/0_1]", "graph_break"))
    assert _kinds(*nothing, _entry("[1/0]", "empty")) == ["no_graph"]
    assert [a.compile_id for a in FirstAnswers(nothing).answers(())] == ["[0/0]"]
    graph = Graph(kind="dynamo_output_graph", log_line=9, nodes=3)
    assert _kinds(*nothing, _entry("[1/0]", "graph_break", graphs=[graph])) == []
    ops = Metrics(graph_op_count=2)
    assert _kinds(*nothing, _entry("[1/0]", "graph_break", metrics=ops)) == []
    for status in ("ok", "cache_hit", "metrics_missing"):
        assert _kinds(*nothing, _entry("[1/0]", status)) == [], status
    failed = _entry("[1/0]", "failed", failure=Failure(type="Unsupported", reason="r"))
    assert _kinds(*nothing, failed) == ["failure"]
    assert _kinds(_entry("[-/-]", "outside")) == []
    assert _kinds() == []
