"""Every kind of bad input, built by altering real lines of simple.log.

Each case checks that the reader does not raise, that the problem is counted under the right
kind with the right (1-based, physical) line number, and that the good records around it are
read exactly as from the unaltered log.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import require_shared

from tlscope.model.problems import ProblemKind as K
from tlscope.model.record import Record
from tlscope.read.reader import DEFAULT_MAX_LINE, LogReader

Lines = list[bytes]


@pytest.fixture(scope="module")
def simple() -> bytes:
    return (require_shared() / "inputs" / "simple.log").read_bytes()


@pytest.fixture(scope="module")
def lines(simple: bytes) -> Lines:
    """simple.log's physical lines (it has no final newline: its last line is a payload line)."""
    assert not simple.endswith(b"\n")
    return simple.split(b"\n")


@pytest.fixture(scope="module")
def original(simple: bytes, tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    path = tmp_path_factory.mktemp("orig") / "simple.log"
    path.write_bytes(simple)
    records, reader = read(path)
    assert reader.problems.total == 0 and len(records) == 76
    return records


def index(lines: Lines, needle: bytes, nth: int = 0) -> int:
    """0-based index of the nth envelope line containing `needle`."""
    found = [i for i, line in enumerate(lines) if needle in line and not line.startswith(b"\t")]
    return found[nth]


def write(tmp_path: Path, lines: Lines, *, sep: bytes = b"\n", name: str = "log.log") -> Path:
    path = tmp_path / name
    path.write_bytes(sep.join(lines))
    return path


def read(path: Path, max_line: int = DEFAULT_MAX_LINE) -> tuple[list[Record], LogReader]:
    reader = LogReader(path, max_line=max_line)
    return list(reader), reader


def found(reader: LogReader) -> list[tuple[K, int]]:
    """(kind, line) of every problem, in line order; also checks the counts agree with them."""
    kept = sorted((p.kind, p.line) for p in reader.problems.first)
    assert reader.problems.total == len(kept) == sum(reader.problems.counts.values())
    return sorted(kept, key=lambda kl: kl[1])


def same(records: list[Record], original: list[Record], *, without: frozenset[int] = frozenset()) -> None:
    """`records` are the original records minus those at the original line numbers `without`."""
    expected = [r for r in original if r.line not in without]
    assert [(r.key, r.envelope, r.payload) for r in records] == [(r.key, r.envelope, r.payload) for r in expected]


def with_md5(envelope_line: bytes, payload: bytes) -> bytes:
    """Set has_payload on a real envelope line to the payload's true MD5."""
    head, _, tail = envelope_line.partition(b'"has_payload": "')
    return head + b'"has_payload": "' + hashlib.md5(payload).hexdigest().encode() + tail[32:]


# -- line-level damage --------------------------------------------------------------------------


def test_blank_lines_are_counted_and_skipped(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = [*lines[:5], b"", *lines[5:12], b"", b"", *lines[12:]]  # inside a payload, between records
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.BLANK_LINE, 6), (K.BLANK_LINE, 14), (K.BLANK_LINE, 15)]
    same(records, original)  # the payload with a blank line in it keeps its bytes and MD5


def test_crlf_line_endings_read_like_lf(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    records, reader = read(write(tmp_path, lines, sep=b"\r\n"))
    assert found(reader) == []
    same(records, original)
    assert [r.line for r in records] == [r.line for r in original]


def test_invalid_utf8_in_an_envelope(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'{"str": ')
    altered[i] = altered[i].replace(b"convert_frame", b"convert\xff_frame")
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.INVALID_UTF8, i + 1)]
    same(records, original, without=frozenset({i + 1}))
    assert 0 not in reader.string_tables[1500233]


def test_invalid_utf8_in_the_glog_prefix_path(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'{"dynamo_start"')
    altered[i] = altered[i].replace(b"convert_frame.py", b"convert\xfe_frame.py", 1)
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.INVALID_UTF8, i + 1)]
    same(records, original)  # kept: only the path is damaged, and it is shown with U+FFFD
    assert "\ufffd" in next(r for r in records if r.line == i + 1).prefix.pathname


def test_invalid_utf8_in_a_payload(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    i = index(lines, b'"aot_forward_graph_fw_metadata"')
    end = i + 1
    while lines[end].startswith(b"\t"):
        end += 1
    payload_lines = [line.replace(b"ViewAndMutationMeta", b"View\xc3AndMutationMeta") for line in lines[i + 1 : end]]
    assert payload_lines != lines[i + 1 : end]
    payload = b"\n".join(line[1:] for line in payload_lines)
    altered = [*lines[:i], with_md5(lines[i], payload), *payload_lines, *lines[end:]]
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.INVALID_UTF8, i + 1)]  # the MD5 is right, only the text is bad
    damaged = next(r for r in records if r.line == i + 1)
    assert damaged.payload == payload and "\ufffd" in damaged.payload_text
    assert len(records) == len(original)


def test_invalid_json_skips_the_line_and_its_payload(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'"aot_forward_graph_fw_metadata"')  # an envelope with a 33-line payload
    altered[i] = altered[i].replace(b'"encoding": "string"}', b'"encoding": "string"', 1)
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.INVALID_JSON, i + 1)]  # one problem, its payload lines go with it
    same(records, original, without=frozenset({i + 1}))


def test_non_object_json(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'"aot_forward_graph_fw_metadata"')
    j = index(lines, b'{"describe_storage"')
    cut = lines[i].index(b"] ") + 2
    altered[i] = lines[i][:cut] + b'["artifact", {"name": "x"}]'
    altered[j] = lines[j][: lines[j].index(b"] ") + 2] + b'"describe_storage"'
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.NOT_AN_OBJECT, j + 1), (K.NOT_AN_OBJECT, i + 1)]
    same(records, original, without=frozenset({i + 1, j + 1}))


def test_payload_lines_with_no_envelope(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    assert lines[0].startswith(b"V1206") and lines[12].startswith(b"V1206")
    records, reader = read(write(tmp_path, lines[1:]))  # the first envelope is gone, its 11 lines stay
    assert found(reader) == [(K.ORPHAN_PAYLOAD, n) for n in range(1, 12)]
    assert [(r.key, r.envelope, r.payload) for r in records] == [(r.key, r.envelope, r.payload) for r in original[1:]]


def test_a_line_without_glog_prefix(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    altered.insert(12, b"Traceback (most recent call last): not a log line")
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.GLOG_PREFIX, 13)]
    same(records, original)


def test_junk_before_the_prefix_is_tolerated(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = [b"[rank0]:" + line if line.startswith(b"V1206") else line for line in lines]
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == []
    same(records, original)


def test_truncated_last_envelope_line(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    i = index(lines, b'{"compilation_metrics"')
    altered = [*lines[:i], lines[i][:300]]
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.TRUNCATED_LINE, i + 1)]
    same(records, [r for r in original if r.line <= i])


def test_truncated_last_payload_line(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    i = index(lines, b'{"compilation_metrics"')  # line i+2 is the last chromium event; cut its payload
    altered = [*lines[: i + 5], lines[i + 5][:-3]]
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.PAYLOAD_MD5, i + 2)]
    assert len(records) == len(original)


def test_md5_mismatch(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    altered[0] = lines[0].replace(b"490a3a38ce10390374e403dd6e063c7f", b"0" * 32)
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.PAYLOAD_MD5, 1)]
    assert records[0].payload == original[0].payload
    assert records[0].payload_md5 == "490a3a38ce10390374e403dd6e063c7f"  # computed, not trusted


def test_has_payload_but_no_payload(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    records, reader = read(write(tmp_path, [lines[0], *lines[12:]]))
    assert found(reader) == [(K.MISSING_PAYLOAD, 1)]
    assert records[0].payload is None and len(records) == len(original)


def test_empty_and_nul_files(tmp_path: Path) -> None:
    records, reader = read(write(tmp_path, [b""], name="empty.log"))
    assert records == [] and found(reader) == [] and reader.lines_read == 0
    records, reader = read(write(tmp_path, [b"\x00" * 64, b"\x00" * 64], name="nul.log"))
    assert records == []
    assert [k for k, _ in found(reader)] == [K.GLOG_PREFIX, K.TRUNCATED_LINE]


# -- envelope content -------------------------------------------------------------------------


def _set_field(line: bytes, field: str, value: str) -> bytes:
    return line.replace(b'"frame_id": 0', f'"frame_id": 0, "{field}": {value}'.encode(), 1)


@pytest.mark.parametrize("value", ['"bad"', "-1", str(2**32), "true", "1.5", "[0]"])
def test_bad_compile_id(value: str, lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'{"describe_storage"')
    altered[i] = lines[i].replace(b'"frame_compile_id": 0', b'"frame_compile_id": ' + value.encode(), 1)
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.BAD_COMPILE_ID, i + 1)]
    bad = next(r for r in records if r.line == i + 1)
    assert bad.compile_id is None  # tlparse's "unknown"
    assert all(r.compile_id is not None for r in records if r is not bad)
    assert len(records) == len(original)


@pytest.mark.parametrize("value", ['"0"', "-1", "true", "0.5", "{}"])
def test_bad_rank(value: str, lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'{"describe_tensor"')
    altered[i] = _set_field(lines[i], "rank", value)
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.BAD_RANK, i + 1)]
    assert len(records) == len(original) and reader.rank is None


def test_lines_of_another_rank(lines: Lines, tmp_path: Path) -> None:
    altered = lines[:]
    i, j = index(lines, b'{"describe_storage"'), index(lines, b'{"describe_tensor"')
    altered[i], altered[j] = _set_field(lines[i], "rank", "0"), _set_field(lines[j], "rank", "3")
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.OTHER_RANK, j + 1)]
    assert reader.rank == 0 and [r.line for r in records if r.foreign] == [j + 1]


@pytest.mark.parametrize("entry", [f'["x", {10**12}]', '["x", -1]', f'["x", {10**30}]', '"x"', '["x"]', "[1, 2]"])
def test_hostile_string_table_entry(entry: str, lines: Lines, tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'{"str": ')
    altered[i] = lines[i][: lines[i].index(b"] ") + 2] + b'{"str": ' + entry.encode() + b"}"
    _records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.BAD_STRING_TABLE, i + 1)]
    table = reader.string_tables[1500233]
    assert sorted(table) == list(range(1, 12))  # entry 0 lost, nothing huge or negative added


def test_no_event_key_and_several_event_keys(lines: Lines, tmp_path: Path) -> None:
    altered = lines[:]
    i, j = index(lines, b'{"describe_storage"'), index(lines, b'{"describe_source"')
    altered[i] = lines[i].replace(b'"describe_storage": {"id": 0, "describer_id": 0, "size": 20971520}, ', b"")
    altered[j] = lines[j].replace(b'{"describe_source": ', b'{"link": {"name": "n", "url": "u"}, "describe_source": ')
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.NO_EVENT_KEY, i + 1), (K.MULTIPLE_EVENT_KEYS, j + 1)]
    assert next(r for r in records if r.line == i + 1).key == ""
    assert next(r for r in records if r.line == j + 1).key == "link"


def test_known_event_of_the_wrong_shape(lines: Lines, tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'{"describe_tensor"')
    altered[i] = lines[i].replace(b'"ndim": 4', b'"ndim": "four"', 1)
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.SCHEMA, i + 1)]
    kept = next(r for r in records if r.line == i + 1)
    assert kept.event is None and kept.metadata["ndim"] == "four"  # kept raw, untyped


def test_impossible_prefix_time(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = lines[:]
    i = index(lines, b'{"describe_tensor"')
    altered[i] = b"V1306" + lines[i][5:]
    altered[0] = lines[0].replace(b" 15:18:15.", b" 25:18:15.", 1)
    records, reader = read(write(tmp_path, altered))
    assert found(reader) == [(K.GLOG_PREFIX, 1), (K.GLOG_PREFIX, i + 1)]
    same(records, original, without=frozenset({1, i + 1}))  # the first one's payload went with it


# -- size limits --------------------------------------------------------------------------------

MAX = 64 * 1024  # above every real line of simple.log (31540 bytes), far below the default


def test_max_line_skips_an_overlong_envelope_with_its_payload(
    lines: Lines, original: list[Record], tmp_path: Path
) -> None:
    long_envelope = lines[12][:-1] + b', "padding": "' + b"p" * MAX + b'"}'
    altered = [*lines[:12], long_envelope, b"\tits payload", b"\tline 2", *lines[12:]]
    records, reader = read(write(tmp_path, altered), max_line=MAX)
    assert found(reader) == [(K.LINE_TOO_LONG, 13)]
    same(records, original)  # the record before keeps its payload; no orphan lines


def test_max_line_skips_an_overlong_payload_line(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    altered = [*lines[:5], b"\t" + b"x" * MAX, *lines[5:]]
    records, reader = read(write(tmp_path, altered), max_line=MAX)
    assert found(reader) == [(K.LINE_TOO_LONG, 6)]
    assert records[0].payload == original[0].payload  # the over-long line was left out (so the MD5 holds)
    assert len(records) == len(original)


def test_max_line_overlong_last_line_without_newline(lines: Lines, original: list[Record], tmp_path: Path) -> None:
    records, reader = read(write(tmp_path, [*lines, b"G" * (3 * MAX)]), max_line=MAX)
    assert found(reader) == [(K.LINE_TOO_LONG, len(lines) + 1)]
    same(records, original)


def test_a_100_mb_line_does_not_crash(lines: Lines, tmp_path: Path) -> None:
    """A real envelope with one 100 MB payload line, then a 100 MB line of junk."""
    big = b"a" * (100 * 1024 * 1024)
    i = index(lines, b'"aot_forward_graph_fw_metadata"')
    end = i + 1
    while lines[end].startswith(b"\t"):
        end += 1
    path = tmp_path / "big.log"
    with path.open("wb") as f:
        f.writelines([b"\n".join(lines[:i]), b"\n", with_md5(lines[i], big), b"\n\t", big, b"\n"])
        # The next envelope, made invalid JSON by 100 MB of junk; its payload goes with it.
        f.writelines([lines[end][:-1], b", ", big, b"\n", b"\n".join(lines[end + 1 :])])
    del big
    records, reader = read(path)
    assert found(reader) == [(K.INVALID_JSON, i + 3)]
    assert len(records) == 75
    huge = next(r for r in records if r.line == i + 1)
    assert huge.payload is not None and len(huge.payload) == 100 * 1024 * 1024
    assert huge.payload_md5 == huge.envelope["has_payload"]


# -- gzip ---------------------------------------------------------------------------------------


def test_gz_input_reads_like_the_plain_file(simple: bytes, original: list[Record], tmp_path: Path) -> None:
    path = tmp_path / "simple.log.gz"
    path.write_bytes(gzip.compress(simple))
    records, reader = read(path)
    assert found(reader) == []
    same(records, original)
    assert reader.source is not None and reader.source.compressed
    assert reader.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_gz_detected_by_content_not_name(simple: bytes, original: list[Record], tmp_path: Path) -> None:
    path = tmp_path / "renamed.log"
    path.write_bytes(gzip.compress(simple))
    records, _ = read(path)
    same(records, original)


def test_cut_off_gz_keeps_what_came_before(simple: bytes, original: list[Record], tmp_path: Path) -> None:
    packed = gzip.compress(simple)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(packed[: len(packed) // 2])
    records, reader = read(path)
    kinds = [k for k, _ in found(reader)]
    assert kinds[-1] == K.CORRUPT_INPUT and set(kinds) <= {K.CORRUPT_INPUT, K.TRUNCATED_LINE, K.PAYLOAD_MD5}
    assert 10 < len(records) < len(original)
    # Everything before the damage is the original, except perhaps the cut-off last record.
    same(records[:-1], original[: len(records) - 1])


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-6] + bytes([b[-6] ^ 0xFF]) + b[-5:],  # CRC of the data
        lambda b: b + b"trailing junk",
        lambda b: b[:2],  # only the magic number
    ],
    ids=["bad-crc", "trailing-junk", "magic-only"],
)
def test_corrupt_gz_is_a_problem_not_a_crash(
    damage: Callable[[bytes], bytes], simple: bytes, original: list[Record], tmp_path: Path
) -> None:
    path = tmp_path / "bad.log.gz"
    path.write_bytes(damage(gzip.compress(simple)))
    records, reader = read(path)
    assert [k for k, _ in found(reader)][-1:] == [K.CORRUPT_INPUT]
    assert [(r.key, r.envelope) for r in records] == [(r.key, r.envelope) for r in original[: len(records)]]


# -- the pipeline: problems reach manifest.json, --strict fails ----------------------------------


def test_problems_reach_the_manifest(lines: Lines, tmp_path: Path) -> None:
    from tlscope.cli import main

    altered = lines[:]
    i = index(lines, b'{"describe_storage"')
    altered[i] = lines[i].replace(b'"frame_compile_id": 0', b'"frame_compile_id": "x"', 1)
    altered.insert(12, b"")
    log = write(tmp_path, altered)
    assert main(["--no-browser", str(log), "-o", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["problems"]["counts"] == {"bad_compile_id": 1, "blank_line": 1}
    assert [(p["kind"], p["line"]) for p in manifest["problems"]["first"]] == [
        ("blank_line", 13),
        ("bad_compile_id", i + 2),
    ]
    assert manifest["unknown_compile_id_events"] == 1


def test_key_conflict_and_bad_chromium_payload(lines: Lines, tmp_path: Path) -> None:
    from tlscope.cli import main

    altered = lines[:]
    i = index(lines, b'{"describe_storage"')
    altered[i] = _set_field(lines[i], "timestamp", '"forged"')  # a key tlscope adds to raw.jsonl
    payload = b"{not json"
    altered[12] = with_md5(lines[12], payload)
    altered[13:24] = [b"\t" + payload]
    log = write(tmp_path, altered)
    assert main(["--no-browser", str(log), "-o", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [(p["kind"], p["line"]) for p in manifest["problems"]["first"]] == [
        ("bad_payload_json", 13),
        ("key_conflict", i + 1 - 10),
    ]
    raw = (tmp_path / "out" / "raw.jsonl").read_text()
    assert '"process":1,' not in raw and manifest["chromium_events"] == 49


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (relative path -> content): what 'left as it was' compares."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def blank_line_log(lines: Lines, tmp_path: Path) -> Path:
    return write(tmp_path, [*lines[:12], b"", *lines[12:]], name="blank.log")


def test_strict_fails_naming_the_line_and_creates_nothing(
    lines: Lines, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tlscope.cli import main

    log = blank_line_log(lines, tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["--no-browser", str(log), "-o", str(tmp_path / "out"), "--strict"]) == 1
    err = capsys.readouterr().err
    assert "line 13" in err and "blank_line" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no OUT, no temporary sibling


def test_strict_leaves_an_existing_out_as_it_was(lines: Lines, tmp_path: Path) -> None:
    from tlscope.cli import main

    out = tmp_path / "out"
    assert main(["--no-browser", str(require_shared() / "inputs" / "comp_metrics.log"), "-o", str(out)]) == 0
    (out / "mine.txt").write_text("a file the user put there")
    kept = snapshot(out)
    log = blank_line_log(lines, tmp_path)
    siblings = sorted(p.name for p in tmp_path.iterdir())
    assert main(["--no-browser", str(log), "-o", str(out), "--overwrite", "--strict"]) == 1
    assert snapshot(out) == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == siblings


def test_strict_passes_a_clean_log(tmp_path: Path) -> None:
    from tlscope.cli import main

    simple = require_shared() / "inputs" / "simple.log"
    assert main(["--no-browser", str(simple), "-o", str(tmp_path / "out"), "--strict"]) == 0
    assert (tmp_path / "out" / "raw.jsonl").is_file()


def test_strict_compile_id_fails_only_on_compile_ids(
    lines: Lines, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tlscope.cli import main

    # Other problems do not trip it...
    blank = blank_line_log(lines, tmp_path)
    assert main(["--no-browser", str(blank), "-o", str(tmp_path / "a"), "--strict-compile-id"]) == 0
    assert (tmp_path / "a" / "manifest.json").is_file()
    # ...a malformed compile id does, naming its line.
    altered = lines[:]
    i = index(lines, b'{"describe_storage"')
    altered[i] = lines[i].replace(b'"frame_id": 0', b'"frame_id": -3', 1)
    capsys.readouterr()
    assert main(["--no-browser", str(write(tmp_path, altered)), "-o", str(tmp_path / "b"), "--strict-compile-id"]) == 1
    assert f"line {i + 1}" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_strict_through_python_m(lines: Lines, tmp_path: Path) -> None:
    import subprocess
    import sys

    log = blank_line_log(lines, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "tlscope", str(log), "-o", str(tmp_path / "out"), "--strict", "--no-browser"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 1
    assert "line 13" in done.stderr
    assert not (tmp_path / "out").exists()


def test_hostile_string_index_keeps_raw_jsonl_small(lines: Lines, tmp_path: Path) -> None:
    from tlscope.cli import main

    altered = lines[:]
    i = index(lines, b'{"str": ')
    altered[i] = lines[i][: lines[i].index(b"] ") + 2] + b'{"str": ["x", 999999999]}'
    assert main(["--no-browser", str(write(tmp_path, altered)), "-o", str(tmp_path / "out")]) == 0
    first = (tmp_path / "out" / "raw.jsonl").read_text().splitlines()[0]
    table = json.loads(first)["string_table"]
    assert len(table) == 12 and table[0] is None and "x" not in table
