"""Graph diff by structure (issue 23, point 5): nodes matched by op, target and user source, not
by text line; added and removed nodes, targets, shapes and arguments changed, and the change said
once for the later stages it reaches. On real traces: a recompile where only a shape changes, one
where the user's code adds an op, and two ranks whose code took another branch."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path

from helpers import CORPUS

import tlscope
from tlscope.analyse.diff import GraphChange, compile_pair_diff
from tlscope.analyse.graph_diff import StageDiff, diff_graph_texts
from tlscope.api import Trace
from tlscope.write.diffview import structure_lines

SHAPE_KINDS = {"input_added", "input_shape", "shape", "args"}


@cache
def _trace(name: str) -> Trace:
    return tlscope.load(CORPUS / name)


def _ids(name: str, a: str, b: str) -> GraphChange:
    trace = _trace(name)
    result = compile_pair_diff(trace.compile(a), trace.compile(b), trace.payload, trace.payload)
    assert len(result.summary.graphs) == 1
    return result.summary.graphs[0]


def _first(change: GraphChange) -> StageDiff:
    assert change.structure and change.structure[0].unreadable is None
    return change.structure[0]


def test_only_a_shape_changed_is_said_as_shapes_not_lines() -> None:
    """recompiles [0/0] -> [0/1]: dim 0 of x became dynamic (4 -> s77); the graph is the same."""
    change = _ids("recompiles", "[0/0]", "[0/1]")
    first = _first(change)
    assert first.stage == "dynamo_output_graph #1"
    assert first.nodes_a == first.nodes_b == first.matched == 3
    assert set(first.counts) == {"input_added", "input_shape", "shape"}
    assert first.counts["shape"] == 3
    shapes = [c for c in first.changes if c.kind == "shape"]
    assert [c.name for c in shapes] == ["tanh", "mul", "add"]
    assert all(c.a is not None and c.a.startswith("f32[4, 8]") for c in shapes)
    assert all(c.b is not None and c.b.startswith("f32[s77, 8]") for c in shapes)
    assert all(c.source is not None and c.source.startswith("recompiles.py:10") for c in shapes)
    assert next(c for c in first.changes if c.kind == "input_added").b == "Sym(s77)"
    # Every later stage (AOT, Inductor) shows the same kind of change: shapes only, no node added.
    later = [s for s in change.structure[1:] if s.unreadable is None]
    assert later and all(set(s.counts) <= SHAPE_KINDS and s.matched == s.nodes_a == s.nodes_b for s in later)


def test_an_added_op_is_one_added_node_at_the_users_line() -> None:
    """recompiles_dynamic [2/0] -> [2/1]: `summed` got three tensors instead of two."""
    first = _first(_ids("recompiles_dynamic", "[2/0]", "[2/1]"))
    assert first.counts == {"input_added": 1, "added": 1}
    added = next(c for c in first.changes if c.kind == "added")
    assert added.name == "total_1" and added.b is not None and "Add(total, l_xs_2_)" in added.b
    assert added.source == "recompiles_dynamic.py:26  total = total + t"
    assert next(c for c in first.changes if c.kind == "input_added").name == "L_xs_2_"


def test_across_ranks_another_branch_is_nodes_removed_and_added() -> None:
    """ranks_diverge_2: rank 1's branchy_fn took `x.cos() * rank` where rank 0 ran `x.sin() + rank`."""
    job = _trace("ranks_diverge_2")
    result = job.rank(0).diff(job.rank(1))
    branchy = next(g for g in result.summary.graphs if g.key.startswith("branchy_fn"))
    first = _first(branchy)
    removed = {(c.name, c.source) for c in first.changes if c.kind == "removed"}
    added = {(c.name, c.source) for c in first.changes if c.kind == "added"}
    assert {n for n, _ in removed} == {"sin", "add"} and {n for n, _ in added} == {"cos", "mul"}
    assert all(s is not None and s.startswith("_ranks.py:62") for _, s in removed)
    assert all(s is not None and s.startswith("_ranks.py:63") for _, s in added)
    # The model's forward only saw another batch size: shapes, in every stage.
    forward = next(g for g in result.summary.graphs if g.key.startswith("Mlp.forward"))
    assert {k for s in forward.structure for k in s.counts} <= SHAPE_KINDS


def test_a_graph_against_itself_has_no_change_and_a_non_graph_is_said_unreadable() -> None:
    trace = _trace("recompiles")
    text = trace.payload(trace.compile("[0/0]").graphs[0].payload_filename or "")
    same = diff_graph_texts("dynamo_output_graph #1", text, text)
    assert same.unreadable is None and same.counts == {} and same.matched == same.nodes_a > 0
    assert diff_graph_texts("x", "not a graph", text).unreadable


def test_tlscope_diff_ids_prints_the_change_by_structure_once() -> None:
    log = str(next((CORPUS / "recompiles").glob("*.log.gz")))
    out = subprocess.run(
        [sys.executable, "-m", "tlscope", "diff", log, "--ids", "0/0", "0/1"], capture_output=True, text=True
    ).stdout
    head = out.split("\nDetails:", 1)[0]
    assert "by structure, in dynamo_output_graph #1 (nodes: 3 in A, 3 in B, 3 matched):" in head
    assert "~ shape of tanh: f32[4, 8][8, 1]cpu -> f32[s77, 8][8, 1]cpu" in head
    assert "the same kind of change reaches 7 later stages" in head
    assert head.count("shape of tanh") == 1


def _on(text: str, device: str) -> str:
    """A CPU graph's text as if it had run on `device` (the corpus is CPU-only)."""
    assert "]cpu" in text
    return text.replace("]cpu", f"]{device}")


def test_tensors_that_differ_only_in_device_are_one_mapping_not_a_change_per_node() -> None:
    """Two ranks each on its own GPU: every tensor of every graph differs in its device alone. That
    is counted and said once as the stage's `devices`, not listed, so real changes stay visible."""
    trace = _trace("recompiles")
    text = trace.payload(trace.compile("[0/0]").graphs[0].payload_filename or "")
    moved = diff_graph_texts("dynamo_output_graph #1", _on(text, "cuda:0"), _on(text, "cuda:1"))
    assert moved.changes == [] and moved.devices == [("cuda:0", "cuda:1")]
    assert moved.counts == {"input_device": 1, "device": 3}
    # A shape change on another device stays a shape change (the annotation as printed), and the
    # dimension made dynamic is still said: the device does not hide it.
    other = trace.payload(trace.compile("[0/1]").graphs[0].payload_filename or "")
    both = diff_graph_texts("dynamo_output_graph #1", _on(text, "cuda:0"), _on(other, "cuda:1"))
    assert set(both.counts) == {"input_added", "input_shape", "shape"} and both.devices == []
    shape = next(c for c in both.changes if c.kind == "shape")
    assert shape.a == "f32[4, 8][8, 1]cuda:0" and shape.b == "f32[s77, 8][8, 1]cuda:1"
    assert "devices" not in "\n".join(structure_lines([both]))
    assert list(structure_lines([moved])) == [
        "      by structure, in dynamo_output_graph #1: only devices changed, "
        "cuda:0 -> cuda:1 (1 input, 3 nodes; nothing else changed on them)"
    ]


def test_diff_ranks_on_their_own_gpus_masks_the_device_and_shows_what_else_changed(
    tlparse_traces: Path, tmp_path: Path
) -> None:
    """tlparse's multi_rank_runtime: rank 0 ran on cuda:0, rank 6 on cuda:1, from another revision
    of the program, whose functions are 16 lines higher. `--ranks` masks each rank's own device
    (`cuda:…`), and every diff the user's line numbers: both compiles' graphs are the same code at
    other lines, so no graph differs (they were 17 lines of `~ shape of`, then one of `~ devices`;
    then, matched by line number, the second compile's nodes met other code at their old numbers
    and read as a linear turned all_gather of another shape). What does differ is still said."""
    logs = tlparse_traces / "inputs" / "multi_rank_runtime"
    out = subprocess.run(
        [sys.executable, "-m", "tlscope", "diff", str(logs), "--ranks", "0", "6"], capture_output=True, text=True
    ).stdout
    head = out.split("\nDetails:", 1)[0]
    assert "graphs differ:" not in head and "cuda:1" not in head and "~ devices:" not in head
    assert head.count("guards differ:") == 2 and head.count("generated code differs") == 2
    job = tlscope.load(logs)
    a, b = job.rank(0), job.rank(6)
    graphs = [
        next(g for g in e.graphs if g.kind == "dynamo_output_graph") for e in (a.compile("[0/1]"), b.compile("[0/1]"))
    ]
    stage = diff_graph_texts(
        "dynamo_output_graph", a.payload(graphs[0].payload_filename), b.payload(graphs[1].payload_filename)
    )
    assert (stage.nodes_a, stage.nodes_b, stage.matched) == (16, 16, 16)
    assert stage.changes == [] and set(stage.counts) == {"device", "input_device"}


def test_a_graph_one_rank_loaded_from_the_cache_shifts_no_other_graph() -> None:
    """ranks_same_4: rank 1 loaded two of forward's graphs from the FX graph cache that rank 0
    compiled, so Inductor logged 4 before_post_grad_graphs on rank 1 against 6 on rank 0, the gap
    in the middle. Paired by position, rank 0's #2 (a forward graph, 4 nodes) was compared with
    rank 1's #2 (its backward, 17 nodes): "graphs differ" between ranks running the same program.
    Aligned by text, every graph has its counterpart, and the two missing ones are not compared."""
    job = _trace("ranks_same_4")
    result = job.rank(0).diff(job.rank(1))
    assert result.summary.graphs == []
    forward = next(c for c in result.compiles if c.key.startswith("Mlp.forward"))
    assert [d.what for d in forward.differences] == ["cache"]
    assert forward.not_logged == [
        "graph before_post_grad_graph #2 (only in A; B hit a cache)",
        "graph before_post_grad_graph #3 (only in A; B hit a cache)",
    ]
    # The other way round, the same two, named by B's numbers.
    back = next(c for c in job.rank(1).diff(job.rank(0)).compiles if c.key.startswith("Mlp.forward"))
    assert back.not_logged == [
        "graph before_post_grad_graph #2 in B (only in B; A hit a cache)",
        "graph before_post_grad_graph #3 in B (only in B; A hit a cache)",
    ]
