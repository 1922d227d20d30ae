"""A job's instructions, process by process: where a multi-rank run's CPU goes, free of the load.

    python bench/ranks_instructions.py LOGS [--src DIR] [--base REV] [--runs 1] [-j 2]

Runs `tlscope LOGS --all-ranks-html -o OUT --overwrite -j 2` (OUT written once beforehand, so
the run replaces it as a repeated run does) under `valgrind --tool=callgrind --trace-children=yes`
with PYTHONHASHSEED=0, and counts the user-space instructions of each process: the parent before
it forks its first worker, the parent after that (the landing page, OUT's commit, the exit), and
each worker's own (callgrind's counters are zeroed in a forked child as it starts, at
`PyOS_AfterFork_Child`, so a worker's count is its own work, not the parent's up to the fork).
On a machine shared by several jobs, wall and CPU seconds swing by 2x between neighbouring runs;
instruction counts do not move with the load (they move a little with the order in which the
workers happen to take the ranks: two workers parsing copies of one rank at the same moment both
make the job's shared pages once).

`--base REV` measures REV's src/ (git archive, bytecode compiled as bench/ab.py does) and this
checkout alternately, `--runs` times each. Needs valgrind; ~25 s a run for the 8-rank job.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from ab import extract
from harness import REPO

_LAUNCH = "import sys; sys.path.insert(0, sys.argv.pop(1)); from tlscope.cli import console_main; console_main()"


#: Fewer instructions than this, a child is not a rank worker (a worker's first rank alone is ~500M).
_WORKER_FLOOR = 20_000_000


def counts(out_dir: Path) -> dict[str, float]:
    """Millions of instructions per process from callgrind's files in `out_dir`.

    The parent's file is dumped at each fork (`--dump-before=PyOS_BeforeFork`): its first part
    is the work before the first worker; later parts and the final dump are the rest.
    """
    parts: dict[int, list[tuple[int, int]]] = {}
    for path in out_dir.glob("callgrind.out.*"):
        m = re.fullmatch(r"callgrind\.out\.(\d+)(?:\.(\d+))?", path.name)
        if not m:
            continue
        text = path.read_text(errors="replace")
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        parts.setdefault(int(m[1]), []).append((int(m[2] or 1_000_000), int(total[1]) if total else 0))
    parent = min(parts)
    own = sorted(parts[parent])
    result = {"parent before the first fork": own[0][1] / 1e6, "parent after it": sum(n for _, n in own[1:]) / 1e6}
    children = sorted((sum(n for _, n in p) for pid, p in parts.items() if pid != parent), reverse=True)
    # The workers, and the few processes a run execs besides (the cleanup guard: < 1M each).
    for i, n in enumerate(w for w in children if w >= _WORKER_FLOOR):
        result[f"worker {i}"] = n / 1e6
    result["other processes"] = sum(w for w in children if w < _WORKER_FLOOR) / 1e6
    result["total"] = sum(result.values())
    return result


def run_once(src: Path, logs: Path, work: Path, jobs: int) -> dict[str, float]:
    out = work / "out"
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
    argv = [sys.executable, "-c", _LAUNCH, str(src), str(logs), "--all-ranks-html", "-o", str(out), "--overwrite"]
    argv += ["--no-browser", "-j", str(jobs)]
    if not out.exists():
        subprocess.run(argv, env=env, check=True, capture_output=True)
    cg = work / "cg"
    shutil.rmtree(cg, ignore_errors=True)
    cg.mkdir()
    valgrind = ["valgrind", "--tool=callgrind", "--trace-children=yes", f"--callgrind-out-file={cg}/callgrind.out.%p"]
    valgrind += ["--zero-before=PyOS_AfterFork_Child", "--dump-before=PyOS_BeforeFork", "--compress-strings=no"]
    subprocess.run([*valgrind, *argv], env=env, check=True, capture_output=True)
    return counts(cg)


def show(label: str, result: dict[str, float]) -> None:
    print(f"{label}: " + ", ".join(f"{k} {v:,.0f}M" for k, v in result.items()), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", type=Path, help="a folder of rank logs")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the tlscope tree to run (its src/)")
    parser.add_argument("--base", help="also run this revision's src/, alternating with --src")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tlscope-ranks-instr-") as tmp:
        work = Path(tmp)
        trees = {"new": args.src.resolve()}
        if args.base:
            trees = {"base": extract(args.base, work / "base-tree"), **trees}
        for src in trees.values():
            harness.compile_bytecode(src)
        totals: dict[str, list[float]] = {side: [] for side in trees}
        for i in range(args.runs):
            for side, src in trees.items() if i % 2 == 0 else reversed(trees.items()):
                (work / side).mkdir(exist_ok=True)
                result = run_once(src, args.logs.resolve(), work / side, args.jobs)
                show(f"{side} run {i + 1}", result)
                totals[side].append(result["total"])
        for side, values in totals.items():
            print(f"{side}: total median {statistics.median(values):,.0f}M instructions ({len(values)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
