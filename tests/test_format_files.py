"""The format files on every public trace, checked against an independent reading of the log.

- chromium_events.json is one JSON array of trace events: exactly the chromium_event payloads
  of the log that are JSON, in log order;
- payloads/ holds each distinct payload once, named by the MD5 of its content (never by the
  log's `has_payload`), and nothing else;
- manifest.json: inputs (size, sha256 of the file), counts, compile ids (first <= last),
  payload statistics, the file list, the clock fit (checked against chromium timestamps).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import CONTEXT, GLOG, all_traces, trace_path
from hypothesis import given
from hypothesis import strategies as st

from tlscope import __version__
from tlscope.cli import main
from tlscope.model.record import GlogPrefix
from tlscope.write.format import PayloadStore, _moment, _moment_prefix

PREFIX_TIME = re.compile(rb"[VIWEC](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) ")


@dataclass
class Envelope:
    line: int
    key: str
    envelope: dict[str, Any]
    payload: bytes | None
    prefix: bytes


def independent_records(path: Path) -> list[Envelope]:
    """The log's envelopes with their payloads, read without tlscope."""
    lines = [line.removesuffix(b"\r") for line in path.read_bytes().split(b"\n")]
    found: list[Envelope] = []
    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        i += 1
        match = GLOG.search(line)
        if not line or line.startswith(b"\t") or match is None:
            continue
        envelope = json.loads(line[match.end() :])
        payload = None
        if envelope.get("has_payload") is not None:
            chunks = []
            while i < len(lines) and (lines[i].startswith(b"\t") or not lines[i]):
                if lines[i]:
                    chunks.append(lines[i][1:])
                i += 1
            payload = b"\n".join(chunks)
        key = next(k for k in envelope if k not in CONTEXT)
        found.append(Envelope(number, key, envelope, payload, line[match.start() : match.end()]))
    return found


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("format")
    made = {}
    for i, rel in enumerate(all_traces()):
        out = root / str(i)
        assert main(["--no-browser", str(trace_path(rel)), "-o", str(out)]) == 0, rel
        made[rel] = out
    return made


def load(out: Path, name: str) -> Any:
    return json.loads((out / name).read_text())


@pytest.mark.parametrize("rel", all_traces())
def test_chromium_events_json_is_the_logs_chromium_events(rel: str, outputs: dict[str, Path]) -> None:
    out = outputs[rel]
    events = load(out, "chromium_events.json")
    assert isinstance(events, list)
    expected = []
    for r in independent_records(trace_path(rel)):
        if r.key == "chromium_event":
            try:
                expected.append(json.loads(r.payload or b""))
            except json.JSONDecodeError:
                continue  # simple_corrupted_json.log: reported as bad_payload_json, left out
    assert events == expected
    assert load(out, "manifest.json")["chromium_events"] == len(events)
    for event in events:  # what Perfetto / chrome://tracing need of a trace event
        assert isinstance(event, dict) and isinstance(event["name"], str) and isinstance(event["ph"], str)
        assert isinstance(event["ts"], (int, float)) and "pid" in event and "tid" in event


@pytest.mark.parametrize("rel", all_traces())
def test_payloads_once_each_named_by_computed_md5(rel: str, outputs: dict[str, Path]) -> None:
    out = outputs[rel]
    records = independent_records(trace_path(rel))
    stored = [r.payload for r in records if r.payload is not None and r.key not in ("chromium_event", "str")]
    expected = {hashlib.md5(p).hexdigest() + ".txt": p for p in stored}
    folder = out / "payloads"
    files = {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}
    assert files == expected  # same names and contents: named by content, nothing extra
    stats = load(out, "manifest.json")["payloads"]
    # A single log's payloads resolve in its own folder ("root": ".", format 1.6).
    assert stats == {
        "files": len(expected),
        "bytes": sum(map(len, expected.values())),
        "occurrences": len(stored),
        "root": ".",
    }


def test_a_payload_seen_twice_is_written_once(
    tlparse_traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[str] = []
    original = PayloadStore.put

    def counting_put(self: PayloadStore, md5: str, data: bytes) -> str:
        before = self.files
        rel = original(self, md5, data)
        if self.files > before:
            writes.append(md5)
        return rel

    monkeypatch.setattr(PayloadStore, "put", counting_put)
    log = tlparse_traces / "inputs" / "cache_hit_miss.log"  # 31 payloads, 20 distinct
    assert main(["--no-browser", str(log), "-o", str(tmp_path / "out")]) == 0
    stats = load(tmp_path / "out", "manifest.json")["payloads"]
    assert stats["occurrences"] > stats["files"] == len(writes) == len(set(writes))


@pytest.mark.parametrize("rel", all_traces())
def test_manifest_fields(rel: str, outputs: dict[str, Path]) -> None:
    out, log = outputs[rel], trace_path(rel)
    m = load(out, "manifest.json")
    assert (m["format"], m["format_version"], m["tlscope_version"]) == ("tlscope", 1, __version__)
    [source] = m["inputs"]
    data = log.read_bytes()
    assert source["path"] == str(log) and source["size"] == len(data) and source["compressed"] is False
    assert source["sha256"] == hashlib.sha256(data).hexdigest()
    records = independent_records(log)
    assert m["raw_jsonl_events"] == sum(r.key not in ("chromium_event", "str") for r in records)
    assert m["problems"]["total"] == sum(m["problems"]["counts"].values())
    # Files listed are the files there (payloads/ is summarised by the payload statistics).
    present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert m["files"] == [p for p in present if not p.startswith(("payloads/", "graphs/"))]
    check_compile_ids(m, records)


def check_compile_ids(m: dict[str, Any], records: list[Envelope]) -> None:
    ids = m["compile_ids"]
    assert len({c["id"] for c in ids}) == len(ids) == len({c["dir"] for c in ids})
    for c in ids:
        first, last = dt.datetime.fromisoformat(c["first"]), dt.datetime.fromisoformat(c["last"])
        assert first <= last and c["events"] > 0
    # Every non-`str` event counts towards exactly one compile id (all are well formed here).
    assert m["unknown_compile_id_events"] == 0
    assert sum(c["events"] for c in ids) == sum(r.key != "str" for r in records)


@pytest.mark.parametrize("rel", all_traces())
def test_raw_jsonl_lines_point_at_their_envelopes(rel: str, outputs: dict[str, Path]) -> None:
    records = {r.line: r for r in independent_records(trace_path(rel))}
    raw = (outputs[rel] / "raw.jsonl").read_text().splitlines()
    assert list(json.loads(raw[0])) == ["string_table"]
    for text in raw[1:]:
        line = json.loads(text)
        source = records[line["log_line"]]
        assert {k: v for k, v in line.items() if k in source.envelope} == source.envelope
        assert dt.datetime.fromisoformat(line["timestamp"])


@pytest.mark.parametrize("rel", all_traces())
def test_clock_fit_agrees_with_chromium_timestamps(rel: str, outputs: dict[str, Path]) -> None:
    """The fitted year and UTC offset put each glog time within a second of its event's epoch ts."""
    clock = load(outputs[rel], "manifest.json")["clock"]
    if clock["source"] != "chromium_event":
        assert clock["utc_offset_minutes"] is None  # no fit: no offset is claimed
        return
    zone = dt.timezone(dt.timedelta(minutes=clock["utc_offset_minutes"]))
    gaps = []
    for r in independent_records(trace_path(rel)):
        if r.key != "chromium_event":
            continue
        try:
            ts = json.loads(r.payload or b"")["ts"]
        except (json.JSONDecodeError, KeyError):
            continue
        match = PREFIX_TIME.search(r.prefix)
        assert match is not None
        month, day, hour, minute, second, us = map(int, match.groups())
        local = dt.datetime(clock["year"], month, day, hour, minute, second, us, tzinfo=zone)
        gaps.append(abs(local.timestamp() - ts / 1e6))
    gaps.sort()
    assert gaps and gaps[len(gaps) // 2] < 1.0 and gaps[int(len(gaps) * 0.9)] < 1.0


# Any time the reader can take from a glog prefix: two digits a field, six for microseconds.
_prefixes = st.builds(
    GlogPrefix,
    level=st.just("I"),
    month=st.integers(0, 99),
    day=st.integers(0, 99),
    hour=st.integers(0, 99),
    minute=st.integers(0, 99),
    second=st.integers(0, 99),
    microsecond=st.integers(0, 999_999),
    process=st.integers(0, 2**22),
    pathname=st.just("torch/_dynamo/utils.py"),
    lineno=st.integers(0, 9999),
)


@given(_prefixes, _prefixes)
def test_compile_id_times_kept_as_moments_order_and_read_back_like_prefixes(a: GlogPrefix, b: GlogPrefix) -> None:
    # The writer keeps each compile id's first/last time as one number, not a GlogPrefix.
    assert (_moment(a) < _moment(b)) == (a.sort_key < b.sort_key)
    assert (_moment(a) == _moment(b)) == (a.sort_key == b.sort_key)
    assert _moment_prefix(_moment(a)).sort_key == a.sort_key


def _timed_line(time: str, event: dict[str, Any]) -> str:
    return f"I1206 {time} 1500233 torch/_dynamo/utils.py:1288] {json.dumps(event)}\n"


@pytest.mark.parametrize("fitted", [True, False])
def test_raw_jsonl_timestamps_before_and_after_the_clock_is_fitted(tmp_path: Path, fitted: bool) -> None:
    """A line's timestamp is its prefix time completed by the clock, whether the line came
    before the fit (written at the end) or after it (written as it is read): raw.jsonl's lines
    stay in log order either way."""
    cid = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    # 15:18:15 local at UTC-8 on 2024-12-06 is 23:18:15 UTC.
    epoch_us = int(dt.datetime(2024, 12, 6, 23, 18, 15, 900000, tzinfo=dt.timezone.utc).timestamp() * 1e6)
    chromium = {"chromium_event": {}, "has_payload": "x", **cid}
    times = ["15:18:14.100000", "15:18:15.000001", "15:18:15.925000", "15:18:16.000000", "15:18:17.999999"]
    lines = [_timed_line(times[0], {"dynamo_start": {"stack": []}, **cid})]
    lines.append(_timed_line(times[1], {"dynamo_start": {"stack": []}, **cid}))
    if fitted:
        payload = json.dumps({"name": "dynamo", "ph": "B", "ts": epoch_us, "pid": 0, "tid": 0})
        chromium["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
        lines.append(_timed_line(times[2], chromium) + f"\t{payload}\n")
    lines += [_timed_line(t, {"dynamo_start": {"stack": []}, **cid}) for t in times[3:]]
    log = tmp_path / "fit.log"
    log.write_text("".join(lines))
    assert main([str(log), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    clock = load(tmp_path / "out", "manifest.json")["clock"]
    assert clock["source"] == ("chromium_event" if fitted else "file_mtime")
    offset = "-08:00" if fitted else ""
    if fitted:
        assert (clock["year"], clock["utc_offset_minutes"]) == (2024, -480)
    raw = (tmp_path / "out" / "raw.jsonl").read_text().splitlines()
    stamps = [json.loads(text)["timestamp"] for text in raw[1:]]
    expected = [f"{clock['year']}-12-06T{t}{offset}" for t in times if t != times[2]]
    assert stamps == expected
    assert not [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith("raw.jsonl.")]
