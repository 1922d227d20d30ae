"""The shared conformance cases (tests/conformance/cases.json) under Python; tests/js/conformance.test.mjs
runs the same file under node, so tlscope's Python and the JS client answer every case alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import REPO

from tlscope.analyse.fold.recommend import recommended_failure
from tlscope.analyse.headline import read_first_answers
from tlscope.analyse.ranks.divergence import SAID, RanksFile, read_ranks_file
from tlscope.analyse.ranks.frames import FrameRef
from tlscope.format import layout
from tlscope.format.compiles import FIRST_ANSWER_KINDS, CompileEntry, CompilesFile, GuardFailure, TensorInput
from tlscope.format.folder import OutputFolder
from tlscope.format.raw import display_compile_id, event_key
from tlscope.format.status import FROM_TLPARSE, STATUS_ORDER, STATUSES, status_from_metrics
from tlscope.model.compile_id import compile_id_from_envelope, compile_id_order
from tlscope.model.events import CompilationMetrics
from tlscope.serve.index import EventIndex, Filter, Part

CASES: dict[str, Any] = json.loads((REPO / "tests" / "conformance" / "cases.json").read_text(encoding="utf-8"))


def test_status_order_is_the_vocabulary_and_compiles_json_carries_it() -> None:
    assert list(STATUS_ORDER) == CASES["status_order"] == list(STATUSES)
    head = CompilesFile(format_version=1, format_minor=3, statuses=STATUSES, compiles=[], graph_breaks=[])
    assert msgspec.to_builtins(head)["status_order"] == CASES["status_order"]
    assert CASES["tlparse_words"] == FROM_TLPARSE


@pytest.mark.parametrize("case", CASES["status_from_metrics"], ids=lambda c: json.dumps(c["metrics"]))
def test_status_from_metrics(case: dict[str, Any]) -> None:
    assert status_from_metrics(msgspec.convert(case["metrics"], CompilationMetrics)) == case["status"]


def _failures(failures: list[dict[str, str]]) -> list[GuardFailure]:
    """A case's failures, newest entry first (`[0/N-1]` ... `[0/0]`), each of input `x` when its
    guard is given, or of the `subject` given (a global-state failure's parts)."""
    n = len(failures)
    return [
        GuardFailure(
            cache_entry=f"[0/{n - 1 - i}]",
            guard=f.get("guard", "g"),
            kind=f["kind"],
            explanation="e",
            subject=f.get("subject", "x" if "guard" in f else None),
            expected=f.get("expected"),
            actual=f.get("actual"),
        )
        for i, f in enumerate(failures)
    ]


def _tensor(fields: dict[str, Any]) -> TensorInput:
    return msgspec.convert({"source": "L['x']", **fields}, TensorInput)


def _kinds(case: dict[str, Any]) -> str:
    return ",".join(f["kind"] for f in case["failures"]) or "none"


@pytest.mark.parametrize("case", CASES["recommended_failure"], ids=_kinds)
def test_recommended_failure(case: dict[str, Any]) -> None:
    """compiles.json's `recommended` from the failures, each entry's tensor input `x` and the
    call's, and what earlier recompiles said of the entries (`known`) (FORMAT.md "Which failure
    is the cause"); the JS client reads what it says."""
    entries = {entry: [_tensor(fields)] for entry, fields in case.get("entries", {}).items()}
    call = [_tensor(case["call"])] if "call" in case else []
    found = recommended_failure(_failures(case["failures"]), entries, call, case.get("known"))
    assert (found.index if found else None, found.why if found else None) == (case["index"], case["why"])


@pytest.mark.parametrize("case", CASES["compile_id_display"], ids=lambda c: json.dumps(c["event"]))
def test_compile_id_display(case: dict[str, Any]) -> None:
    # One function for tlscope.load's events, the events API and the oracle (format/raw.py).
    assert display_compile_id(case["event"]) == case["display"]


def test_compile_id_order() -> None:
    """The manifest's order (compile ids of the events, sorted by compile_id_order)."""
    order = CASES["compile_id_order"]
    ids = {compile_id_from_envelope(e).normalised() for e in order["events"]}
    assert [c.display for c in sorted(ids, key=compile_id_order)] == order["sorted"]


@pytest.mark.parametrize("case", CASES["event_key"], ids=lambda c: c["key"])
def test_event_key(case: dict[str, Any]) -> None:
    assert event_key(case["event"]) == case["key"]


@pytest.mark.parametrize("case", CASES["job_ranks"], ids=lambda c: json.dumps(c["summary"]))
def test_job_ranks(case: dict[str, Any], tmp_path: Path) -> None:
    """A job's ranks from its multi_rank_summary.json, each rank folder holding its events."""
    (tmp_path / layout.MULTI_RANK_SUMMARY).write_text(json.dumps(case["summary"]), encoding="utf-8")
    for rank in case["ranks"]:
        (tmp_path / layout.rank_dir(rank)).mkdir()
        (tmp_path / layout.rank_file(rank, layout.RAW)).write_text('{"string_table": []}\n', encoding="utf-8")
    assert layout.listed_ranks(case["summary"]) == case["ranks"]
    assert OutputFolder(tmp_path).ranks() == case["ranks"]


def test_filters(tmp_path: Path) -> None:
    spec = CASES["filters"]
    raw = tmp_path / "raw.jsonl"
    lines = [json.dumps({"string_table": []}), *(json.dumps(e) for e in spec["events"])]
    raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = EventIndex([Part(raw, spec["part_rank"])])
    for case in spec["cases"]:
        f = case["filter"]
        wanted = Filter(
            kind=f.get("kind") or None, compile_id=f.get("cid") or None, rank=f.get("rank"), q=f.get("q") or None
        )
        assert list(index.matching(wanted)) == case["rows"], case
        if set(f) <= {"kind", "cid"}:  # tlscope.load's events(kind=, compile_id=): the same rows
            found = OutputFolder(tmp_path).events(kind=wanted.kind, compile_id=wanted.compile_id)
            assert [e["log_line"] - 1 for e in found] == case["rows"], case


def _ranks_read(found: RanksFile) -> dict[str, Any]:
    """What a reader of ranks.json gives a view, as plain lists: the same projection as
    tests/js/conformance.test.mjs's `ranksRead` of the JS client's `readRanks`. Defaults of
    older files as FORMAT.md section 16 says: a mismatch without a kind is `graph`'s (1.34), a graph
    group without an id has the mismatch's (1.31), a straggler without a why says none (1.35), a
    file without `said` says its lists in `SAID`'s order (1.40), a file without `first_answers`
    says none (1.42)."""
    div = found.divergence
    slow = found.stragglers
    return {
        "ranks": [msgspec.to_builtins(line) for line in sorted(found.ranks, key=lambda line: line.rank)],
        "diverges": div.diverges,
        "groups": [[g.ranks, g.only_here, g.missing, g.sentence] for g in div.groups],
        "not_on_every_rank": [[p.id, p.ranks] for p in div.not_on_every_rank],
        "rows": [[r.ranks, r.collectives, r.sentence, r.columns or {}] for r in div.rows if r.ranks],
        "collectives": [[c.id, c.kind, c.sentence] for c in div.collectives],
        "graphs": [
            [m.id, m.kind, m.sentence, [[g.ranks, g.id or m.id, g.function, g.payload] for g in m.groups if g.ranks]]
            for m in div.graphs
        ],
        "settings": [[s.id or None, s.ranks, s.than, s.sentence] for s in div.settings],
        "frames": [[f.ranks, f.than, _refs(f.extra), _refs(f.missing), f.renumbered, f.sentence] for f in div.frames],
        "caches": [[c.id, c.caches, c.sentence] for c in div.caches],
        "said": [[said.list, said.title] for said in div.said],
        "first_answers": None
        if found.first_answers is None
        else [
            [[a.kind, a.compile_id, a.text, a.ranks, a.who] for a in found.first_answers.lines],
            found.first_answers.more,
        ],
        "stragglers": None
        if slow is None
        else [
            slow.rule,
            slow.factor,
            slow.margin_s,
            slow.median_compile_time_s,
            slow.median_rank,
            [[s.rank, s.compile_time_s, s.over_median_s, s.ratio, s.why or ""] for s in slow.ranks],
        ],
    }


def _refs(refs: list[FrameRef]) -> list[list[str]]:
    return [[r.id, r.function] for r in refs]


@pytest.mark.parametrize("case", CASES["ranks_json"]["cases"], ids=lambda c: c["file"])
def test_ranks_json_read(case: dict[str, Any]) -> None:
    """Each ranks.json (real jobs' from the corpus, and files as older formats wrote them) read by
    tlscope's one Python reader gives what the JS client's `readRanks` gives."""
    data = (REPO / "tests" / "conformance" / case["file"]).read_bytes()
    assert _ranks_read(read_ranks_file(data)) == case["read"]


def test_ranks_json_cases_hold_every_list() -> None:
    """The cases exercise every list a view shows, and every default an older file leaves out."""
    reads = [case["read"] for case in CASES["ranks_json"]["cases"]]
    for key in ("groups", "not_on_every_rank", "rows", "collectives", "graphs", "settings", "frames", "caches"):
        assert any(read[key] for read in reads), key
    assert any(read["stragglers"] and read["stragglers"][5] for read in reads)
    assert any(any(row[3] for row in read["rows"]) for read in reads), "a row with columns (1.33)"
    assert any(not read["rows"] for read in reads), "a file before rows (1.18)"
    assert any(read["first_answers"] for read in reads) and any(read["first_answers"] is None for read in reads)
    default = [name for name, _ in SAID]
    orders = [[name for name, _ in read["said"]] for read in reads]
    assert any(order and order != sorted(order, key=default.index) for order in orders), "a said of its own (1.40)"
    assert all(read["said"] or not any(read[k] for k in default if k != "groups") for read in reads)


@pytest.mark.parametrize("case", CASES["first_answers"]["cases"], ids=lambda c: c["name"])
def test_first_answers_read(case: dict[str, Any]) -> None:
    """compiles.json's `first_answers` (1.41) read by tlscope's Python reader as the JS client's
    `readFirstAnswers` reads them (tests/js/conformance.test.mjs)."""
    found = read_first_answers(msgspec.convert(case["file"], CompilesFile))
    assert [[a.kind, a.compile_id, a.text] for a in found] == case["read"]


def test_first_answers_cases_hold_every_kind() -> None:
    kinds = {item[0] for case in CASES["first_answers"]["cases"] for item in case["read"]}
    assert kinds == set(FIRST_ANSWER_KINDS)
    written = [a for case in CASES["first_answers"]["cases"] for a in case["file"].get("first_answers", [])]
    assert any(a["kind"] not in FIRST_ANSWER_KINDS for a in written), "a kind no reader knows"


@pytest.mark.parametrize("case", CASES["function_names"], ids=lambda c: c["name"] or "unknown")
def test_function_names(case: dict[str, Any]) -> None:
    """A compile's function as every view says it (CompileEntry.function_name, the JS client's
    compiledFunctionName): a wrapped module's class, a method's class."""
    fields = {"id": "[0/0]", "dir": "0_0_0_0", "status": "ok", "frame_compile": "[0/0]", **case["entry"]}
    entry = msgspec.convert(fields, CompileEntry)
    assert (entry.function_name() or "") == case["name"]
