"""model/lenient.py: typed events out of metadata that does not fit its schema."""

from __future__ import annotations

from pathlib import Path

import msgspec
from helpers import CORPUS

from tlscope.model.events import (
    CompilationMetrics,
    ExpressionCreated,
    Frame,
    FrameLocals,
    GuardAdded,
    Link,
)
from tlscope.model.lenient import frames_of, lenient
from tlscope.read.reader import LogReader


def test_well_formed_metadata_converts_as_the_reader_types_it() -> None:
    checked = 0
    for log in sorted(CORPUS.rglob("*.log.gz"))[:6]:
        for record in LogReader(Path(log)):
            if record.event is not None and record.key != "str":
                assert lenient(record.metadata, type(record.event)) == record.event
                checked += 1
    assert checked > 1000


def test_a_field_of_the_wrong_type_is_dropped_alone() -> None:
    m = lenient({"fail_type": 5, "graph_op_count": 3, "co_name": "f"}, CompilationMetrics)
    assert m == CompilationMetrics(graph_op_count=3, co_name="f")
    assert lenient({"name": "n", "url": 7}, Link) == Link(name="n")


def test_list_items_and_nested_objects_are_kept_where_they_fit() -> None:
    m = lenient({"restart_reasons": ["graph break", 1]}, CompilationMetrics)
    assert m is not None and m.restart_reasons == ["graph break"]
    guard = lenient(
        {"expr": "s0 > 1", "expr_node_id": True, "frame_locals": {"locals": 3, "symbols": {"s0": "x"}}}, GuardAdded
    )
    assert guard == GuardAdded(expr="s0 > 1", frame_locals=FrameLocals(symbols={"s0": "x"}))
    created = lenient({"argument_ids": [1, "x", None, 2], "arguments": ["a", 1]}, ExpressionCreated)
    assert created == ExpressionCreated(argument_ids=[1, None, 2], arguments=["a", 1])


def test_frames_booleans_are_not_line_numbers_and_junk_items_are_skipped() -> None:
    frames = frames_of([{"line": True, "filename": 0, "name": "f"}, 3, None, {"line": 2, "filename": "x", "loc": 5}])
    assert frames == [Frame(filename=0, name="f"), Frame(filename="x", line=2)]
    assert frames_of([{"line": 1, "filename": 0}]) == [Frame(filename=0, line=1)]
    assert frames_of({"line": 1}) is None and frames_of(None) is None


def test_metadata_that_is_not_an_object_gives_nothing() -> None:
    for value in (None, [1], "x", 3, True):
        assert lenient(value, Link) is None
    assert msgspec.convert({}, Link) == lenient({}, Link)
