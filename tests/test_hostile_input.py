"""Issue 9's items 1-9, 12-14, each on an input built the way the issue describes it.

Every run here goes through `tlscope.cli.main` (the console script's main), so an exception
escaping would fail the test; statuses follow the convention (0 ok; 1 problems under --strict
or an input/OS error, one line on stderr; 2 usage; 130 interrupted). Items 10 and 11 (signals)
are in tests/test_signals.py; the regexes of items 7-9 are also checked against their original
patterns in tests/test_linear_regex.py; the JSON boundary itself in tests/test_json_boundary.py.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, REPO

from tlscope.cli import main

PREFIX = b"V1121 20:02:00.263000 9539 torch/_logging/structured.py:28] "
SIMPLE = next((CORPUS / "simple").glob("*.log.gz"))


def base_log() -> bytes:
    """A real trace (the corpus's `simple`, torch 2.13) as plain bytes."""
    return gzip.decompress(SIMPLE.read_bytes())


def envelope(fields: dict[str, Any], payload: bytes | None = None, raw_event: bytes | None = None) -> bytes:
    """One record: a glog-prefixed envelope (event JSON spliced in raw if given) and its payload."""
    body = dict(fields)
    if payload is not None:
        body["has_payload"] = hashlib.md5(payload).hexdigest()
    text = json.dumps(body).encode()
    if raw_event is not None:
        text = text.replace(b'"__RAW__"', raw_event)
    lines = [PREFIX + text]
    if payload is not None:
        lines += [b"\t" + line for line in payload.split(b"\n")]
    return b"\n".join(lines) + b"\n"


CID = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}


def log_with(
    tmp_path: Path, *records: bytes, name: str = "dedicated_log_torch_trace_x.log", first: bool = False
) -> Path:
    """The base log with `records` after it (or before it, with `first`)."""
    path = tmp_path / name
    added = b"".join(records)
    path.write_bytes(added + base_log() if first else base_log() + added)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def manifest(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "manifest.json").read_text())
    return data


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# -- 1. deep nesting -----------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1000, 1500, 100_000])
def test_1_deep_nesting_in_an_envelope_is_one_invalid_line(depth: int, tmp_path: Path, capsys: Any) -> None:
    log = log_with(tmp_path, envelope({"dynamo_start": "__RAW__", **CID}, raw_event=nested(depth)))
    status, _, _ = run(capsys, log, "-o", tmp_path / "out", "--no-browser")
    assert status == 0
    first = manifest(tmp_path / "out")["problems"]["first"]
    assert [p["message"] for p in first if p["kind"] == "invalid_json"] == [
        "invalid JSON envelope: nested deeper than 127 levels"
    ]


@pytest.mark.parametrize("name", ["chromium_event", "torch_version"])
def test_1_deep_nesting_in_a_json_payload(name: str, tmp_path: Path, capsys: Any) -> None:
    if name == "chromium_event":
        record = envelope({"chromium_event": {}, **CID}, b'{"ts": 1, "args": ' + nested(1500) + b"}")
    else:
        deep = b'{"pytorch_version": "9.9", "extra": ' + nested(1500) + b"}"
        record = envelope({"artifact": {"name": "torch_version", "encoding": "json"}}, deep)
    log = log_with(tmp_path, record, first=True)  # before the real torch_version: it is the one read
    for flags in ([], ["-p"], ["-e"], ["-i"]):
        status, _, _ = run(capsys, log, "-o", tmp_path / "out", "--no-browser", "--overwrite", *flags)
        assert status == 0
    assert manifest(tmp_path / "out")["torch_version"] == "2.13.0+cpu"


def test_1_deep_nesting_in_split_and_redact(tmp_path: Path, capsys: Any) -> None:
    deep = envelope({"dynamo_start": "__RAW__", "rank": 1, **CID}, raw_event=nested(1500))
    log = log_with(tmp_path, envelope({"str": ["/x.py", 0], "rank": 0}), deep)
    status, _, _ = run(capsys, "split", log, "-o", tmp_path / "split")
    assert status == 0 and (tmp_path / "split" / "dedicated_log_torch_trace_rank_0.log").is_file()
    status, _, _ = run(capsys, "redact", log, "-o", tmp_path / "r.log", "--map", "/x=/y")
    assert status == 0 and (tmp_path / "r.log").read_bytes().endswith(deep)


def test_1_one_deep_rank_does_not_kill_a_multi_rank_run(tmp_path: Path, capsys: Any) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "dedicated_log_torch_trace_rank_0.log").write_bytes(base_log())
    bad = envelope({"chromium_event": {}, **CID}, b'{"ts": 1, "args": ' + nested(1500) + b"}")
    (job / "dedicated_log_torch_trace_rank_1.log").write_bytes(base_log() + bad)
    status, _, _ = run(capsys, job, "-o", tmp_path / "out", "--no-browser", "-j", "2")
    assert status == 0
    assert (tmp_path / "out" / "rank_0" / "index.html").is_file()
    assert (tmp_path / "out" / "rank_1" / "index.html").is_file()


# -- 2. huge integers ----------------------------------------------------------------------------


def test_2_a_chromium_ts_beyond_double_range(tmp_path: Path, capsys: Any) -> None:
    log = log_with(tmp_path, envelope({"chromium_event": {}, **CID}, b'{"ts": 1' + b"0" * 400 + b', "ph": "i"}'))
    status, _, _ = run(capsys, log, "-o", tmp_path / "out", "--no-browser")
    assert status == 0
    kinds = manifest(tmp_path / "out")["problems"]["counts"]
    assert kinds.get("bad_payload_json") == 1


@pytest.mark.parametrize("multi_rank", [False, True])
def test_2_a_json_artifact_holding_an_integer_beyond_double_range(
    multi_rank: bool, tmp_path: Path, capsys: Any
) -> None:
    payload = b'{"big": 1' + b"0" * 400 + b"}"
    record = envelope({"artifact": {"name": "huge", "encoding": "json"}, **CID}, payload)
    if multi_rank:
        job = tmp_path / "job"
        job.mkdir()
        for rank in (0, 1):
            (job / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(base_log() + record)
        status, _, _ = run(capsys, job, "-o", tmp_path / "out", "--no-browser")
        folder = tmp_path / "out" / "rank_1" / "-_0_0_0"
    else:
        status, _, _ = run(capsys, log_with(tmp_path, record), "-o", tmp_path / "out", "--no-browser")
        folder = tmp_path / "out" / "-_0_0_0"
    assert status == 0
    [artifact] = folder.glob("huge_*.json")
    assert artifact.read_bytes() == payload  # not JSON to serde_json ("number out of range"): kept as is


# -- 3. corrupt gzip in redact -------------------------------------------------------------------


def _damaged(kind: str) -> bytes:
    packed = gzip.compress(base_log(), mtime=0)
    if kind == "cut":
        return packed[: len(packed) // 2]
    if kind == "crc":
        return packed[:-8] + bytes(b ^ 0xFF for b in packed[-8:-4]) + packed[-4:]
    body = bytearray(packed)
    body[len(body) // 2 : len(body) // 2 + 64] = b"\x00" * 64
    return bytes(body)


@pytest.mark.parametrize("kind", ["cut", "crc", "stream"])
def test_3_redact_reads_a_corrupt_gzip_up_to_the_damage(kind: str, tmp_path: Path, capsys: Any) -> None:
    src = tmp_path / "trace.log.gz"
    src.write_bytes(_damaged(kind))
    intact = tmp_path / "intact.log.gz"
    intact.write_bytes(gzip.compress(base_log()))
    assert run(capsys, "redact", intact, "-o", tmp_path / "whole.log", "--map", "$PREFIX=/P")[0] == 0
    status, _, err = run(capsys, "redact", src, "-o", tmp_path / "out.log", "--map", "$PREFIX=/P")
    assert status == 0
    assert "ends early" in err
    redacted = (tmp_path / "out.log").read_bytes()
    assert redacted
    if kind != "stream":  # a damaged stream may inflate to garbage before zlib notices
        # What was readable is redacted exactly as the intact log is (up to its last whole line).
        assert (tmp_path / "whole.log").read_bytes().startswith(redacted.rpartition(b"\n")[0])


# -- 4. names too long for the file system -------------------------------------------------------


def _named(key: str, name: str) -> bytes:
    fields: dict[str, Any] = {key: {"name": name}, **CID}
    if key == "artifact":
        fields[key]["encoding"] = "string"
    if key == "inductor_output_code":
        fields[key] = {"filename": f"/tmp/{name}.py"}
    return envelope(fields, b"x = 1")


LONG_NAMES = ["é" * 86, "数" * 150, "😀" * 100, "<eval_with_key>." + "7" * 250]


@pytest.mark.parametrize(
    "key", ["artifact", "graph_dump", "dump_file", "optimize_ddp_split_child", "inductor_output_code"]
)
def test_4_long_names_fit_the_file_system(key: str, tmp_path: Path, capsys: Any) -> None:
    log = log_with(tmp_path, *(_named(key, name) for name in LONG_NAMES))
    for flags in ([], ["-p"], ["-e"]):
        out = tmp_path / "out"
        status, _, _ = run(capsys, log, "-o", out, "--no-browser", "--overwrite", *flags)
        assert status == 0
        longest = max(len(os.fsencode(p.name)) for p in out.rglob("*"))
        assert longest <= 255


# -- 5. -o . and -o .. with --overwrite ----------------------------------------------------------


@pytest.mark.parametrize("out", [".", ".."])
def test_5_out_that_holds_the_current_folder_is_refused(
    out: str, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "logs" / "trace.log"
    log.parent.mkdir()
    log.write_bytes(base_log())
    work = tmp_path / "work" / "here"
    work.mkdir(parents=True)
    (work / "keep.txt").write_text("mine")
    monkeypatch.chdir(work)
    before = sorted(p.name for p in (tmp_path / "work").iterdir())
    status, _, err = run(capsys, log, "-o", out, "--overwrite", "--no-browser")
    assert status == 1 and len(err.strip().splitlines()) == 1 and "current directory" in err
    assert (work / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == before  # no ..tlscope-*, ..old-*


# -- 6. permission errors (as a user the permissions apply to) -----------------------------------


def _unprivileged(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m tlscope argv` subject to file permissions: as root, without the capabilities
    that bypass them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: permissions would not apply")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [*prefix, sys.executable, "-m", "tlscope", *argv, "--no-browser"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def _permission_case(case: str, tmp_path: Path) -> tuple[list[str], Path]:
    """(argv, the path the one-line error must name) for each permission problem of the issue."""
    log = tmp_path / "trace.log"
    log.write_bytes(base_log())
    locked = tmp_path / "locked"
    locked.mkdir()
    if case == "read-only parent of OUT":
        locked.chmod(0o555)
        return [str(log), "-o", str(locked / "out")], locked
    if case == "unreadable input":
        log.chmod(0o000)
        return [str(log), "-o", str(tmp_path / "out")], log
    if case == "unreadable rank folder":
        for rank in (0, 1):
            (locked / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(base_log())
        locked.chmod(0o000)
        return [str(locked), "--all-ranks-html", "-o", str(tmp_path / "out")], locked
    locked.chmod(0o600)  # OUT under a folder that cannot be searched
    return [str(log), "-o", str(locked / "sub" / "out")], locked


@pytest.mark.parametrize(
    "case", ["read-only parent of OUT", "unreadable input", "unreadable rank folder", "unsearchable folder above OUT"]
)
def test_6_permission_errors_are_one_line(case: str, tmp_path: Path) -> None:
    argv, named = _permission_case(case, tmp_path)
    try:
        done = _unprivileged(argv, tmp_path)
    finally:
        for path in tmp_path.rglob("*"):
            path.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(named) in lines[0] and "Permission denied" in lines[0], lines
    assert not [p for p in tmp_path.rglob("*") if ".tlscope-" in p.name]


# -- 7-9. regexes that took the square of their input ----------------------------------------------


def _subprocess(argv: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """A run that must end: the old quadratic code took hours on these inputs (a hang here)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "tlscope", *argv]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_7_a_seed_nspid_file_name_without_a_slash(tmp_path: Path) -> None:
    name = "a" * 2_000_000 + "-seed-nspid" + "b" * 10
    frames = [{"line": 1, "name": "f", "filename": 777}]
    log = log_with(
        tmp_path,
        envelope({"str": [name, 777]}),
        envelope({"dynamo_start": {"stack": frames}, "frame_id": 5, "frame_compile_id": 0, "attempt": 0}),
    )
    done = _subprocess([str(log), "-o", "out", "--no-browser"], tmp_path)
    assert done.returncode == 0, done.stderr


def test_8_redact_on_a_long_line_of_glog_prefixes(tmp_path: Path) -> None:
    line = b"V1121 19:30:32.270000 1 " * (4_000_000 // 24)
    log = log_with(tmp_path, line + b"\n")
    done = _subprocess(["redact", str(log), "-o", "r.log", "--map", "/tmp=/T"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert line in (tmp_path / "r.log").read_bytes()


@pytest.mark.parametrize("bomb", [b"/*a" * 400_000, b"<a" * 400_000])
def test_9_parity_on_output_code_full_of_openings(bomb: bytes, tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    # A graph with a collective schedule, so parity reads its output code (tlparse's check).
    schedule = b'["torch.ops._c10d_functional.all_reduce_.default"]'
    # A compile id of its own: the base log's graph has output code of its own.
    cid = {"frame_id": 7, "frame_compile_id": 0, "attempt": 0}
    schedule_record = envelope(
        {"artifact": {"name": "inductor_collective_schedule", "encoding": "json"}, **cid}, schedule
    )
    code = envelope({"inductor_output_code": {"filename": "/tmp/x.py"}, **cid}, b"x = 1\n" + bomb)
    for rank in (0, 1):
        (job / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(base_log() + schedule_record + code)
    done = _subprocess([str(job), "-o", "out", "--no-browser", "-p", "--all-ranks-html"], tmp_path)
    assert done.returncode == 0, done.stderr
    parity = json.loads((tmp_path / "out" / "rank_1" / "collectives_parity.json").read_text())
    assert [g["graph"] for g in parity["graphs"]] == ["-_7_0_0"]  # the code was read: no call found


# -- 12. --strict in multi-rank runs -------------------------------------------------------------


@pytest.mark.parametrize("existing", [False, True])
def test_12_strict_fails_a_multi_rank_run_naming_the_bad_rank(existing: bool, tmp_path: Path, capsys: Any) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "dedicated_log_torch_trace_rank_0.log").write_bytes(base_log())
    (job / "dedicated_log_torch_trace_rank_1.log").write_bytes(base_log())
    (job / "dedicated_log_torch_trace_rank_2.log").write_bytes(base_log() + b"not a glog line\n")
    out = tmp_path / "out"
    if existing:
        out.mkdir()
        (out / "mine.txt").write_text("old")
    status, _, err = run(capsys, job, "-o", out, "--no-browser", "--strict", "--overwrite", "-j", "2")
    assert status == 1
    [line] = err.strip().splitlines()
    assert line.startswith("Error: rank 2 (dedicated_log_torch_trace_rank_2.log)") and "--strict" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == (["job", "out"] if existing else ["job"])
    if existing:
        assert [p.name for p in out.iterdir()] == ["mine.txt"]
    status, _, _ = run(capsys, job, "-o", out, "--no-browser", "--overwrite")  # without --strict: listed
    assert status == 0 and (out / "rank_2" / "index.html").is_file()


# -- 13. ranks beyond u32 ------------------------------------------------------------------------


def test_13_ranks_beyond_u32_are_bad_ranks_not_a_multi_rank_job(tmp_path: Path, capsys: Any) -> None:
    rank_lines = [envelope({"str": [f"/f{i}.py", i], "rank": r}) for i, r in enumerate((0, 2**32, 2**64))]
    log = log_with(tmp_path, *rank_lines)
    status, _, _ = run(capsys, log, "-o", tmp_path / "out", "--no-browser")
    assert status == 0
    found = manifest(tmp_path / "out")
    assert found["problems"]["counts"].get("bad_rank") == 2
    assert found["ranks"] == [0] and sum(e["count"] for e in found["events"].values()) > 200
    status, _, err = run(capsys, log, "-o", tmp_path / "strict", "--no-browser", "--strict")
    assert status == 1 and "bad_rank" in err


# -- 14. empty and non-log input -----------------------------------------------------------------


@pytest.mark.parametrize("what", ["empty", "binary"])
def test_14_nothing_that_is_a_trace_event(what: str, tmp_path: Path, capsys: Any) -> None:
    log = tmp_path / "input.log"
    log.write_bytes(b"" if what == "empty" else Path(sys.executable).resolve().read_bytes()[:2_000_000])
    status, _, err = run(capsys, log, "-o", tmp_path / "out", "--no-browser")
    assert status == 0 and f"nothing in {log} was a trace event" in err
    status, _, err = run(capsys, log, "-o", tmp_path / "strict", "--no-browser", "--strict")
    assert status == 1 and not (tmp_path / "strict").exists()
    [line] = err.strip().splitlines()
    assert "--strict" in line and "was a trace event" in line


def test_14_a_multi_rank_folder_with_an_empty_and_a_non_log_rank(tmp_path: Path, capsys: Any) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "dedicated_log_torch_trace_rank_0.log").write_bytes(base_log())
    (job / "dedicated_log_torch_trace_rank_1.log").write_bytes(b"")
    (job / "dedicated_log_torch_trace_rank_2.log").write_bytes(Path(sys.executable).resolve().read_bytes()[:500_000])
    status, _, err = run(capsys, job, "-o", tmp_path / "out", "--no-browser", "-j", "2")
    assert status == 0
    warnings = [line for line in err.splitlines() if "was a trace event" in line]
    assert [w.split(":")[0] for w in warnings] == ["Warning", "Warning"]
    assert "rank 1: nothing in" in warnings[0] and "(it is empty)" in warnings[0]
    assert "rank 2: nothing in" in warnings[1] and "rank_2.log" in warnings[1]
    assert (tmp_path / "out" / "rank_1" / "index.html").is_file()  # listed, as an idle rank would be
    status, _, err = run(capsys, job, "-o", tmp_path / "strict", "--no-browser", "--strict", "-j", "2")
    assert status == 1 and not (tmp_path / "strict").exists()
    [line] = err.strip().splitlines()
    assert line.startswith("Error: rank 1 (dedicated_log_torch_trace_rank_1.log)") and "was a trace event" in line


def test_a_rank_whose_worker_dies_is_listed_not_a_traceback(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed under a rank (out of memory, a crash in C code): that rank, and the ones the
    broken pool could not finish, fail and are listed; the run ends with a landing page."""
    import signal

    from tlscope.pipeline import ranks

    parse = ranks.run

    def dies_on_rank_1(log: Path, *args: Any, **kwargs: Any) -> Any:
        if log.name.endswith("rank_1.log"):
            os.kill(os.getpid(), signal.SIGKILL)  # in the forked worker
        return parse(log, *args, **kwargs)

    monkeypatch.setattr(ranks, "run", dies_on_rank_1)
    job = tmp_path / "job"
    job.mkdir()
    for rank in (0, 1):
        (job / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(base_log())
    status, _, err = run(capsys, job, "-o", tmp_path / "out", "--no-browser", "-j", "2")
    assert status == 0 and (tmp_path / "out" / "index.html").is_file()
    assert f"rank 1: parse failed: {ranks.WORKER_DIED}" in err
    status, _, err = run(capsys, job, "-o", tmp_path / "strict", "--no-browser", "-j", "2", "--strict")
    assert status == 1 and ranks.WORKER_DIED in err and not (tmp_path / "strict").exists()


def test_13_a_rank_log_named_beyond_u32_is_skipped_with_a_note(tmp_path: Path, capsys: Any) -> None:
    job = tmp_path / "job"
    job.mkdir()
    for rank in ("0", "1", str(2**32), "9" * 200):  # 200 digits: int() is never asked to read them
        (job / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(base_log())
    status, _, _ = run(capsys, job, "-o", tmp_path / "out", "--no-browser", "-j", "2")
    assert status == 0
    assert sorted(p.name for p in (tmp_path / "out").glob("rank_*")) == ["rank_0", "rank_1"]
    page = (tmp_path / "out" / "index.html").read_text()
    assert f"dedicated_log_torch_trace_rank_{2**32}.log: its rank is beyond 2**32 - 1" in page
    assert f"dedicated_log_torch_trace_rank_{'9' * 200}.log: its rank is beyond 2**32 - 1" in page


def test_2_compile_ids_of_thousands_of_digits_in_log_text(tmp_path: Path, capsys: Any) -> None:
    """Compile ids read from text (a recompile reason, a chromium event's args.compile_id) are
    u32s: 5,000 digits are no compile id, not a ValueError from int() (Python's 4,300-digit limit)."""
    reasons = json.dumps(["1" * 5000 + "/0: x == 1", "0/0: y == 2"]).encode()
    event = {"name": "x", "ph": "B", "ts": 1, "pid": 0, "tid": 0, "args": {"compile_id": "7" * 5000 + "/0"}}
    log = log_with(
        tmp_path,
        envelope({"artifact": {"name": "recompile_reasons", "encoding": "json"}, **CID}, reasons),
        envelope({"chromium_event": {}, **CID}, json.dumps(event).encode()),
    )
    status, _, _ = run(capsys, log, "-o", tmp_path / "out", "--no-browser")
    assert status == 0
    compiles = json.loads((tmp_path / "out" / "compiles.json").read_text())
    assert compiles  # the fold finished; the long ids are simply not compile ids
