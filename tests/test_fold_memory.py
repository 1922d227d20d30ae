"""The compile fold keeps what is distinct, not what is repeated (issue 21's flat memory at 1 GB).

A real trace scaled to three copies (corpus/scale.py: fresh compile ids per copy, the same graphs
and tensors) is folded; each copy's graph inputs and tensor descriptions must be the very objects
of the first copy's, and the entries must say the same as those of a fold that shares nothing.
"""

from __future__ import annotations

import gc
import hashlib
import io
import sys
from pathlib import Path

import msgspec
import pytest
from helpers import CORPUS

from tlscope.analyse.fold.compile_fold import CompileFold
from tlscope.analyse.fold.compileacc import CompileAcc
from tlscope.analyse.fold.compileresult import entries
from tlscope.analyse.fold.framestore import Frame, FrameState
from tlscope.analyse.fold.graphbreaks import BreakGroups, distinct_graph_breaks
from tlscope.analyse.fold.shared import Shared
from tlscope.format.compiles import GraphInput
from tlscope.model.events import DescribeTensor
from tlscope.model.problems import Problems
from tlscope.read.reader import LogReader
from tlscope.write.answers_sink import AnswersSink, write_compiles

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "corpus"))
import scale as scale_module  # noqa: E402  (corpus/ is scripts, not a package)


def _fold(log: Path) -> CompileFold:
    fold = CompileFold()
    for record in LogReader(log):
        fold.feed(record)
    return fold


def _three_copies(tmp_path: Path) -> Path:
    source = next((CORPUS / "recompiles").glob("*.log.gz"))
    one = scale_module.scale(source, tmp_path / "one.log", 1)
    out = tmp_path / "three.log"
    # Whole copies: two copies' bytes and one more make the third.
    assert scale_module.scale(source, out, 2 * one.bytes_written + 1).copies == 3
    return out


def test_copies_share_graph_inputs_and_tensors(tmp_path: Path) -> None:
    fold = _fold(_three_copies(tmp_path))
    by_frame: dict[int, list[int]] = {}
    for cid, acc in fold.accs.items():
        if cid.frame_id is not None:
            by_frame.setdefault(cid.frame_id, []).append(id(acc))
    frames = sorted(by_frame)
    per_copy = len(frames) // 3
    assert per_copy >= 1 and len(frames) == 3 * per_copy, frames  # three copies of the same frames

    graph_inputs = [i for acc in fold.accs.values() for g in acc.graphs for i in g.inputs]
    tensors = [t for acc in fold.accs.values() for t in acc.inputs.values()]
    assert graph_inputs and tensors
    # Three copies, but each distinct input once: the copies' objects are the first copy's.
    assert len({id(i) for i in graph_inputs}) * 3 <= len(graph_inputs)
    assert len({(i.name, i.type) for i in graph_inputs}) == len({id(i) for i in graph_inputs})
    sizes = [t.size for t in tensors if t.size is not None]
    assert len({id(s) for s in sizes}) * 3 <= len(sizes)


def test_sharing_changes_no_entry(tmp_path: Path) -> None:
    """The entries equal those of a fold whose Shared keeps every object as it came."""

    class Unshared(Shared):
        def _one(self, key: tuple[object, ...], value: object) -> object:  # type: ignore[override]
            return value

    log = _three_copies(tmp_path)
    shared = _fold(log)
    plain = CompileFold()
    plain.shared = Unshared()
    for record in LogReader(log):
        plain.feed(record)
    encode = msgspec.json.encode
    assert [encode(e) for e in entries(shared)] == [encode(e) for e in entries(plain)]


def test_shared_values_are_equal_values() -> None:
    shared = Shared()
    a, b = GraphInput(name="L_x_", type="f32[4]"), GraphInput(name="L_x_", type="f32[4]")
    assert shared.graph_inputs([a])[0] is a and shared.graph_inputs([b])[0] is a
    assert shared.graph_inputs([GraphInput(name="L_x_", type=None)])[0] is not a
    assert shared.text("cpu") is shared.text("".join(["c", "pu"]))
    first = shared.tensor(DescribeTensor(id=1, dtype="torch.float32", size=[2], stride=[1]))
    again = shared.tensor(DescribeTensor(id=9, dtype="torch.float32", size=[2], stride=[1]))
    other = shared.tensor(DescribeTensor(id=1, dtype="torch.float32", size=[3], stride=[1]))
    assert first is again and first is not other
    assert first.dynamo_dynamic_indices == [] and first.size == [2]


def test_a_repeated_json_artifact_is_judged_once_and_said_per_record(tmp_path: Path) -> None:
    """The fold keeps a JSON artifact payload's verdict by MD5 (decoded once), and still reports a
    bad one at every line that logs it."""
    bad, good = b"{not json", b'{"a": [1, 2]}'
    lines = []
    for payload in (bad, good, bad, good):
        md5 = hashlib.md5(payload).hexdigest()
        envelope = (
            '{"artifact": {"name": "fx_graph_cache_hash", "encoding": "json"}, '
            f'"frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "{md5}"}}'
        )
        lines.append(f"V1126 22:47:46.741000 1 torch/_logging/_internal.py:1328] {envelope}\n")
        lines.append("\t" + payload.decode() + "\n")
    log = tmp_path / "artifacts.log"
    log.write_text("".join(lines))
    said: list[tuple[int, str]] = []
    fold = CompileFold(lambda line, message: said.append((line, message)))
    for record in LogReader(log):
        fold.feed(record)
    assert [line for line, _ in said] == [1, 5]
    assert said[0][1] == said[1][1] and "not JSON" in said[0][1]


# Issue 21, flat memory at 1 GB: the fold keeps a bounded number of frames as objects; the frames
# the log has moved past are in its store (analyse/fold/framestore.py), and compiles.json is the same.


def _answers(log: Path, limit: int) -> tuple[AnswersSink, LogReader]:
    sink = AnswersSink(Problems(), log)
    sink.compiles.frames.limit = limit
    reader = LogReader(log)
    for line, record in enumerate(reader, start=2):
        sink.feed(record, line)
    return sink, reader


def _live(kind: type) -> int:
    gc.collect()
    return sum(isinstance(o, kind) for o in gc.get_objects())


@pytest.mark.parametrize("copies", [3, 9])
def test_the_fold_holds_the_same_compile_state_whatever_the_log_size(tmp_path: Path, copies: int) -> None:
    """Fed 3 or 9 copies of a real trace (fresh compile ids each), the fold holds the per-compile
    accumulators of its last few frames only: the same count at the end of both passes. (Before,
    it held every compile id's to the end: 3x more objects for 3x the log.)"""
    source = next((CORPUS / "recompiles").glob("*.log.gz"))
    one = scale_module.scale(source, tmp_path / "one.log", 1)
    log = tmp_path / "copies.log"
    assert scale_module.scale(source, log, (copies - 1) * one.bytes_written + 1).copies == copies
    before = _live(CompileAcc)
    sink, reader = _answers(log, limit=2)
    held = _live(CompileAcc) - before
    live_ids = sum(1 for frame in sink.compiles.frames.live_frames() for _ in _peek(sink, frame).accs)
    assert held == live_ids  # nothing else keeps an accumulator: the stored frames are on disk
    total = len(sink.compiles.accs)  # each copy's compile ids, and `[-/-]` once
    assert 0 < held <= 2 * -(-total // copies)  # two frames at most, whatever the number of copies
    assert sink.compiles.frames.stored >= copies - 1
    assert len(sink.result(reader).compiles) == total


def _peek(sink: AnswersSink, frame: Frame) -> FrameState:
    state = sink.compiles.frames.peek(frame)
    assert state is not None
    return state


@pytest.mark.parametrize("name", ["recompiles", "recompiles_dynamic", "graph_breaks_repeated", "compiled_autograd"])
def test_stored_frames_give_the_same_compiles_json(name: str) -> None:
    """Every frame stored and taken back as the log moves on (one live frame) or none stored: the
    same compiles.json bytes (entries, breaks, symbols with their recompiles, input shapes)."""
    log = next((CORPUS / name).glob("*.log.gz"))
    files = []
    for limit in (1, 10**6):
        sink, reader = _answers(log, limit)
        answers = sink.result(reader)
        f = io.BytesIO()
        write_compiles(f, answers.compiles, answers.graph_breaks, answers.symbols, answers.input_shapes)
        files.append(f.getvalue())
        if limit == 1:
            assert sink.compiles.frames.stored > 0 and sink.compiles.frames.taken_back > 0
    assert files[0] == files[1]


def test_graph_break_groups_do_not_depend_on_entry_order() -> None:
    """compiles.json's distinct breaks are gathered a frame at a time: any order gives the same."""
    log = next((CORPUS / "graph_breaks_repeated").glob("*.log.gz"))
    found = entries(_fold(log))
    groups = BreakGroups()
    for entry in reversed(found):
        groups.add(entry)
    encode = msgspec.json.encode
    assert len(found) > 2 and encode(groups.result()) == encode(distinct_graph_breaks(found))
    assert sum(g.count for g in groups.result()) == sum(len(e.graph_breaks) for e in found) > 1
