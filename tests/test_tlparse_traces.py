"""Every public tlparse trace: tlscope's counts equal an independent count of the log.

The independent parser here shares no code with tlscope: a regex for the glog prefix,
`json.loads` for the envelope, tab lines skipped (or gathered as the payload). If tlscope's
reader, its manifest and this parser disagree on any key's count or payload bytes, one of
them is wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import CONTEXT, GLOG, all_traces, trace_path

from tlscope.cli import main
from tlscope.read.reader import LogReader


@dataclass
class Count:
    events: Counter[str] = field(default_factory=Counter)
    payload_bytes: Counter[str] = field(default_factory=Counter)
    md5_mismatches: int = 0
    envelopes: int = 0


def independent_count(path: Path) -> Count:
    """Count envelope keys and payload bytes the simple way (the whole file in memory)."""
    count = Count()
    lines = [line.removesuffix(b"\r") for line in path.read_bytes().split(b"\n")]
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        match = GLOG.search(line)
        if not line or line.startswith(b"\t") or match is None:
            continue
        envelope = json.loads(line[match.end() :])
        key = next(k for k in envelope if k not in CONTEXT)
        count.envelopes += 1
        count.events[key] += 1
        if envelope.get("has_payload") is None:
            continue
        chunks = []
        while i < len(lines) and (lines[i].startswith(b"\t") or not lines[i]):
            if lines[i]:  # blank lines between payload lines are not part of it
                chunks.append(lines[i][1:])
            i += 1
        payload = b"\n".join(chunks)
        count.payload_bytes[key] += len(payload)
        count.md5_mismatches += hashlib.md5(payload).hexdigest() != envelope["has_payload"]
    return count


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tlscope's output folder for every trace, made once through the CLI."""
    root = tmp_path_factory.mktemp("traces")
    made: dict[str, Path] = {}
    for i, rel in enumerate(all_traces()):
        out = root / str(i)
        assert main(["--no-browser", str(trace_path(rel)), "-o", str(out)]) == 0, rel
        made[rel] = out
    return made


@pytest.mark.parametrize("rel", all_traces())
def test_reader_counts_match_independent_count(rel: str) -> None:
    path = trace_path(rel)
    expected = independent_count(path)
    reader = LogReader(path)
    records = list(reader)
    assert Counter(r.key for r in records) == expected.events
    sizes: Counter[str] = Counter()
    for r in records:
        sizes[r.key] += len(r.payload or b"")
    assert +sizes == +expected.payload_bytes
    data = path.read_bytes()
    assert reader.lines_read == data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))


@pytest.mark.parametrize("rel", all_traces())
def test_manifest_counts_match_independent_count(rel: str, outputs: dict[str, Path]) -> None:
    path = trace_path(rel)
    expected = independent_count(path)
    manifest = json.loads((outputs[rel] / "manifest.json").read_text())
    assert {k: v["count"] for k, v in manifest["events"].items()} == dict(expected.events)
    assert {k: v["payload_bytes"] for k, v in manifest["events"].items() if v["payload_bytes"]} == dict(
        +expected.payload_bytes
    )
    # Real traces are well formed apart from payloads whose MD5 PyTorch got wrong (known
    # upstream) and blank lines in two export logs; nothing else may be reported.
    problems = manifest["problems"]["counts"]
    assert problems.get("payload_md5", 0) == expected.md5_mismatches
    assert set(problems) <= {"payload_md5", "blank_line", "bad_payload_json"}, problems
    assert manifest["problems"]["total"] == sum(problems.values())


def test_the_traces_cover_what_the_parity_claims_need(tlparse_traces: Path) -> None:
    """Guards the tests above against an emptied or moved folder passing vacuously."""
    rels = all_traces()
    assert len(rels) >= 30
    total = Counter[str]()
    for rel in rels:
        total.update(independent_count(tlparse_traces / rel).events)
    assert total["chromium_event"] > 1000 and total["str"] > 100 and total["artifact"] > 100
