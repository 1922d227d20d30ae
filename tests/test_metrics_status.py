"""The stack-trie status of a compile id, from the few bits the metrics index keeps per key.

tlparse's rules look at every compilation_metrics record that counts for an id: error if any
has a fail_type, else empty if any has no graph ops, else break if any has restarts (or a null
restart_reasons), else ok; missing without records. The index keeps only an OR of bits per key,
so this checks it against those rules applied to the kept records themselves.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from tlscope.analyse.tlparse.metrics import MetricsIndex
from tlscope.model.compile_id import CompileId
from tlscope.model.events import CompilationMetrics


def tlparse_status(records: list[dict[str, Any]]) -> str:
    if not records:
        return "status-missing"
    if any(m.get("fail_type") is not None for m in records):
        return "status-error"
    if any(not m.get("graph_op_count") for m in records):
        return "status-empty"
    if any(m.get("restart_reasons") is None or m.get("restart_reasons") for m in records):
        return "status-break"
    return "status-ok"


_records = st.fixed_dictionaries(
    {},
    optional={
        "fail_type": st.none() | st.just("Unsupported"),
        "graph_op_count": st.none() | st.integers(0, 3),
        "restart_reasons": st.none() | st.just([]) | st.just(["graph break"]),
        "dynamo_config": st.just("{...}"),
    },
)
_cids = st.sampled_from(
    [
        None,
        CompileId(frame_id=0, frame_compile_id=0, attempt=0),
        CompileId(frame_id=0, frame_compile_id=0, attempt=1),
        CompileId(frame_id=0, frame_compile_id=0),
        CompileId(frame_id=1, frame_compile_id=0, attempt=0),
    ]
)


@given(st.lists(st.tuples(_cids, _records), max_size=8), _cids)
def test_status_follows_tlparse_rules(added: list[tuple[CompileId | None, dict[str, Any]]], asked: Any) -> None:
    index = MetricsIndex()
    for cid, record in added:
        index.add(cid, msgspec.convert(record, CompilationMetrics))
    # Which records count for an id: attempt-0 ids see every attempt of their frame compile
    # (tlparse's merge), ids with attempt >= 1 only their own (a deviation, DEVIATIONS.md).
    if asked is None:
        counted = [r for c, r in added if c is None]
    elif asked.attempt:
        counted = [r for c, r in added if c is not None and c.normalised() == asked.normalised()]
    else:
        counted = [r for c, r in added if c is not None and c.frame_id == asked.frame_id and c.frame_compile_id == 0]
    assert index.status(asked) == tlparse_status(counted)


def test_each_status() -> None:
    index = MetricsIndex()
    ids = [CompileId(frame_id=i, frame_compile_id=0, attempt=0) for i in range(5)]
    index.add(ids[0], CompilationMetrics(**{"graph_op_count": 3, "restart_reasons": []}))
    index.add(ids[1], CompilationMetrics(**{"graph_op_count": 3, "restart_reasons": ["x"]}))
    index.add(ids[2], CompilationMetrics(**{"graph_op_count": 0, "restart_reasons": []}))
    index.add(ids[3], CompilationMetrics(**{"graph_op_count": 3, "restart_reasons": [], "fail_type": "E"}))
    statuses = [index.status(cid) for cid in ids]
    assert statuses == ["status-ok", "status-break", "status-empty", "status-error", "status-missing"]
