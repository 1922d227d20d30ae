"""`tlscope summary` on a big log shows a progress bar on stderr while it reads (issue 20, finding
8: it showed nothing for the 55 MB log), when stderr is a terminal, and not while --json goes to a
pipe. Run in-process with stderr a real pseudo-terminal, on a corpus log with the size threshold
lowered to 0 (corpus logs are small; the bar is for logs of 8 MiB and more)."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading

import pytest
from helpers import CORPUS

from tlscope.commands import progress_bar
from tlscope.commands.summary_command import main

LOG = next((CORPUS / "graph_breaks").glob("*.log.gz"))
BAR = re.compile(r"\d+(\.\d+)?/\d+(\.\d+)? (bytes|KiB|MiB)")


def _summary(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], *, stdout_tty: bool, min_bytes: int = 0
) -> tuple[str, str]:
    """(what stderr's terminal showed, stdout) of `tlscope summary ARGV`."""
    monkeypatch.setattr(progress_bar, "MIN_BYTES", min_bytes)
    monkeypatch.setenv("TERM", "xterm")
    master, slave = os.openpty()
    shown = bytearray()

    def drain() -> None:  # read as it comes: a full pty buffer would block the writer
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    stderr = os.fdopen(slave, "w", encoding="utf-8")
    out_master, out_slave = os.openpty()
    stdout = os.fdopen(out_slave, "w", encoding="utf-8") if stdout_tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        assert main(argv) == 0
    finally:
        monkeypatch.undo()
        stderr.close()  # the reader sees EOF (EIO) once the slave closes
        reader.join(timeout=10)
        os.close(master)
    text = stdout.getvalue() if isinstance(stdout, io.StringIO) else ""
    if stdout_tty:
        stdout.close()
    os.close(out_master)
    return shown.decode(errors="replace"), text


def test_a_big_log_read_shows_a_bar_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    shown, _ = _summary(monkeypatch, [str(LOG), "--width", "100"], stdout_tty=True)
    assert BAR.search(shown), shown
    size = LOG.stat().st_size
    assert f"{size / 1024:.1f}/{size / 1024:.1f} KiB" in shown  # ends at the log's size


def test_json_to_a_pipe_shows_none(monkeypatch: pytest.MonkeyPatch) -> None:
    shown, out = _summary(monkeypatch, [str(LOG), "--json"], stdout_tty=False)
    assert not BAR.search(shown), shown
    assert json.loads(out)["compiles"]


def test_a_small_log_shows_none(monkeypatch: pytest.MonkeyPatch) -> None:
    shown, _ = _summary(monkeypatch, [str(LOG)], stdout_tty=True, min_bytes=8 * 1024 * 1024)
    assert not BAR.search(shown), shown


def test_an_output_folder_is_read_not_parsed_so_shows_none(monkeypatch: pytest.MonkeyPatch) -> None:
    from tlscope.api import load

    trace = load(LOG)  # held: its folder lives as long as it does
    shown, _ = _summary(monkeypatch, [str(trace.root)], stdout_tty=True)
    assert not BAR.search(shown), shown


def test_a_jobs_logs_show_the_ranks_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job's rank logs: a bar of ranks parsed, of the job's (ranks_diverge_2: 2)."""
    shown, _ = _summary(monkeypatch, [str(CORPUS / "ranks_diverge_2"), "--width", "100"], stdout_tty=True)
    assert "ranks parsed" in shown and "2/2" in shown, shown


def test_a_jobs_logs_with_json_to_a_pipe_show_none(monkeypatch: pytest.MonkeyPatch) -> None:
    shown, out = _summary(monkeypatch, [str(CORPUS / "ranks_diverge_2"), "--json"], stdout_tty=False)
    assert "ranks parsed" not in shown
    assert len(json.loads(out)["ranks"]) == 2
