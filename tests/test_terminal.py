"""No control character from a log reaches the terminal (issue 24, item 5; docs/SECURITY.md
"Hostile logs" 6).

A real corpus log is mutated to hold terminal escapes in its strings: each frame's function
name, each interned file name (the string table), every payload line (graph-break reasons,
guards, graphs), and an event key. `tlscope summary`, `tlscope LOG -v` and `tlscope diff` are run
on it as a user would (a child process, stdout and stderr read as bytes): no ESC (nor any other
C0/C1 control but newline and tab) comes out, while the escapes are shown as `\\x1b`. On the
code before issue 24, summary printed 9 lines with ESC, `-v` one on stderr, diff 806: each test
here failed.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.terminal import json_text, visible

LOG = next((CORPUS / "graph_breaks").glob("*.log*"))
#: Retitle the terminal, clear it, plant a hyperlink, CSI as one C1 byte, DEL, carriage return.
HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\\x9b31m\x7f\r"
_JSON_HOSTILE = json.dumps(HOSTILE)[1:-1]
#: Every control character a terminal acts on: C0 but newline and tab, DEL, C1 (as UTF-8 too).
_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


@pytest.fixture(scope="module")
def hostile_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = gzip.decompress(LOG.read_bytes()).decode("utf-8").splitlines(keepends=True)
    out = []
    for line in lines:
        if line.startswith("\t"):
            line = "\t" + HOSTILE + line[1:]  # payload text (its MD5 no longer matches: a problem)
        else:
            line = line.replace('"name": "', '"name": "' + _JSON_HOSTILE)
            line = line.replace('"str": ["', '"str": ["' + _JSON_HOSTILE)
        out.append(line)
    prefix = lines[0].split("{", 1)[0]
    out.insert(5, prefix + '{"' + _JSON_HOSTILE + 'evil_key": {}, "frame_id": 0, "frame_compile_id": 0}\n')
    path = tmp_path_factory.mktemp("hostile") / "escapes.log"
    path.write_text("".join(out), encoding="utf-8")
    assert "\x1b" in path.read_text(encoding="utf-8")
    return path


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "tlscope", *args], capture_output=True, cwd=cwd, timeout=300)


def assert_shown_not_sent(result: subprocess.CompletedProcess[bytes], where: str = "stdout") -> None:
    for name in ("stdout", "stderr"):
        data: bytes = getattr(result, name)
        found = _CONTROL.search(data)
        assert found is None, (name, data[max(0, found.start() - 80) : found.end() + 80])
    shown: bytes = getattr(result, where)
    assert b"\\x1b" in shown and b"PWNED" in shown, where  # a table may fold it across lines


def test_summary_shows_escapes_as_text(hostile_log: Path, tmp_path: Path) -> None:
    result = run("summary", str(hostile_log), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert_shown_not_sent(result)


def test_verbose_parse_shows_escapes_as_text(hostile_log: Path, tmp_path: Path) -> None:
    result = run(str(hostile_log), "-v", "-o", str(tmp_path / "out"), "--no-browser", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert_shown_not_sent(result, "stderr")  # `unknown event key ...` on stderr


def test_diff_shows_escapes_as_text(hostile_log: Path, tmp_path: Path) -> None:
    result = run("diff", str(hostile_log), str(LOG), cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # they differ
    assert_shown_not_sent(result)


@pytest.mark.parametrize("command", ["summary", "diff"])
def test_json_keeps_the_strings_escaped_as_json(hostile_log: Path, tmp_path: Path, command: str) -> None:
    """--json escapes every control character the JSON way and decodes to the log's strings."""
    args = [str(hostile_log)] + ([str(LOG)] if command == "diff" else [])
    result = run(command, *args, "--json", cwd=tmp_path)
    assert _CONTROL.search(result.stdout) is None
    assert HOSTILE not in result.stdout.decode()  # nowhere raw...
    assert any(HOSTILE[:20] in text for text in strings(json.loads(result.stdout)))  # ...but in the data


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings(k) + strings(v)]
    return [s for v in value for s in strings(v)] if isinstance(value, list) else []


def test_serve_and_split_print_a_hostile_path_visibly(tmp_path: Path) -> None:
    """A path given to a command is printed back in its messages (`serve` cannot open it, `split`
    finds no such file): named with escapes, it is shown made visible."""
    name = "\x1b]0;PWNED\x07.log"
    for command in ("serve", "split"):
        extra = ["--port", "0", "--no-browser"] if command == "serve" else ["-o", "out"]
        result = run(command, name, *extra, cwd=tmp_path)
        assert result.returncode == 1, (command, result.stderr)
        assert_shown_not_sent(result, "stderr")


def test_redact_to_a_terminal_shows_escapes_as_text(hostile_log: Path, tmp_path: Path) -> None:
    """`redact` without -o writes the log itself to stdout: unchanged to a pipe (it is data), made
    visible to a terminal (a pseudo-terminal here)."""
    piped = run("redact", str(hostile_log), "--user", "root=someone", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stdout.count(b"\x1b") == hostile_log.read_bytes().count(b"\x1b")
    main, sub = os.openpty()
    got = bytearray()
    reader = threading.Thread(target=_drain, args=(main, got))
    reader.start()
    try:
        cmd = [sys.executable, "-m", "tlscope", "redact", str(hostile_log), "--user", "root=someone"]
        status = subprocess.run(cmd, stdout=sub, stderr=subprocess.PIPE, cwd=tmp_path, timeout=300).returncode
    finally:
        os.close(sub)
        reader.join(60)
        os.close(main)
    assert status == 0 and b"PWNED" in got
    assert b"\x1b" not in got and b"\\x1b]0;PWNED" in got


def _drain(fd: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the terminal's last writer closed it
            return
        if not chunk:
            return
        into += chunk


def test_visible_and_json_text() -> None:
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("\x1b[31m\x00\r\x7f\x9b\x85") == "\\x1b[31m\\x00\\x0d\\x7f\\x9b\\x85"
    assert visible("é ü 日本") == "é ü 日本"
    text = json_text({"k": "\x1b\x7f\x9b\n"})
    assert re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text) is None
    assert json.loads(text) == {"k": "\x1b\x7f\x9b\n"} and visible(text) == text
