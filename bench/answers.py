"""`tlscope summary LOG --json` against `tlscope LOG -o OUT`, alternating run by run (issue 19).

    python bench/answers.py corpus/big/dedicated_log_torch_trace_*.log --runs 7
    python bench/answers.py corpus/traces/recompiles_dynamic --runs 9 --base main

`tlscope.load` (behind `summary` and `diff`) parses a log into the format and the answers only,
never the HTML report; the target is summary's wall time at most 0.6x the full parse's on the big
corpus trace. Both commands run from this checkout's src/ (or, with `--base`, the summary also
from that revision's, to show the change), in the order P S S P P S ..., measured as bench/run.py
measures (bench/launch.py: wall time from fork to exit, CPU of the command and its children).
Reports each side's median, quartiles and CPU, and the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from ab import command, extract, summary
from harness import REPO, Sample


def _sides(src: Path, base: Path | None, log: Path, out: Path) -> dict[str, list[str]]:
    sides = {
        "parse": [*command(src), str(log), "-o", str(out), "--overwrite", "--no-browser"],
        "summary": [*command(src), "summary", str(log), "--json"],
    }
    if base is not None:
        sides["summary@base"] = [*command(base), "summary", str(log), "--json"]
    return sides


def _report(samples: dict[str, list[Sample]]) -> None:
    print("| command | median s | q1-q3 s | min-max s | CPU s (median) |")
    print("|---|--:|--:|--:|--:|")
    for name, runs in samples.items():
        s = summary(runs)
        cpu = statistics.median(r.cpu_s for r in runs)
        print(
            f"| {name} | {s['median']:.3f} | {s['q1']:.3f}-{s['q3']:.3f} | {s['min']:.3f}-{s['max']:.3f} | {cpu:.2f} |"
        )
    ratios = sorted(s.wall_s / p.wall_s for p, s in zip(samples["parse"], samples["summary"], strict=True))
    middle = statistics.median(ratios)
    print(f"\nsummary / parse, per round: median {middle:.2f} (min {ratios[0]:.2f}, max {ratios[-1]:.2f})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", type=Path, help="a log or .gz log")
    parser.add_argument("--runs", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--base", default=None, help="also time summary at this git revision")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tlscope-bench-answers-") as scratch:
        root = Path(scratch)
        base = extract(args.base, root / "base") if args.base else None
        src = REPO / "src"
        for tree in (src, base):
            if tree is not None:
                harness.compile_bytecode(tree)
        sides = _sides(src, base, args.input.resolve(), root / "out")
        _report(harness.rotated_rounds(sides, root / "out", args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
