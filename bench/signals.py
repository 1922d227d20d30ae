"""SIGTERM at a random moment of a real run, many times: OUT intact, nothing left behind.

    nice -n 10 python bench/signals.py                       # 20 trials on each default trace
    python bench/signals.py --trials 5 --trace corpus/traces/muxed/muxed.log.gz
    python bench/signals.py --signal KILL                    # SIGKILL of the main process instead

Default traces: the biggest committed corpus trace (corpus/traces/muxed/muxed.log.gz, a muxed
multi-rank log: split, then parsed by rank workers) and the big real trace (corpus/big/*.log or
/work/big/*.log, ~136 MB, single rank, page workers), when present.

For each trace: one complete run measures how long a run takes and gives the reference listing
of a complete OUT. Then each trial: OUT holds a complete previous report; `python -m tlscope
TRACE -o OUT --overwrite` starts in a session of its own; after a random delay in [0, 0.95 x the
full run's time) it gets the signal. Checks, each trial:

* OUT intact: the same folder with every file's size and mtime as before, or (the run had
  finished, or the signal landed just after the swap) a new folder with a complete report
  (the reference listing);
* 0 temporary folders: no `.OUT.tlscope-*` / `.OUT.old-*` beside OUT, nothing new in TMPDIR
  (the run gets a private one; Jinja's compiled-template cache is kept there on purpose);
* 0 live processes of the run's process group 3 s after it ended.

Prints one line per trial and a summary; exit 1 if any check failed.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import fuzzrun

REPO = Path(__file__).resolve().parents[1]


def default_traces() -> list[Path]:
    found = [REPO / "corpus" / "traces" / "muxed" / "muxed.log.gz"]
    for folder in (REPO / "corpus" / "big", Path("/work/big")):
        big = sorted(folder.glob("dedicated_log_torch_trace_*.log")) if folder.is_dir() else []
        if big:
            found.append(big[0])
            break
    return [p for p in found if p.is_file()]


def fingerprint(folder: Path) -> dict[str, tuple[int, int]]:
    """relative path -> (size, mtime_ns) of every file: equal means untouched."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file():
            st = path.stat()
            out[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def run_tlscope(trace: Path, out: Path, tmpdir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TMPDIR": str(tmpdir)}
    command = [sys.executable, "-m", "tlscope", str(trace), "-o", str(out), "--overwrite", "--no-browser"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


@dataclass
class Trial:
    delay_s: float
    status: int
    stopped: bool
    failures: list[str] = field(default_factory=list)


def leftovers(out: Path, tmpdir: Path) -> list[str]:
    beside = [p.name for p in out.parent.iterdir() if ".tlscope-" in p.name or ".old-" in p.name]
    temp = [p.name for p in tmpdir.iterdir() if not p.name.startswith("_jinja2-cache")]
    return beside + temp


def intact(out: Path, inode: int, before: dict[str, tuple[int, int]], reference: set[str]) -> bool:
    """The same folder untouched, or a new complete one (a signal that landed after the swap)."""
    if out.stat().st_ino == inode:
        return fingerprint(out) == before
    return listing(out) == reference


def trial(trace: Path, out: Path, tmpdir: Path, delay: float, reference: set[str], signum: int) -> Trial:
    before, inode = fingerprint(out), out.stat().st_ino
    proc = run_tlscope(trace, out, tmpdir)
    time.sleep(delay)
    if proc.poll() is None:
        os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=600)
    stopped = proc.returncode != 0
    result = Trial(delay, proc.returncode, stopped)
    if b"Traceback" in err:
        result.failures.append("traceback: " + err.decode("utf-8", "replace")[-1500:])
    if not out.is_dir() or not intact(out, inode, before, reference):
        result.failures.append("OUT neither as it was nor a complete report")
    deadline = time.monotonic() + 10  # after SIGKILL the guard process removes the temporary folder
    while leftovers(out, tmpdir) and time.monotonic() < deadline:
        time.sleep(0.05)
    if leftovers(out, tmpdir):
        result.failures.append(f"left behind: {leftovers(out, tmpdir)}")
    time.sleep(3)
    alive = fuzzrun.group_members(proc.pid)
    if alive:
        result.failures.append(f"{len(alive)} live processes of the run's group 3 s later")
        os.killpg(proc.pid, signal.SIGKILL)
    return result


def campaign(
    trace: Path, trials: int, signum: int, rng: random.Random, scratch_root: Path | None = None
) -> list[Trial]:
    with tempfile.TemporaryDirectory(prefix="tlscope-signals-", dir=scratch_root) as scratch:
        root = Path(scratch)
        out, tmpdir = root / "out", root / "tmp"
        tmpdir.mkdir()
        started = time.monotonic()
        first = run_tlscope(trace, out, tmpdir)
        first.communicate()
        full = time.monotonic() - started
        if first.returncode != 0:
            raise SystemExit(f"{trace}: the reference run failed ({first.returncode})")
        reference = listing(out)
        print(f"{trace}: a full run takes {full:.1f} s; OUT has {len(reference)} files", flush=True)
        results = []
        for i in range(trials):
            result = trial(trace, out, tmpdir, rng.uniform(0, 0.95 * full), reference, signum)
            results.append(result)
            verdict = "ok" if not result.failures else "FAIL " + "; ".join(result.failures)
            what = "stopped" if result.stopped else "had finished"
            print(f"  trial {i + 1}: signal at {result.delay_s:.2f} s, {what} (exit {result.status}): {verdict}")
        shutil.rmtree(out, ignore_errors=True)
        return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--trace", type=Path, action="append", help="a trace (repeatable; default: see above)")
    parser.add_argument("--signal", default="TERM", choices=["TERM", "INT", "HUP", "KILL"])
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args(argv)
    signum = getattr(signal, f"SIG{args.signal}")
    rng = random.Random(args.seed)
    failed = 0
    for trace in args.trace or default_traces():
        results = campaign(trace, args.trials, signum, rng)
        stopped = sum(r.stopped for r in results)
        bad = [r for r in results if r.failures]
        failed += len(bad)
        print(
            f"{trace.name}: {len(results)} trials, {stopped} stopped mid-run, {len(results) - stopped} had finished; "
            f"OUT intact in {sum('OUT' not in ' '.join(r.failures) for r in results)}/{len(results)}, "
            f"temporary folders left in {sum(any('left behind' in f for f in r.failures) for r in results)}, "
            f"live processes 3 s later in {sum(any('live' in f for f in r.failures) for r in results)}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
