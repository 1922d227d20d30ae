"""Every message of a first hour is one correct line (issue 20, finding 4).

Each case runs `tlscope` as typed, in a folder of its own, on real corpus traces: the message is
one line on stderr, the exit status is 1 (2 for a usage error, and for `diff`, whose errors are
2 as in diff(1), 1 meaning "different"), it names what the user typed (the path, port or compile
id) and never a temporary path (tlscope-load-…, tlscope-pack-…, a .tmp file).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import CORPUS

SIMPLE = CORPUS / "simple"
RECOMPILES = CORPUS / "recompiles"
TWO_RANKS = CORPUS / "ranks_diverge_2"
EXPORT = CORPUS / "export"  # three logs of separate programs in one folder


def tlscope(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tlscope", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@dataclass
class Case:
    args: list[str]
    status: int
    #: Each must appear in the line (what the user typed, and the hint).
    names: list[str]
    #: What must appear exactly once (the path, not twice).
    once: str | None = None


@pytest.fixture
def busy_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock.getsockname()[1]
    sock.close()


def _cases(port: int) -> dict[str, Case]:
    return {
        "serve a missing path": Case(["serve", "/does/not/exist", "--no-browser"], 1, ["/does/not/exist"]),
        "serve on a busy port": Case(
            ["serve", str(SIMPLE), "--no-browser", "--port", str(port)], 1, [f"port {port}", "--port 0"]
        ),
        "diff a missing compile id": Case(["diff", str(RECOMPILES), "--ids", "0/0", "9/9"], 2, ["[9/9]", "[0/1]"]),
        "summary of a missing rank": Case(["summary", "--rank", "7", str(TWO_RANKS)], 1, [str(TWO_RANKS), "rank 7"]),
        "summary of a missing log": Case(["summary", "/nonexistent.log"], 1, [], once="/nonexistent.log"),
        "pack into a missing folder": Case(["pack", str(SIMPLE), "-o", "missing_dir/x.html"], 1, ["missing_dir"]),
        "a misspelt command": Case(["sumary", str(SIMPLE)], 2, ["sumary", "did you mean", "tlscope summary"]),
        "serve an empty folder": Case(["serve", "empty_dir", "--no-browser"], 1, ["no log files found in empty_dir"]),
        "summary of several logs": Case(["summary", str(EXPORT)], 1, ["--latest"], once=str(EXPORT)),
    }


CASES = list(_cases(0))


@pytest.mark.parametrize("name", CASES)
def test_each_message_is_one_correct_line(name: str, tmp_path: Path, busy_port: int) -> None:
    case = _cases(busy_port)[name]
    (tmp_path / "empty_dir").mkdir()
    done = tlscope(*case.args, cwd=tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert done.returncode == case.status, (done.returncode, line)
    assert line.startswith(("Error: ", "tlscope: ")), line
    for text in case.names:
        assert text in line, (text, line)
    if case.once is not None:
        assert line.count(case.once) == 1, line
    for leak in ("tlscope-load-", "tlscope-pack-", ".tmp", "Traceback", "Errno"):
        assert leak not in line, line
    if name == "pack into a missing folder":
        assert str(SIMPLE) not in line  # the output's folder is to blame, not the input
        assert not (tmp_path / "missing_dir").exists()


@pytest.mark.parametrize("command", ["summary", "pack", "diff", "serve"])
def test_latest_is_accepted_wherever_a_folder_of_logs_is(command: str, tmp_path: Path) -> None:
    """`--latest` picks the newest log of a folder of several, in every command that reads one."""
    logs = tmp_path / "logs"
    shutil.copytree(EXPORT, logs)
    newest = sorted(logs.iterdir())[1]
    os.utime(newest, (time.time() + 60, time.time() + 60))
    if command == "serve":
        proc = subprocess.Popen(
            [sys.executable, "-m", "tlscope", "serve", "--latest", str(logs), "--no-browser", "--port", "0"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            second = proc.stdout.readline()
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        assert "(1 trace(s)" in first, first
        assert newest.name.removesuffix(".log.gz") in second, second
        return
    args = {
        "summary": ["summary", "--latest", str(logs), "--json"],
        "pack": ["pack", "--latest", str(logs), "-o", "x.html"],
        "diff": ["diff", "--latest", str(logs), str(logs)],
    }[command]
    done = tlscope(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "unrecognized arguments" not in done.stderr


def test_stopping_serve_says_stopped_not_interrupted_output(tmp_path: Path) -> None:
    for signum, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        proc = subprocess.Popen(
            [sys.executable, "-m", "tlscope", "serve", str(SIMPLE), "--no-browser", "--port", "0"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("tlscope serve: http")
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == status, err
        assert err.strip().splitlines() == ["tlscope serve: stopped"], err


def _cut_gz(path: Path) -> Path:
    """The simple trace's first 2000 lines, compressed and cut before the gzip trailer."""
    import gzip
    import zlib

    text = gzip.decompress(next(SIMPLE.glob("*.gz")).read_bytes())
    head = b"\n".join(text.split(b"\n")[:2000]) + b"\n"
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31)
    path.write_bytes(deflate.compress(head) + deflate.flush(zlib.Z_SYNC_FLUSH))
    return path


@pytest.mark.parametrize("kind", ["truncated .gz", "no trace event"])
def test_a_bad_input_warns_without_v_and_fails_strict(kind: str, tmp_path: Path) -> None:
    if kind == "truncated .gz":
        log = _cut_gz(tmp_path / "cut.log.gz")
        said = "ends early"
    else:
        log = tmp_path / "notes.log"
        log.write_text("hello, this is not a trace\n")
        said = "was a trace event"
    done = tlscope(str(log), "-o", "out", "--no-browser", cwd=tmp_path)
    assert done.returncode == 0
    warnings = [line for line in done.stderr.splitlines() if line.startswith("Warning: ")]
    assert len(warnings) == 1 and said in warnings[0] and str(log) in warnings[0], done.stderr
    strict = tlscope(str(log), "-o", "out2", "--no-browser", "--strict", cwd=tmp_path)
    assert strict.returncode == 1
    assert next(line for line in strict.stderr.splitlines() if line.strip()).startswith("Error: --strict")
    assert not (tmp_path / "out2").exists()
