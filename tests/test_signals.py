"""Items 10 and 11: signals mid-run leave OUT as it was, no temporary folder, no process.

A real `python -m tlscope` (own session, stdout and stderr through pipes, as a caller that reads
them would) is stopped while it writes: SIGTERM, SIGKILL of the main process, Ctrl-C delivered
to the whole process group as a terminal does, and SIGTERM of a multi-rank run splitting a
muxed log. After each: OUT is byte for byte what it was, no `.OUT.tlscope-*` or split folder is
left, the pipes reach end-of-file (no orphaned worker holds them), and 3 s later no process of
the run's group is alive. bench/signals.py is the 20-trial version on the biggest traces.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import CORPUS, REPO, load_script

from tlscope.cli import main

fuzzrun = load_script("bench", "fuzzrun")
SIMPLE = next((CORPUS / "simple").glob("*.log.gz"))
MUXED = CORPUS / "muxed" / "muxed.log.gz"


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 40 MB real trace (corpus `simple` scaled with fresh compile ids): a run of some seconds."""
    out = tmp_path_factory.mktemp("big") / "dedicated_log_torch_trace_big.log"
    subprocess.run(
        [sys.executable, str(REPO / "corpus" / "scale.py"), str(SIMPLE), "--size", "40MB", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` with its SHA-256: what 'OUT intact' compares."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def start(argv: list[str], cwd: Path, *, parse: bool = True) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TMPDIR": str(cwd / "tmp")}
    (cwd / "tmp").mkdir(exist_ok=True)
    command = [sys.executable, "-m", "tlscope", *argv, *(["--no-browser"] if parse else [])]
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


def children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rpartition(b")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(name))
    return found


def wait_until_writing(proc: subprocess.Popen[bytes], parent: Path, *, workers: int) -> None:
    """Until OUT's temporary folder exists and the run has `workers` child processes (or fail)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it could be interrupted"
        temp = [p for p in parent.iterdir() if ".tlscope-" in p.name]
        if temp and len([c for c in children(proc.pid) if c not in guards(proc.pid)]) >= workers:
            time.sleep(0.3)  # well inside the writing
            return
        time.sleep(0.02)
    pytest.fail("the run never started writing")


def guards(pid: int) -> list[int]:
    """The cleanup guard (`sh`, its own session) among the children of `pid`."""
    found = []
    for child in children(pid):
        try:
            if os.getsid(child) == child:
                found.append(child)
        except OSError:
            continue
    return found


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Exit status and stderr; the pipes must reach EOF (no leftover process holds them)."""
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode("utf-8", "replace")


def assert_nothing_left(proc: subprocess.Popen[bytes], parent: Path) -> None:
    time.sleep(3)
    assert fuzzrun.group_members(proc.pid) == []
    assert [p.name for p in parent.iterdir() if ".tlscope-" in p.name or ".old-" in p.name] == []
    # Jinja's compiled-template cache (write/templates.py) is kept between runs on purpose.
    assert [p.name for p in (parent / "tmp").iterdir() if not p.name.startswith("_jinja2-cache")] == []


@pytest.fixture
def existing_out(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("the previous report")
    (out / "sub").mkdir()
    (out / "sub" / "x.json").write_text("{}")
    return out, snapshot(out)


def test_10_sigterm_mid_run(big_log: Path, tmp_path: Path, existing_out: tuple[Path, dict[str, str]]) -> None:
    out, before = existing_out
    proc = start([str(big_log), "-o", str(out), "--overwrite"], tmp_path)
    wait_until_writing(proc, tmp_path, workers=1)  # the page worker is running
    os.kill(proc.pid, signal.SIGTERM)
    status, err = finish(proc)
    assert status == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert snapshot(out) == before
    assert_nothing_left(proc, tmp_path)


def test_10_sigkill_of_the_main_process(
    big_log: Path, tmp_path: Path, existing_out: tuple[Path, dict[str, str]]
) -> None:
    out, before = existing_out
    proc = start([str(big_log), "-o", str(out), "--overwrite"], tmp_path)
    wait_until_writing(proc, tmp_path, workers=1)
    os.kill(proc.pid, signal.SIGKILL)
    status, _ = finish(proc)  # would time out if the orphaned worker kept the pipes open
    assert status == -signal.SIGKILL
    deadline = time.monotonic() + 10  # the guard removes the temporary folder once the run is gone
    while [p for p in tmp_path.iterdir() if ".tlscope-" in p.name] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert snapshot(out) == before
    assert_nothing_left(proc, tmp_path)


def test_11_ctrl_c_to_the_process_group(big_log: Path, tmp_path: Path) -> None:
    proc = start([str(big_log), "-o", str(tmp_path / "out")], tmp_path)
    wait_until_writing(proc, tmp_path, workers=1)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends: the main process and its workers
    status, err = finish(proc)
    assert status == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines() == ["Interrupted; the output was left as it was."]
    assert not (tmp_path / "out").exists()
    assert_nothing_left(proc, tmp_path)


def test_10_sigterm_of_a_multi_rank_run_splitting_a_muxed_log(
    tmp_path: Path, existing_out: tuple[Path, dict[str, str]]
) -> None:
    out, before = existing_out
    proc = start([str(MUXED), "-o", str(out), "--overwrite", "-j", "2"], tmp_path)
    wait_until_writing(proc, tmp_path, workers=0)
    deadline = time.monotonic() + 60  # until the split logs exist
    while not list(tmp_path.glob(".out.tlscope-*/.split/*.log")) and time.monotonic() < deadline:
        assert proc.poll() is None
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGTERM)
    status, err = finish(proc)
    assert status == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    assert snapshot(out) == before
    assert_nothing_left(proc, tmp_path)


def test_11_ctrl_c_during_the_rank_sniff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tlscope.pipeline import parse  # the parse command imports it from there when it runs

    def interrupted(*args: object, **kwargs: object) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(parse, "wants_multi_rank", interrupted)
    assert main([str(SIMPLE), "-o", str(tmp_path / "out"), "--no-browser"]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines() == ["Interrupted; the output was left as it was."]


def test_10_sigterm_at_random_moments(tmp_path: Path) -> None:
    """bench/signals.py's trials, three of them, on the muxed corpus log (split, then rank workers):
    at each random moment OUT is intact, no temporary folder is left, no process 3 s later."""
    import random

    signals_bench = load_script("bench", "signals")
    results = signals_bench.campaign(MUXED, 3, signal.SIGTERM, random.Random(20251123), scratch_root=tmp_path)
    assert len(results) == 3
    # Said in full when it fails (pytest's comparison of nested lists cuts the message short).
    failures = [f"trial {i}: {failure}" for i, r in enumerate(results) for failure in r.failures]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_10_redact_stopped_mid_write_leaves_no_temporary_file(big_log: Path, tmp_path: Path, signum: int) -> None:
    target = tmp_path / "shared.log"
    target.write_bytes(b"the previous redacted log\n")
    proc = start(["redact", str(big_log), "-o", str(target), "--map", "/tmp=/T"], tmp_path, parse=False)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".shared.log.redact-*")) and time.monotonic() < deadline:
        assert proc.poll() is None, "redact ended before it could be stopped"
        time.sleep(0.005)
    time.sleep(0.2)  # well inside the writing
    os.kill(proc.pid, signum)
    status, err = finish(proc)
    assert status == (-signal.SIGKILL if signum == signal.SIGKILL else 128 + signum), err
    assert "Traceback" not in err
    deadline = time.monotonic() + 10  # after SIGKILL the guard process removes the temporary file
    while list(tmp_path.glob(".shared.log.redact-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert target.read_bytes() == b"the previous redacted log\n"
    assert_nothing_left(proc, tmp_path)
    assert list(tmp_path.glob(".shared.log.redact-*")) == []


def test_a_stopped_guard_is_not_waited_for_and_is_reaped_later(tmp_path: Path) -> None:
    # stop_guard returns at once; the guard still removes a path left behind, and a later call
    # reaps it (no zombie is kept beyond the next stop).
    from tlscope import lifetime

    left = tmp_path / "left"
    (left / "sub").mkdir(parents=True)
    guard = lifetime.start_guard(left)
    assert guard is not None
    lifetime.stop_guard(guard)
    deadline = time.monotonic() + 10
    while left.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not left.exists()
    while guard.pid in lifetime._unreaped and time.monotonic() < deadline:
        time.sleep(0.01)
        lifetime.stop_guard(None)
    assert guard.pid not in lifetime._unreaped
    with pytest.raises(ChildProcessError):
        os.waitpid(guard.pid, os.WNOHANG)


def test_a_stop_while_the_guard_starts_leaves_no_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM handled while the cleanup guard is being spawned (slow on a loaded machine) ends
    the run inside `OutputDir.__enter__`, where no `__exit__` follows: the folder goes there."""
    from tlscope.write import outdir

    def stopped(path: Path) -> None:
        assert path.is_dir()  # made: the window is after mkdtemp
        raise KeyboardInterrupt

    monkeypatch.setattr(outdir, "start_guard", stopped)
    with pytest.raises(KeyboardInterrupt), outdir.OutputDir(tmp_path / "out", overwrite=False):
        pass
    assert list(tmp_path.iterdir()) == []
