"""timeline.bin (docs/FORMAT.md section 17): one event per chromium event, read back exactly.

The corpus's traces (single logs, jobs of 2 and 4 ranks, a muxed log) are parsed once by the
`timeline_cases` fixture; the JS decoder reads the same files in tests/js/timeline.test.mjs.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from helpers import EDGE_EVENTS, packing_events, write_packing_timeline

from tlscope import timeline
from tlscope.format import timeline_bin as layout
from tlscope.write.timeline_writer import TimelineWriter


def expected_from_chromium(events: list[Any], rank: int | None) -> list[dict[str, Any]]:
    """What timeline.bin must hold for a chromium_events.json, computed here on its own terms:
    each event but an E that closes a B, in order; a B lasts until the E that pops it from its
    thread's stack (Chrome's trace format: an E ends the thread's innermost open B)."""
    out: list[dict[str, Any]] = []
    stacks: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if not isinstance(event, dict) or not isinstance(event.get("ts"), (int, float)):
            continue
        thread = json.dumps([event.get("pid"), event.get("tid")])
        stack = stacks.setdefault(thread, [])
        start = math.floor(event["ts"])
        if event.get("ph") == "E" and stack:
            begin = stack.pop()
            begin["dur_us"], begin["kind"] = start - begin["start_us"], "span"
            continue
        args = event.get("args")
        cid = args.get("compile_id") if isinstance(args, dict) else None
        row = {
            "rank": rank,
            "name": event.get("name", ""),
            "cat": event.get("cat", ""),
            "start_us": start,
            "dur_us": math.floor(event["dur"]) if event.get("ph") == "X" else 0,
            "compile_id": f"[{cid}]" if isinstance(cid, str) and cid != "None" else None,
            "depth": len(stack),
            "kind": {"B": "unclosed", "E": "unopened", "X": "complete"}.get(event.get("ph"), "instant"),
        }
        out.append(row)
        if event.get("ph") == "B":
            stack.append(row)
    return out


def as_dicts(path: Path) -> list[dict[str, Any]]:
    return [
        {f: getattr(e, f) for f in ("rank", "name", "cat", "start_us", "dur_us", "compile_id", "depth", "kind")}
        for e in timeline.read(path)
    ]


def test_every_chromium_event_is_one_timeline_event(timeline_cases: list[dict[str, str]]) -> None:
    checked = 0
    for case in timeline_cases:
        folder = Path(case["bin"]).parent
        manifest = folder / "manifest.json"
        if not manifest.is_file():
            continue  # a job's file: the next test
        chromium = json.loads((folder / "chromium_events.json").read_text())
        ranks = json.loads(manifest.read_text())["ranks"]
        got = as_dicts(folder / "timeline.bin")
        assert got == expected_from_chromium(chromium, ranks[0] if ranks else None), folder
        assert len(got) == sum(1 for e in chromium if e["ph"] != "E"), "every E of the corpus closes its B"
        checked += len(got)
    assert checked > 1000


def test_a_jobs_timeline_is_its_ranks_in_rank_order(timeline_cases: list[dict[str, str]]) -> None:
    jobs = [Path(c["bin"]).parent for c in timeline_cases if any(Path(c["bin"]).parent.glob("rank_*"))]
    assert {j.name for j in jobs} >= {"ranks_diverge_4", "ranks_same_2", "muxed-muxed.log.gz"}
    for job in jobs:
        ranks = sorted(int(p.name[5:]) for p in job.glob("rank_*"))
        want = []
        for rank in ranks:
            want += [{**e, "rank": rank} for e in as_dicts(job / f"rank_{rank}" / "timeline.bin")]
        assert as_dicts(job) == want, job
        assert len(want) > 0


def test_corner_cases_read_back(tmp_path: Path) -> None:
    path = tmp_path / "timeline.bin"
    writer = TimelineWriter(path)
    for rank, event in EDGE_EVENTS:
        writer.add(event, rank)
    writer.close()
    events = timeline.read(path)
    header = timeline.read_tables(path.open("rb"))[0]
    assert (header.events, header.skipped) == (len(events), 2)
    by_name = {e.name: e for e in events}
    assert by_name["dynamo"].dur_us == 7_200_000_000 and by_name["dynamo"].kind == "span"
    assert (by_name["inner"].dur_us, by_name["inner"].depth) == (10, 1)  # 20.25 and 10.5 rounded down
    assert by_name["hit"].compile_id is None and by_name["hit"].depth == 2
    assert (by_name["other rank"].rank, by_name["other rank"].dur_us, by_name["other rank"].kind) == (1, 99, "complete")
    assert by_name["späť 名前"].compile_id == "[!0/1/0_1]" and by_name["späť 名前"].kind == "unclosed"
    assert by_name["orphan end"].kind == "unopened"
    assert by_name[""].rank is None and by_name[""].start_us == by_name["dynamo"].start_us - 86_400_000_000
    assert [e.name for e in events] == ["dynamo", "inner", "hit", "other rank", "späť 名前", "orphan end", ""]


def test_a_folder_or_a_file_and_refusals(tmp_path: Path, timeline_cases: list[dict[str, str]]) -> None:
    path = Path(timeline_cases[0]["bin"])
    assert timeline.read(path.parent) == timeline.read(path)
    bad = tmp_path / "timeline.bin"
    bad.write_bytes(b"NOTATIME" + path.read_bytes()[8:])
    with pytest.raises(timeline.TimelineError, match="magic"):
        timeline.read(bad)
    bad.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(timeline.TimelineError, match="truncated"):
        timeline.read(bad)


def _peak_writing(path: Path, spans: int) -> int:
    """Peak Python memory of writing `spans` nested pairs of B/E (plus an instant each)."""
    tracemalloc.start()
    writer = TimelineWriter(path, block_events=1024)
    for i in range(spans):
        ts = 1.7e15 + i * 10
        writer.add(
            {
                "name": f"phase_{i % 20}",
                "cat": "dynamo_timed",
                "ph": "B",
                "ts": ts,
                "args": {"compile_id": f"{i % 50}/0"},
            },
            0,
        )
        writer.add({"name": "hit", "cat": "c", "ph": "i", "ts": ts + 1}, 0)
        writer.add({"name": f"phase_{i % 20}", "cat": "dynamo_timed", "ph": "E", "ts": ts + 5}, 0)
    writer.close()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_the_writer_holds_one_block_not_the_events(tmp_path: Path) -> None:
    small = _peak_writing(tmp_path / "a.bin", 3_000)  # 9 blocks of 1024 events
    big = _peak_writing(tmp_path / "b.bin", 30_000)  # 88 blocks
    assert big < small * 1.2 + 20_000, (small, big)
    assert big < 2 * 1024 * 26 + 100_000  # the block in memory: 26 bytes an event (typed columns)
    with (tmp_path / "b.bin").open("rb") as f:
        assert timeline.read_tables(f)[0].events == 60_000
    assert len(timeline.read(tmp_path / "b.bin")) == 60_000


def test_packed_corner_cases_read_back(tmp_path: Path) -> None:
    """Version 2's packing (blocks of 64 here): spans closed after their block was written, depth
    escapes and the cap, two-byte indexes, starts going back and jumps of 2^52 µs, all exact."""
    path = tmp_path / "timeline.bin"
    write_packing_timeline(path)
    want = [{**e, "depth": min(e["depth"], 255)} for e in expected_from_chromium(packing_events(), 0)]
    got = as_dicts(path)
    assert got == want
    by_name = {e["name"]: e for e in got}
    assert (by_name["outer"]["kind"], by_name["outer"]["dur_us"]) == ("span", 10_000_000_000_001)
    assert (by_name["nest 0"]["kind"], by_name["nest 0"]["dur_us"]) == ("span", 2_000 + 299 - 2)
    assert (by_name["never closed"]["kind"], by_name["never closed"]["dur_us"]) == ("unclosed", 0)
    assert by_name["long"]["dur_us"] == 5_000_000_123 and by_name["back"]["start_us"] == -(2**52) - 7
    assert [e["depth"] for e in got if e["name"].startswith("nest")][-3:] == [255, 255, 255]
    with path.open("rb") as f:
        header = timeline.read_tables(f)[0]
        assert header.version == 2
        f.seek(layout.HEADER.size)
        blocks = 0
        while f.tell() < header.tables_offset:
            layout.read_block2(f)
            blocks += 1
    assert blocks >= len(got) // 64 + 2, "full blocks, and a new one at each jump"


def test_version_1_files_are_still_read(timeline_cases: list[dict[str, str]]) -> None:
    """Outputs of tlscope before format 1.16 (layout version 1, 16-byte records; `tlscope serve`
    serves them as they are): the same events as version 2 gives for the same trace."""
    v1 = Path(__file__).parent / "conformance" / "timeline_v1"
    with (v1 / "edge.bin").open("rb") as f:
        assert timeline.read_tables(f)[0].version == 1
    assert as_dicts(v1 / "edge.bin") == json.loads((v1 / "edge.expected.json").read_text())
    job = next(Path(c["bin"]) for c in timeline_cases if c["trace"] == "ranks_diverge_2" and "rank_" not in c["bin"])
    with job.open("rb") as f:
        assert timeline.read_tables(f)[0].version == 2
    assert as_dicts(v1 / "ranks_diverge_2.bin") == as_dicts(job)
    assert len(as_dicts(job)) == 840


def test_version_2_is_smaller(timeline_cases: list[dict[str, str]]) -> None:
    """The same job, version 2 against version 1: the whole file at most 12 bytes an event."""
    job = next(Path(c["bin"]) for c in timeline_cases if c["trace"] == "ranks_diverge_2" and "rank_" not in c["bin"])
    v1 = Path(__file__).parent / "conformance" / "timeline_v1" / "ranks_diverge_2.bin"
    assert job.stat().st_size <= 12 * 840 < v1.stat().st_size


def _hand_made(records: bytes, n: int = 1) -> bytes:
    """tests/js/timeline.test.mjs's `handMade`: one block of rank 0 at base 1000 (its tables map
    label 0 and compile id 1 to the file's first), strings "a" and "[0/0]"."""
    body = bytes([1, 0, 1, 0]) + records
    tables = bytes([2, 1, 0x61, 5]) + b"[0/0]" + bytes([1, 0, 0, 1, 1])
    head = layout.HEADER.pack(layout.MAGIC, 2, 0, 0, 60 + len(body), n, 0)
    return head + layout.BLOCK2.pack(0, n, len(body), 1000) + body + tables


def test_version_2_by_hand_and_damaged(tmp_path: Path) -> None:
    """The JS test's hand-made records read alike here; damaged ones refused with TimelineError."""
    path = tmp_path / "timeline.bin"
    path.write_bytes(_hand_made(bytes([1 | 2 << 3, 0xD8, 0x04, 5, 0, 1])))
    assert as_dicts(path) == [
        {
            "rank": 0,
            "name": "a",
            "cat": "a",
            "start_us": 1300,
            "dur_us": 5,
            "compile_id": "[0/0]",
            "depth": 2,
            "kind": "complete",
        }
    ]
    path.write_bytes(_hand_made(bytes([2 | 31 << 3, 200, 1, 0, 0])))
    (deep,) = timeline.read(path)
    assert (deep.depth, deep.start_us, deep.dur_us, deep.compile_id) == (200, 999, 0, None)
    for records, n in [
        ([5, 0, 0, 0], 1),
        ([2, 0, 1, 0], 1),
        ([2, 0, 0, 2], 1),
        ([2, 0, 0, 0, 0], 1),
        ([2, 0, 0, 0], 2),
    ]:
        path.write_bytes(_hand_made(bytes(records), n))
        with pytest.raises(timeline.TimelineError):
            timeline.read(path)
