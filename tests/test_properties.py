"""Property tests: real traces, randomly damaged, never make the reader raise or lose count.

Hypothesis takes a real trace from ../shared and applies a random list of mutations (delete,
duplicate or swap lines; flip bytes; truncate; insert garbage, blank or tab lines; CRLF), then
checks what must hold for any input:

- the reader (and the whole pipeline) never raises;
- problem counts are consistent: total == sum of counts, each kept problem's line is a line
  of the file;
- every physical line is accounted for: a non-blank, non-tab line is either a record or a
  problem at that line; a blank line is a blank_line problem; tab lines are at least the
  records' payload lines plus the orphan payload problems (exactly, when no envelope was lost);
- mutations that change nothing of substance (CRLF, gzip, removing whole records) change the
  records exactly as expected.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import TLPARSE_TRACES, require_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlscope.model.problems import ProblemKind as K
from tlscope.model.problems import Problems
from tlscope.model.record import Record
from tlscope.pipeline.single import run
from tlscope.read.reader import DEFAULT_MAX_LINE, LogReader
from tlscope.write.outdir import OutputDir
from tlscope.write.run_options import ParseOptions

#: Small real traces of different shapes (export_guard_added has a blank line and a bad MD5).
TRACES = ["comp_metrics.log", "chromium_events.log", "artifacts.log", "export_guard_added.log", "links.log"]

#: Problems at which an envelope line is dropped together with its payload lines.
DROPS_PAYLOAD = {K.GLOG_PREFIX, K.INVALID_JSON, K.NOT_AN_OBJECT, K.TRUNCATED_LINE, K.INVALID_UTF8, K.LINE_TOO_LONG}

_CACHE: dict[str, bytes] = {}


def trace(name: str) -> bytes:
    if name not in _CACHE:
        _CACHE[name] = (require_shared() / "inputs" / name).read_bytes()
    return _CACHE[name]


@dataclass(frozen=True)
class Mutation:
    op: str
    a: int
    b: int
    junk: bytes

    def apply(self, data: bytes) -> bytes:
        lines = data.split(b"\n")
        i, j = self.a % len(lines), self.b % len(lines)
        if self.op == "delete":
            del lines[i]
        elif self.op == "duplicate":
            lines.insert(i, lines[i])
        elif self.op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif self.op == "insert":
            lines.insert(i, self.junk)
        elif self.op == "blank":
            lines.insert(i, b"")
        elif self.op == "tab":
            lines.insert(i, b"\t" + self.junk)
        elif self.op == "crlf":
            lines[i] += b"\r"
        elif self.op == "crlf_all":
            lines = [line + b"\r" for line in lines]
        elif self.op == "flip" and data:
            pos = self.a % len(data)
            return data[:pos] + bytes([data[pos] ^ (1 << (self.b % 8))]) + data[pos + 1 :]
        elif self.op == "truncate":
            return data[: self.a % (len(data) + 1)]
        return b"\n".join(lines)


mutations = st.builds(
    Mutation,
    op=st.sampled_from(
        ["delete", "duplicate", "swap", "insert", "blank", "tab", "crlf", "crlf_all", "flip", "truncate"]
    ),
    a=st.integers(min_value=0, max_value=10**6),
    b=st.integers(min_value=0, max_value=10**6),
    junk=st.binary(max_size=40) | st.sampled_from([b"V1206 15:18:15.925000 1 x.py:1] ", b"{}", b"\xff\xfe", b"\x00"]),
)


def read_all(path: Path, max_line: int = DEFAULT_MAX_LINE) -> tuple[list[Record], LogReader]:
    # Keep every problem (not just 20 per kind) so each line can be accounted for.
    reader = LogReader(path, problems=Problems(keep_per_kind=10**9), max_line=max_line)
    return list(reader), reader


def check_accounting(data: bytes, records: list[Record], reader: LogReader) -> None:
    problems = reader.problems
    assert problems.total == sum(problems.counts.values()) == len(problems.first)
    physical = data.split(b"\n")
    if physical and physical[-1] == b"":
        physical.pop()  # a final newline ends the last line, it does not start another
    assert reader.lines_read == len(physical)
    problem_lines: dict[int, set[K]] = {}
    for p in problems.first:
        assert 1 <= p.line <= max(len(physical), 1), p
        problem_lines.setdefault(p.line, set()).add(p.kind)
    record_lines = [r.line for r in records]
    assert record_lines == sorted(set(record_lines))  # strictly increasing, no duplicates
    payload_lines = 0
    for r in records:
        assert 1 <= r.line <= len(physical)
        if r.payload is not None:
            payload_lines += r.payload.count(b"\n") + 1
    records_at = set(record_lines)
    tab_lines = 0
    for number, line in enumerate(physical, start=1):
        body = line.removesuffix(b"\r")
        if not body:
            assert K.BLANK_LINE in problem_lines.get(number, set()), number
        elif body.startswith(b"\t"):
            tab_lines += 1
        else:
            assert number in records_at or number in problem_lines, number
    orphans = problems.counts[K.ORPHAN_PAYLOAD]
    assert tab_lines >= payload_lines + orphans
    if not any(problems.counts[k] for k in DROPS_PAYLOAD):
        assert tab_lines == payload_lines + orphans


@pytest.fixture(scope="module")
def traces_present() -> Path:
    return require_shared()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(TRACES),
    changes=st.lists(mutations, max_size=6),
    # Small limits exercise the over-long line paths on real lines.
    max_line=st.sampled_from([DEFAULT_MAX_LINE, DEFAULT_MAX_LINE, 100, 400, 2000]),
)
def test_mutated_traces_never_raise_and_account_for_every_line(
    name: str, changes: list[Mutation], max_line: int, traces_present: Path, tmp_path: Path
) -> None:
    data = trace(name)
    for change in changes:
        data = change.apply(data)
    path = tmp_path / "mutated.log"
    path.write_bytes(data)
    records, reader = read_all(path, max_line)
    check_accounting(data, records, reader)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TRACES), changes=st.lists(mutations, min_size=1, max_size=4))
def test_mutated_traces_never_break_the_pipeline(
    name: str, changes: list[Mutation], traces_present: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data = trace(name)
    for change in changes:
        data = change.apply(data)
    root = tmp_path_factory.mktemp("pipe")
    path = root / "mutated.log"
    path.write_bytes(data)
    manifest = run(path, OutputDir(root / "out", overwrite=False), ParseOptions())
    assert manifest.problems.total == sum(manifest.problems.counts.values())
    assert sorted(p.name for p in root.iterdir()) == ["mutated.log", "out"]  # nothing else, nowhere else
    assert (root / "out" / "raw.jsonl").read_bytes().count(b"\n") == manifest.raw_jsonl_events + 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TRACES), drop=st.sets(st.integers(min_value=0, max_value=10**6), max_size=5))
def test_removing_whole_records_removes_exactly_them(
    name: str, drop: set[int], traces_present: Path, tmp_path: Path
) -> None:
    data = trace(name)
    (tmp_path / "a.log").write_bytes(data)
    original, _ = read_all(tmp_path / "a.log")
    if not original:
        return
    gone = {original[k % len(original)].line for k in drop}
    lines = data.split(b"\n")
    # A record is its envelope line and the tab (or blank) lines up to the next envelope.
    starts = [r.line for r in original] + [len(lines) + 1]
    keep = [line for n, line in enumerate(lines, start=1) if _owner(n, starts) not in gone]
    (tmp_path / "b.log").write_bytes(b"\n".join(keep))
    records, reader = read_all(tmp_path / "b.log")
    assert [(r.key, r.envelope, r.payload) for r in records] == [
        (r.key, r.envelope, r.payload) for r in original if r.line not in gone
    ]
    assert reader.problems.counts[K.ORPHAN_PAYLOAD] == 0


def _owner(number: int, starts: list[int]) -> int | None:
    """The record line that line `number` belongs to (None before the first record)."""
    owner = None
    for start in starts:
        if start > number:
            break
        owner = start
    return owner


@pytest.mark.parametrize("name", TRACES if TLPARSE_TRACES.is_dir() else ["<shared traces absent>"])
def test_neutral_changes_give_the_same_records(name: str, tmp_path: Path) -> None:
    """Unmutated, CRLF and gzip forms of a trace read as the same records."""
    data = trace(name)
    forms = {
        "plain.log": data,
        "crlf.log": data.replace(b"\n", b"\r\n"),
        "packed.log.gz": gzip.compress(data),
        "crlf.log.gz": gzip.compress(data.replace(b"\n", b"\r\n")),
    }
    results = {}
    for file, content in forms.items():
        (tmp_path / file).write_bytes(content)
        records, reader = read_all(tmp_path / file)
        seen = [(r.line, r.key, r.envelope, r.payload, r.compile_id, r.rank) for r in records]
        results[file] = (seen, dict(reader.problems.counts))
    assert all(result == results["plain.log"] for result in results.values())
    assert results["plain.log"][0]  # not vacuous: the trace has records
