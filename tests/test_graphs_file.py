"""graphs/<md5>.json (format 1.11, issue 23 point 1): every graph payload of the corpus and of
tlparse's public traces gets its file during the parse, read back typed by `trace.graph(event)`;
its node count equals the printed form's assignment lines and every argument reference resolves
to an input or an earlier node. A graph that cannot be read is a problem, never a crash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import CORPUS, TLPARSE_TRACES, all_nodes, assignment_lines, unresolved

import tlscope
from tlscope.analyse.fxgraph import FxGraph, FxGraphFailure
from tlscope.api import Trace


def inputs() -> list[Path]:
    """Each corpus log (a job's rank logs as their folder) and each tlparse trace."""
    folders = sorted(p for p in CORPUS.rglob("*") if p.is_dir())
    if TLPARSE_TRACES.is_dir():
        folders += [TLPARSE_TRACES / "inputs", TLPARSE_TRACES / "graph_exec_order_tests"]
    found: list[Path] = []
    for folder in folders:
        logs = sorted(p for p in folder.iterdir() if p.is_file() and p.name != "LICENSE")
        jobs = sorted(p for p in folder.iterdir() if p.is_dir() and folder.name == "inputs")
        found += [folder] if logs and all("_rank_" in p.name for p in logs) else logs
        found += jobs
    return found


def ranks(trace: Trace) -> Iterator[Trace]:
    yield from ([trace.rank(r) for r in trace.rank_numbers] if trace.rank_numbers else [trace])


def check_trace(trace: Trace) -> tuple[int, set[str]]:
    """(graph events, distinct graph payloads) of one rank, each graph checked."""
    events, distinct = 0, set()
    for event in trace.events():
        text = trace.payload(event)
        if text is None or "torch.nn.Module):" not in text:
            assert trace.graph(event) is None, event.get("payload_filename")
            continue
        graph = trace.graph(event)
        assert isinstance(graph, FxGraph), (event["payload_filename"], graph)
        assert all_nodes(graph) == assignment_lines(text), event["payload_filename"]
        assert unresolved(graph) == [], event["payload_filename"]
        events += 1
        distinct.add(event["payload_filename"])
    return events, distinct


@pytest.mark.parametrize("path", inputs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_graph_payload_gets_its_graphs_file(path: Path) -> None:
    trace = tlscope.load(path)
    for rank in ranks(trace):
        _, distinct = check_trace(rank)
        manifest = rank.manifest
        assert manifest.problems.counts.get("bad_graph", 0) == 0
        if not trace.rank_numbers:  # a job's graphs/ is shared: its ranks' counts overlap
            assert manifest.graphs is not None and (manifest.graphs.files, manifest.graphs.failed) == (len(distinct), 0)
        assert not any(f.startswith("graphs/") for f in manifest.files)


def test_a_graph_that_cannot_be_read_is_a_problem_with_its_text_kept(tmp_path: Path) -> None:
    payload = b'class GraphModule(torch.nn.Module):\n    def forward(self, L_x_: "f32[4]"):\n        x = torch.sin(('
    md5 = hashlib.md5(payload).hexdigest()
    envelope = {"dynamo_output_graph": {}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": md5}
    body = b"".join(b"\t" + line + b"\n" for line in payload.split(b"\n"))
    log = tmp_path / "bad.log"
    log.write_bytes(
        b"V1126 22:00:00.000000 1 torch/_dynamo/output_graph.py:1] " + json.dumps(envelope).encode() + b"\n" + body
    )
    trace = tlscope.load(log)
    event = next(trace.events(kind="dynamo_output_graph"))
    failure = trace.graph(event)
    assert isinstance(failure, FxGraphFailure) and "not Python source" in failure.reason
    assert trace.manifest.problems.counts == {"bad_graph": 1}
    assert trace.manifest.graphs is not None and trace.manifest.graphs.failed == 1
    assert trace.payload(event) == payload.decode()
    stored = json.loads((trace.folder / "graphs" / f"{md5}.json").read_bytes())
    assert stored["graph"] is None and stored["payload"] == f"payloads/{md5}.txt"


def test_the_file_reads_back_as_the_parsed_graph() -> None:
    """What the file holds is what the parser read (sources shared through the table)."""
    from tlscope.analyse.fxgraph import parse_graph

    trace = tlscope.load(CORPUS / "recompiles_dynamic")
    for event in trace.events(kind="dynamo_output_graph"):
        text = trace.payload(event)
        assert text is not None
        assert trace.graph(event) == parse_graph(text)
