"""A/B: tlscope at a base revision against this checkout, alternating run by run, on one input.

    python bench/ab.py corpus/big/dedicated_log_torch_trace_*.log --base 35f8773
    python bench/ab.py corpus/traces/ranks_same_4 --ranks 8 --base main --runs 21

bench/run.py times tlscope against tlparse, one tool after the other per round; on a shared
machine whose load changes by the minute, two sessions of it (before and after a change) differ
by more than most changes do. Here the two revisions of tlscope alternate within one session
(A B B A A B ...), each run is measured as in bench/run.py (wall time from fork to exit and
peak RSS from os.wait4, through bench/launch.py), and the report gives each side's median,
quartiles and peak RSS, and the median of the per-pair ratios, which a load change affects
least. The base runs from its src/ extracted with git archive (as tools/identity.py does),
with this interpreter; the new side from this checkout's src/.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from harness import REPO, Sample

_LAUNCH = "import sys; sys.path.insert(0, sys.argv.pop(1)); from tlscope.cli import console_main; console_main()"


def command(src: Path) -> list[str]:
    """`tlscope` of the tree at `src` (a src/ folder), started as the console script is."""
    return [sys.executable, "-c", _LAUNCH, str(src)]


def extract(revision: str, dest: Path) -> Path:
    """The revision's src/ folder under `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest / "src.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), revision, "src"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest / "src"


def order(rounds: int) -> list[str]:
    """A B B A A B B A ...: each side goes first half the time, and never twice in a row at the start."""
    sides: list[str] = []
    for i in range(rounds):
        sides += ["base", "new"] if i % 2 == 0 else ["new", "base"]
    return sides


def summary(samples: Sequence[Sample], measure: str = "wall_s") -> dict[str, float]:
    values = sorted(getattr(s, measure) for s in samples)
    q1, q2, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else (values[0],) * 3
    return {
        "median": q2, "q1": q1, "q3": q3, "min": values[0], "max": values[-1],
        "rss_mb": max(s.max_rss_bytes for s in samples) / 1e6,
    }  # fmt: skip


def pair_ratios(base: Sequence[Sample], new: Sequence[Sample], measure: str = "wall_s") -> list[float]:
    """new / base of the runs of each round (same moment, same load)."""
    pairs = zip(base, new, strict=True)
    return [getattr(n, measure) / getattr(b, measure) for b, n in pairs if getattr(b, measure) > 0]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", type=Path, help="a log, .gz log or folder (gzipped files are decompressed first)")
    parser.add_argument("--base", default="main", help="git revision to compare against (default: main)")
    parser.add_argument("--runs", type=int, default=9, help="rounds (each runs both sides once; default 9)")
    parser.add_argument("--ranks", type=int, default=0, help="a folder: this many rank logs made from its (as ranks_8)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tlscope-ab-") as tmp:
        work = Path(tmp)
        sources = {"base": extract(args.base, work / "base"), "new": REPO / "src"}
        for src in sources.values():
            harness.compile_bytecode(src)  # both sides as installed (see harness.compile_bytecode)
        sides = {side: command(src) for side, src in sources.items()}
        if args.ranks:
            target = harness.rank_copies(args.input, work / "input", args.ranks)
        else:
            target = harness.decompress_tree(args.input, work / "input" / args.input.name)
        flags = ["--overwrite", "--no-browser", *(["--all-ranks-html"] if target.is_dir() else [])]
        samples: dict[str, list[Sample]] = {"base": [], "new": []}
        for side in ["base", "new", *order(args.runs)]:  # one untimed warm-up round first
            shutil.rmtree(work / "out", ignore_errors=True)
            sample = harness.run_child([*sides[side], str(target), "-o", str(work / "out"), *flags])
            if sample.exit_code != 0:
                print(f"{side} failed (exit {sample.exit_code})", file=sys.stderr)
                return 1
            samples[side].append(sample)
    for side in samples:
        samples[side] = samples[side][1:]  # drop the warm-up
    for measure, label in (("wall_s", "wall"), ("cpu_s", "CPU")):
        for side, runs in samples.items():
            s = summary(runs, measure)
            print(f"{side:5} {label:4} median {s['median']:.3f} s (q1 {s['q1']:.3f}, q3 {s['q3']:.3f}, "
                  f"min {s['min']:.3f}, max {s['max']:.3f}), peak RSS {s['rss_mb']:.1f} MB")  # fmt: skip
        ratio = statistics.median(pair_ratios(samples["base"], samples["new"], measure))
        print(f"new/base {label}: median of per-round ratios {ratio:.3f} ({args.runs} rounds, base {args.base})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
