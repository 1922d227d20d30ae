"""`tlscope run -- PROGRAM ARGS` (tlparse #162): run with TORCH_TRACE set, parse what it wrote, serve it.

Fast tests run a fake program that writes a real corpus trace where TORCH_TRACE points; one
test runs a real torch.compile program when torch is installed (/work/venv-torch on the
development machine, skipped elsewhere). Shown: the program's exit status passed through (also
after the server is stopped with Ctrl-C), OUT written with `-o OUT --no-serve`, the served trace
listed, Ctrl-C while the program runs reaching the program and what it wrote still parsed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.cli import main as tlscope_main

LOG = next((CORPUS / "simple").glob("*.log.gz"))
TORCH_PYTHON = Path(os.environ.get("TLSCOPE_TORCH_PYTHON", "/work/venv-torch/bin/python"))


def fake_program(tmp: Path, *, status: int = 0, wait: bool = False) -> list[str]:
    """A program that copies a real trace into $TORCH_TRACE, then (wait) sleeps until Ctrl-C, and exits."""
    script = tmp / "train.py"
    script.write_text(
        textwrap.dedent(f"""
        import os, shutil, sys, time
        out = os.environ["TORCH_TRACE"]
        shutil.copy({str(LOG)!r}, os.path.join(out, "dedicated_log_torch_trace_rank_0_abc.log.gz"))
        try:  # before the line the test waits for: Ctrl-C may come right after it
            print("wrote", sys.argv[1:], flush=True)
            if {wait!r}:
                time.sleep(120)
        except KeyboardInterrupt:
            sys.exit(7)  # a program that handles Ctrl-C and says so in its own status
        sys.exit({status})
        """)
    )
    return [sys.executable, str(script), "--epochs", "1"]


def test_writes_out_and_passes_the_status_through(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    status = tlscope_main(["run", "-o", str(out), "--no-serve", "--", *fake_program(tmp_path, status=3)])
    assert status == 3
    assert "wrote ['--epochs', '1']" in capfd.readouterr().out  # ARGS reach the program
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["raw_jsonl_events"] > 0 and manifest["compile_ids"]


def test_usage_and_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        tlscope_main(["run", "--no-serve", "--", sys.executable, "-c", "pass"])  # --no-serve without -o
    assert usage.value.code == 2
    with pytest.raises(SystemExit):
        tlscope_main(["run", "-o", str(tmp_path / "o")])  # no program
    assert tlscope_main(["run", "-o", str(tmp_path / "o"), "--no-serve", "--", str(tmp_path / "missing")]) == 127
    nothing = tlscope_main(["run", "-o", str(tmp_path / "o"), "--no-serve", "--", sys.executable, "-c", "pass"])
    assert nothing == 1 and "wrote no trace" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def run_cli(args: list[str], **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tlscope", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: Ctrl-C goes to tlscope and the program
        **kwargs,  # type: ignore[call-overload]
    )


def test_serves_the_trace_then_ctrl_c_keeps_the_status(tmp_path: Path) -> None:
    proc = run_cli(["--port", "0", "--no-browser", "--cache-dir", str(tmp_path / "c"), "--", *fake_program(tmp_path)])
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                url = found.group(0)
                break
        assert url, proc.stderr.read() if proc.stderr else ""
        with urllib.request.urlopen(f"{url}/api/traces", timeout=60) as r:
            traces = json.load(r)
        assert len(traces) == 1 and traces[0]["state"] == "ready" and traces[0]["summary"]["events"] > 0
        with urllib.request.urlopen(url + traces[0]["url"] + "manifest.json", timeout=60) as r:
            assert json.load(r)["raw_jsonl_events"] == traces[0]["summary"]["events"]
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 0  # the program's status: stopping the server is the normal end


def test_ctrl_c_reaches_the_program_and_its_trace_is_still_parsed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli(["-o", str(out), "--no-serve", "--", *fake_program(tmp_path, wait=True)])
    assert proc.stdout is not None
    assert "wrote" in proc.stdout.readline()
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=120) == 7, proc.stderr.read() if proc.stderr else ""  # the program's status
    assert (out / "manifest.json").is_file()


#: `tlscope run` as a loaded machine schedules it: the program starts, and Ctrl-C comes, before
#: Popen returns in tlscope (the race that made the test above fail under load, now forced).
LATE_POPEN = """
import subprocess, sys, time
from pathlib import Path
from tlscope.cli import main

marker = Path(sys.argv[1])


class LatePopen(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        while not marker.exists():  # until the program has had its Ctrl-C
            time.sleep(0.01)


subprocess.Popen = LatePopen
sys.exit(main(sys.argv[2:]))
"""


def test_ctrl_c_as_the_program_starts_is_not_tlscopes_to_die_of(tmp_path: Path) -> None:
    program = tmp_path / "train.py"
    program.write_text(
        textwrap.dedent(f"""
        import os, shutil, signal, sys, time
        shutil.copy({str(LOG)!r}, os.path.join(os.environ["TORCH_TRACE"], "dedicated_log_torch_trace_rank_0.log.gz"))
        try:
            os.killpg(0, signal.SIGINT)  # Ctrl-C at the terminal: tlscope's group, this program included
            time.sleep(120)
        except KeyboardInterrupt:
            open(sys.argv[1], "w").close()
            sys.exit(7)
        """)
    )
    marker, out = tmp_path / "interrupted", tmp_path / "out"
    driver = tmp_path / "driver.py"
    driver.write_text(LATE_POPEN)
    args = ["run", "-o", str(out), "--no-serve", "--", sys.executable, str(program), str(marker)]
    proc = subprocess.Popen(
        [sys.executable, str(driver), str(marker), *args], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    _, err = proc.communicate(timeout=120)
    assert marker.exists(), err  # the program got the Ctrl-C
    assert proc.returncode == 7, err  # and tlscope, told of it before the program started, passed its status on
    assert (out / "manifest.json").is_file()


@pytest.mark.skipif(not TORCH_PYTHON.is_file(), reason=f"no torch here ({TORCH_PYTHON}; TLSCOPE_TORCH_PYTHON)")
def test_a_real_torch_program(tmp_path: Path) -> None:
    program = tmp_path / "train.py"
    program.write_text(
        textwrap.dedent("""
        import sys
        import torch

        @torch.compile(backend="eager")
        def step(x):
            y = torch.sin(x) * 2
            if y.sum() > 0:  # a graph break
                y = y + 1
            return y.cos()

        for n in (4, 8):
            step(torch.randn(n))
        sys.exit(int(sys.argv[1]))
        """)
    )
    out = tmp_path / "out"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    args = ["run", "-o", str(out), "--no-serve", "--", "nice", "-n", "10", str(TORCH_PYTHON), str(program), "5"]
    done = subprocess.run(
        [sys.executable, "-m", "tlscope", *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 5, done.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["compile_ids"]) >= 2  # the graph break splits the frame
    assert manifest["torch_version"].startswith("2.")
