"""The reader on well-formed real traces: prefixes, payloads, string tables, ranks, compile ids."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from helpers import all_traces, trace_path

from tlscope.model.compile_id import CompileId
from tlscope.model.events import EVENT_TYPES, DynamoStart
from tlscope.model.problems import ProblemKind
from tlscope.read import reader as reader_module
from tlscope.read.names import rank_in_name as rank_from_filename
from tlscope.read.reader import LogReader


def test_glog_prefix_fields(tlparse_traces: Path) -> None:
    first = next(iter(LogReader(tlparse_traces / "inputs" / "simple.log")))
    p = first.prefix
    assert (p.level, p.month, p.day, p.hour, p.minute, p.second, p.microsecond) == ("V", 12, 6, 15, 18, 15, 925000)
    assert (p.process, p.pathname, p.lineno) == (1500233, "torch/_dynamo/utils.py", 1288)
    assert first.line == 1 and first.key == "chromium_event"


def test_payloads_and_md5(tlparse_traces: Path) -> None:
    records = list(LogReader(tlparse_traces / "inputs" / "simple.log"))
    with_payload = [r for r in records if r.payload is not None]
    assert len(with_payload) == 59
    for r in with_payload:
        assert r.payload_md5 == hashlib.md5(r.payload or b"").hexdigest() == r.envelope["has_payload"]
        assert not r.payload_text.startswith("\t")  # PyTorch's tab is removed
    assert all(r.payload_md5 is None for r in records if r.payload is None)


def test_string_table_resolves_stack_file_names(tlparse_traces: Path) -> None:
    reader = LogReader(tlparse_traces / "inputs" / "simple.log")
    records = list(reader)
    assert list(reader.string_tables) == [1500233]
    table = reader.string_tables[1500233]
    assert sorted(table) == list(range(12))
    assert table[1] == "/data/users/xmfan/a/pytorch/test/inductor/test_torchinductor.py"
    start = next(r for r in records if r.key == "dynamo_start")
    assert isinstance(start.event, DynamoStart) and start.event.stack
    assert start.frame_filename(start.event.stack[0]) == table[1]
    assert start.strings is table  # the record sees its process's table


@pytest.mark.parametrize(
    ("name", "rank"),
    [
        ("dedicated_log_torch_trace_rank_0_a74od7a1.log", 0),
        ("dedicated_log_torch_trace_rank_12.log", 12),
        ("dedicated_log_torch_trace_rank_3.log.gz", 3),
        ("simple.log", None),
        ("dedicated_log_torch_trace_rank_x.log", None),
    ],
)
def test_rank_from_filename(name: str, rank: int | None) -> None:
    assert rank_from_filename(Path(name)) == rank


def test_rank_comes_from_the_content(tlparse_traces: Path) -> None:
    for n in (0, 1):
        [log] = (tlparse_traces / "graph_exec_order_tests").glob(f"*rank_{n}_*.log")
        reader = LogReader(log)
        records = list(reader)
        assert reader.rank == reader.name_rank == n
        assert all(r.rank == n and not r.foreign for r in records)
    # A copied log: named rank 5, its lines say rank 1. The content wins for reading.
    reader = LogReader(tlparse_traces / "inputs" / "multi_rank_runtime" / "dedicated_log_torch_trace_rank_5.log")
    list(reader)
    assert (reader.rank, reader.name_rank) == (1, 5)


def test_compile_ids(tlparse_traces: Path) -> None:
    records = list(LogReader(tlparse_traces / "inputs" / "simple.log"))
    ids = {r.compile_id for r in records}
    assert ids == {CompileId(), CompileId(frame_id=0, frame_compile_id=0, attempt=0)}
    assert records[0].compile_id == CompileId() and records[0].compile_id.display == "[-/-]"
    assert CompileId(frame_id=0, frame_compile_id=0, attempt=0).dirname == "-_0_0_0"


def test_file_statistics_after_a_pass(tlparse_traces: Path) -> None:
    path = tlparse_traces / "inputs" / "comp_metrics.log"
    reader = LogReader(path)
    assert reader.bytes_read == 0 and reader.sha256 is None
    list(reader)
    data = path.read_bytes()
    assert reader.bytes_read == len(data)
    assert reader.sha256 == hashlib.sha256(data).hexdigest()
    assert reader.lines_read == data.count(b"\n") + (not data.endswith(b"\n"))


@pytest.mark.parametrize("compressed", [False, True])
def test_big_files_are_hashed_by_a_thread_to_the_same_sha256(
    tmp_path: Path, tlparse_traces: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    """A file past the threshold is hashed beside the pass (read/source.py `_ThreadedHash`): the
    same SHA-256 of the file on disk, also when the pass stops early (the rest is read then)."""
    import gzip

    from tlscope.read import source

    data = (tlparse_traces / "inputs" / "comp_metrics.log").read_bytes() * 3
    path = tmp_path / ("big.log.gz" if compressed else "big.log")
    path.write_bytes(gzip.compress(data) if compressed else data)
    monkeypatch.setattr(source, "_BUFFER", 4096)  # many chunks through the thread's queue
    monkeypatch.setattr(source, "_THREADED_HASH", 0)
    reader = LogReader(path)
    assert len(list(reader)) > 0
    assert reader.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    with source.LogSource(path) as log:
        assert isinstance(log._hashing.sha256, source._ThreadedHash)
        log.stream.read(100)  # stopped early: sha256() reads the rest
        assert log.sha256() == hashlib.sha256(path.read_bytes()).hexdigest()
    with source.LogSource(path) as log:  # closed without a digest: the thread ends
        log.stream.read(100)
        hasher = log._hashing.sha256
    assert isinstance(hasher, source._ThreadedHash)
    hasher._thread.join(5)
    assert not hasher._thread.is_alive()


@pytest.mark.parametrize("rel", all_traces())
def test_known_keys_are_typed_on_every_trace(rel: str) -> None:
    """Every known event in the public traces converts to its Struct (no schema problems)."""
    reader = LogReader(trace_path(rel))
    for r in reader:
        event_type = EVENT_TYPES.get(r.key)
        if event_type is None:
            assert r.event is None and r.key in reader.unknown_keys
        else:
            assert isinstance(r.event, event_type), (r.line, r.key)
    assert reader.problems.counts[ProblemKind.SCHEMA] == 0


_CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"


def _summary(reader: LogReader) -> list[tuple[object, ...]]:
    return [(r.line, r.key, r.payload, r.payload_md5, r.compile_id, r.rank) for r in reader]


@pytest.mark.parametrize(
    "trace",
    sorted(p.relative_to(_CORPUS).as_posix() for p in _CORPUS.glob("*/*.log.gz"))[:6] or ["<no corpus>"],
)
def test_bulk_payload_path_reads_exactly_like_the_line_path(trace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload lines taken from the buffer in bulk give the same records as line by line."""
    path = _CORPUS / trace
    if not path.is_file():
        pytest.skip("no corpus traces")
    bulk_calls = []
    original = reader_module._Lines.tab_block

    def counting(self: reader_module._Lines) -> bytes | None:
        block = original(self)
        bulk_calls.append(block is not None)
        return block

    monkeypatch.setattr(reader_module._Lines, "tab_block", counting)
    fast = LogReader(path)
    fast_records = _summary(fast)
    assert any(bulk_calls), "the bulk path was never taken"
    # The line-by-line path alone, as it was before the bulk path existed.
    monkeypatch.setattr(reader_module._Lines, "tab_block", lambda self: None)
    slow = LogReader(path)
    assert _summary(slow) == fast_records
    assert slow.lines_read == fast.lines_read
    assert slow.problems.counts == fast.problems.counts


def test_bulk_path_keeps_crlf_blank_lines_and_line_numbers(tmp_path: Path) -> None:
    """A payload mixing plain, CRLF and blank lines: the bulk path stops and the line path takes over."""
    payload = b"a\nb\nc\nd"
    md5 = hashlib.md5(payload).hexdigest()
    prefix = b"V1206 15:18:15.925000 1 f.py:1] "
    log = (
        prefix + b'{"artifact": {"name": "x", "encoding": "string"}, "has_payload": "' + md5.encode() + b'"}\n'
        b"\ta\n\tb\r\n\n\tc\n\td\n" + prefix + b'{"str": ["s", 0]}\n'
    )
    path = tmp_path / "t.log"
    path.write_bytes(log)
    reader = LogReader(path)
    records = list(reader)
    assert records[0].payload == payload and records[0].payload_md5 == md5
    assert records[1].line == 7
    assert [p.line for p in reader.problems.first] == [4]  # the blank line


def _chromium_line(payload: bytes, pid: int = 1, path: bytes = b"f.py") -> bytes:
    md5 = hashlib.md5(payload).hexdigest().encode()
    head = b"V1206 15:18:15.925000 %d %s:1] " % (pid, path)
    return head + b'{"chromium_event": {}, "has_payload": "' + md5 + b'"}\n\t' + payload.replace(b"\n", b"\n\t") + b"\n"


def test_a_chromium_event_is_decoded_once_by_the_reader(tmp_path: Path) -> None:
    """Record.chromium holds the payload's value (or why it is not JSON), which the format writer
    and the compile fold read; other records have none. The writer's problem text is unchanged."""
    from tlscope.analyse.fold.compile_fold import CompileFold
    from tlscope.model.problems import Problems
    from tlscope.write.format import FormatFacts

    good = b'{"name": "dynamo", "ph": "B", "ts": 1733527095925000,\n"pid": 0, "tid": 0, "args": {"compile_id": "0/0"}}'
    end = good.replace(b'"B"', b'"E"').replace(b"925000", b"925500")
    path = tmp_path / "c.log"
    path.write_bytes(_chromium_line(good) + _chromium_line(b"{not json") + _chromium_line(end))
    records = list(LogReader(path))
    assert [r.chromium is not None for r in records] == [True, True, True]
    first, bad, _ = records
    assert first.chromium is not None and first.chromium.value["args"] == {"compile_id": "0/0"}
    assert first.chromium.error is None
    assert bad.chromium is not None and bad.chromium.value is None and bad.chromium.error
    problems = Problems()
    facts = FormatFacts(problems)
    fold = CompileFold()
    for record in records:
        facts.feed(record)
        fold.feed(record)
    assert facts.chromium_events == 2 and facts.clock.fitted
    assert [p.message for p in problems.first] == [f"chromium_event payload: {bad.chromium.error}"]
    states = [fold.frames.peek(frame) for frame in fold.frames.live_frames()]
    (times,) = [t for state in states if state is not None for t in state.times.values()]
    assert times.totals["dynamo"] == [500.0, 1]  # the begin and end paired from the shared values
    other = tmp_path / "o.log"
    other.write_bytes(b'V1206 15:18:15.925000 1 f.py:1] {"str": ["s", 0]}\n')
    assert next(iter(LogReader(other))).chromium is None


def test_prefix_memos_stay_right_past_their_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Process ids and paths are kept as met, in memos that start over when full: every record
    still gets its own (here with a memo of 4 entries and 10 distinct pids and paths, one not UTF-8)."""
    monkeypatch.setattr(reader_module, "_MEMO_MAX", 4)
    monkeypatch.setattr(reader_module, "_NUMBERS", {})
    monkeypatch.setattr(reader_module, "_PATHS", {})
    paths = [b"m%d.py" % i for i in range(9)] + [b"bad\xff.py"]
    path = tmp_path / "p.log"
    path.write_bytes(b"".join(_chromium_line(b"{}", pid=100 + i, path=p) for i, p in enumerate(paths * 2)))
    reader = LogReader(path)
    records = list(reader)
    assert [(r.prefix.process, r.prefix.pathname) for r in records] == [
        (100 + i, p.decode("utf-8", "replace")) for i, p in enumerate(paths * 2)
    ]
    assert reader.problems.counts[ProblemKind.INVALID_UTF8] == 2
