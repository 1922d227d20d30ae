"""Start-up: `tlscope --version` and `tlscope --help`, this checkout against a base revision.

    python bench/startup.py                      # against main, 21 rounds
    python bench/startup.py --base cd2489c --rounds 31

Each round runs both sides' `--version` and `--help` as the console script starts them (a fresh
interpreter, .pyc files compiled first as an installed package has them), alternating which
side goes first, and takes wall time (fork to exit) and CPU time (user + system, os.wait4).
Which modules these import is a test (tests/test_startup.py); this only measures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from ab import command, extract
from harness import REPO

FLAGS = ("--version", "--help")


def one(argv: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise RuntimeError(f"{argv} exited with status {status}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="main", help="git revision to compare against (default: main)")
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tlscope-startup-") as tmp:
        sources = {"base": extract(args.base, Path(tmp) / "base"), "new": REPO / "src"}
        for src in sources.values():
            harness.compile_bytecode(src)
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for i in range(args.rounds + 1):  # round 0 is a warm-up
            for side in list(sources)[:: 1 if i % 2 else -1]:
                for flag in FLAGS:
                    sample = one([*command(sources[side]), flag])
                    if i:
                        samples.setdefault((side, flag), []).append(sample)
    for (side, flag), runs in samples.items():
        walls, cpus = sorted(1000 * w for w, _ in runs), sorted(1000 * c for _, c in runs)
        q1, _, q3 = statistics.quantiles(walls, n=4)
        print(f"{side:4} {flag:9} wall median {statistics.median(walls):.0f} ms (q1 {q1:.0f}, q3 {q3:.0f}, "
              f"min {walls[0]:.0f}), CPU median {statistics.median(cpus):.0f} ms (min {cpus[0]:.0f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
